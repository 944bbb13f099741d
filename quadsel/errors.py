"""Errors that the CLI turns into one line on stderr and exit status 2, and the escaping of names in them."""

import contextlib


class QuadselError(Exception):
    """A user-facing error: bad input file, bad option value, unusable data."""

    exit_code = 2


class Interrupted(QuadselError):
    """Ctrl-C: the message says what was kept and how to go on; printed as it is, exit status 130."""

    exit_code = 130


def from_ctrl_c(exc):
    """Whether `exc` is a Ctrl-C, or one that Python wrapped in another exception on its way up: Python 3.11 turns
    an exception out of `__set_name__` into "RuntimeError: Error calling __set_name__ ..." caused by it (a Ctrl-C
    while an import created a class with a functools.cached_property: platform's uname_result, imported by Click)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ if exc.__cause__ is not None or exc.__suppress_context__ else exc.__context__
    return False


@contextlib.contextmanager
def ctrl_c_says(note):
    """A Ctrl-C inside the block -- or one Python wrapped on its way up (from_ctrl_c) -- ends the command with
    `note`, the line saying what was kept and how to go on (Interrupted, exit status 130; a callable: called then,
    when what was kept is known); `note` None: quietly, with status 130 (a rank that is not the one the user
    started). Any other exception goes on as it is."""
    try:
        yield
    except (KeyboardInterrupt, Exception) as exc:
        if not from_ctrl_c(exc):
            raise
        if note is None:
            raise SystemExit(130) from None
        raise Interrupted(note() if callable(note) else note) from None


class OptionError(QuadselError, ValueError):
    """Options that do not fit together (a ValueError too, so a tree file's loader reports it as invalid)."""


class InputError(QuadselError):
    """A malformed input file; names the file and (when known) the line."""

    def __init__(self, path, line, message):
        self.path = str(path)
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self):
        where = f"{self.path}:{self.line}" if self.line else self.path
        return one_line(f"{where}: {self.message}")


def printable(text):
    """Text safe to show on a terminal or in a C comment body: printable ASCII, anything else as "?"."""
    return "".join(ch if 32 <= ord(ch) < 127 else "?" for ch in str(text))


def _breaks_lines(ch):
    import unicodedata
    category = unicodedata.category(ch)
    return category[0] == "C" or category in ("Zl", "Zp")


def escaped(text):
    """A name as one terminal line, nothing lost: control, format and line-separator characters (newline, ESC,
    NEL, U+2028) written as Python escapes (\\n, \\x1b, \\u2028); a backslash doubled."""
    out = []
    for ch in str(text):
        if ch == "\\":
            out.append("\\\\")
        elif _breaks_lines(ch):
            out.append(ch.encode("unicode_escape").decode("ascii") if ord(ch) > 31 or ch in "\t\n\r"
                       else f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def visible(text):
    """Text for a terminal with its lines and tabs kept: every other control or format character (ESC, BEL, a
    carriage return, NEL, U+2028, a right-to-left override) as "?" -- a terminal takes them as commands, and click
    strips only ANSI colour sequences, and only when the stream is not a terminal."""
    return "".join(ch if ch in "\n\t" or not _breaks_lines(ch) else "?" for ch in str(text))


def markdown_cell(text):
    """Text safe in a Markdown table cell or list item: escaped() and `|` as `\\|` (else it adds a column)."""
    return escaped(text).replace("|", "\\|")


def one_line(text, limit=None):
    """Text that stays one line on a terminal: control and format characters (newlines, escapes) as "?";
    beyond `limit` characters its middle is elided (an input can put anything into a message).

    Unlike printable() it keeps non-ASCII letters (a file named données.csv stays readable).
    """
    text = str(text)
    if limit and len(text) > limit:
        text = f"{text[:limit * 2 // 3]} ... {text[-(limit // 4):]}"
    # C*: controls (newline, ESC, NEL), format and unassigned characters; Zl/Zp: U+2028/U+2029 end a line too.
    return "".join("?" if _breaks_lines(ch) else ch for ch in text)


def missing_extra(what, package, extra):
    """The one error of every command that needs an optional dependency (exit status 2)."""
    return QuadselError(f"{what} needs {package}, which is not installed: pip install 'quadsel[{extra}]'")
