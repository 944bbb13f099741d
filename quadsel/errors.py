"""Errors that the CLI turns into one line on stderr and exit status 2, and the escaping of names in them."""


class QuadselError(Exception):
    """A user-facing error: bad input file, bad option value, unusable data."""

    exit_code = 2


class InputError(QuadselError):
    """A malformed input file; names the file and (when known) the line."""

    def __init__(self, path, line, message):
        self.path = str(path)
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self):
        if self.line:
            return f"{self.path}:{self.line}: {self.message}"
        return f"{self.path}: {self.message}"


def printable(text):
    """Text safe to show on a terminal or in a C comment body: printable ASCII, anything else as "?"."""
    return "".join(ch if 32 <= ord(ch) < 127 else "?" for ch in str(text))
