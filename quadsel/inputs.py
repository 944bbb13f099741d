"""Inputs read safely: files (regular files only, up to a size limit: docs/formats-input.md, "Limits") and byte
sizes given with binary suffixes ("4K" = 4096, "1M" = 1048576, as MPI benchmarks print them).

A FIFO or a device (`/dev/zero`, a terminal) as an input would hang or never end, so anything that is not
a regular file is refused before it is opened for reading; a file beyond its limit is refused instead of
being read into memory. Every refusal is an InputError naming the file (one line, exit status 2).
"""

import os
import re
import stat

from .errors import InputError, QuadselError

# Numbers an input may hold: what every stage and target can represent (docs/formats-input.md, "Limits").
INT_MAX = (1 << 31) - 1     # C int: communicator sizes, segment sizes, algorithm ids (the generated C, MPI, MCA)
INT64_MAX = (1 << 63) - 1   # message sizes and repetition counts: int64 in the decision map, size_t in C
BUILD_OPTION_MAX = 10 ** 6  # --max-depth, --max-leaves: the largest the tree file's `builder` may record
TIME_MIN_US, TIME_MAX_US = 1e-6, 1e12   # 1 ps .. 11.6 days: outside, the penalty ratios lose all meaning
# What a decision map may span (docs/formats-input.md, "Limits"): beyond, the build cannot be held in reasonable
# memory (its cubes are points x methods floats), and with the between rule the query cells (about 4 per
# point) would pass the tree file's 4,194,304 cells. Checked while the files are read, before they all are.
MAX_GRID_POINTS = 1 << 20               # communicator sizes x message sizes
MAX_CUBE = 1 << 25                      # communicator sizes x message sizes x methods
MAX_COLUMNS = 1024                      # cells of one CSV line (a measurement table has about ten)


def fits(digits, maximum):
    """Does the ASCII digit string `digits` stay <= maximum? (without int() on thousands of digits)"""
    digits = digits.lstrip("0") or "0"
    return len(digits) <= len(str(maximum)) and int(digits) <= maximum


def shorten(text, width=24):
    """A cell as error messages show it: long ones cut, with their length."""
    text = str(text)
    return text if len(text) <= width else f"{text[:width // 2]}...{text[-6:]} ({len(text)} characters)"


MiB = 1 << 20
# What one input may hold, by kind; far above any real file of that kind (a full measurement sweep of
# 10 algorithms x 4 segment sizes x 256 communicator sizes x 40 message sizes is about 20 MiB of CSV).
LIMITS = {
    "measurements": 64 * MiB,
    "measure output": 64 * MiB,
    "rounds journal": 256 * MiB,      # measure's OUTPUT.rounds.jsonl (measure/journal.py)
    "metadata": 16 * MiB,
    "tune journal": 16 * MiB,         # quadsel tune's tune.json
    "rules file": 64 * MiB,
    "tree file": 64 * MiB,
    "verify result": 256 * MiB,       # `quadsel verify --json` (codegen --verified)
    "MPICH library": 1024 * MiB,      # libmpi.so, which embeds MPICH's own selection JSON
}
_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode):
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _size_text(n):
    return f"{n // MiB} MiB" if n % MiB == 0 else f"{n} bytes"


# -- every input of the running command (the output guard of quadsel/output.py refuses to write over one) -----------
# Kinds a command reads back as its own output (measure's CSV and journal when it resumes, trace's file): not inputs.
OWN_OUTPUTS = ("measure output", "rounds journal", "trace output")
_READ = None    # None: not recording (quadsel used as a library); else {(device, inode): path} of this command
_OWN = []       # folders the command owns (`quadsel tune -o DIR`): what it reads there is its own output


def record_inputs():
    """Start a command: from now on every file read (but its own outputs) is an input no output may replace."""
    global _READ
    _READ = {}
    _OWN.clear()


def own_folder(path):
    """Files read under `path` are the command's own outputs, which it may replace (tune's folder)."""
    _OWN.append(os.path.realpath(path))


def _is_own(path):
    real = os.path.realpath(path)
    return any(real.startswith(folder + os.sep) for folder in _OWN)


def inputs_read():
    """{(device, inode): path} of every input the running command has read so far ({} outside a command)."""
    return dict(_READ or {})


def read_bytes(path, what="measurements", limit=None):
    """The bytes of a regular file of at most `limit` (default: LIMITS[what]) bytes; InputError otherwise."""
    limit = LIMITS[what] if limit is None else limit
    try:
        info = os.stat(path)   # before opening: opening some devices has effects of its own
    except FileNotFoundError:
        raise InputError(path, None, "file not found") from None
    except OSError as exc:
        raise InputError(path, None, f"cannot read file: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(path, None, "is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(path, None, f"{_kind(info.st_mode)}, not a regular file: save the {what} to a file first")
    try:
        # O_NONBLOCK: should the path become a FIFO after the check, opening it must not hang.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(path, None, f"cannot read file: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(path, None, f"not a regular file: save the {what} to a file first")
        if _READ is not None and what not in OWN_OUTPUTS and not (_OWN and _is_own(path)):
            _READ[(info.st_dev, info.st_ino)] = os.fspath(path)
        data = b""
        if info.st_size <= limit:   # a file growing while it is read is still stopped at the limit
            try:
                data = handle.read(limit + 1)
            except OSError as exc:
                raise InputError(path, None, f"cannot read file: {exc.strerror or exc}") from None
    if info.st_size > limit or len(data) > limit:
        raise InputError(path, None, f"larger than the {_size_text(limit)} limit for {what} "
                                     "(docs/formats-input.md, Limits); split it into several files")
    return data


def read_text(path, what="measurements", limit=None):
    """The text (UTF-8, a leading byte-order mark dropped) of a regular file; InputError otherwise."""
    data = read_bytes(path, what, limit)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(path, None, "not a UTF-8 text file") from None
    return old_mac_lines(text)


def old_mac_lines(text):
    """A text whose lines end in a carriage return alone (classic Mac OS: CR but no LF anywhere) with LF line ends,
    as every reader splits lines at LF (text_lines); any other text as it is."""
    return text.replace("\r", "\n") if "\r" in text and "\n" not in text else text


def text_lines(text):
    """The lines of a text, split at \\n only (a \\r before it dropped), as grep -n and editors count them.

    str.splitlines() also splits at form feed, vertical tab, NEL, U+2028 and others, which can stand inside
    a comment or a cell of a valid file: it would cut that line in two and shift every later line number.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


# -- byte sizes -------------------------------------------------------------------------------------
_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_SIZE = re.compile(r"^\s*([0-9]+)\s*([KMG]?)(?:I?B)?\s*$", re.IGNORECASE)
SIZE_MAX = INT64_MAX   # sizes are 64-bit integers everywhere


def parse_size(text, what="size"):
    """Parse "4096", "4K", "4KiB", "1M" into bytes (at most SIZE_MAX); a QuadselError names `what` otherwise."""
    match = _SIZE.match(str(text))
    if not match:
        raise QuadselError(f"invalid {what} {str(text)[:40]!r}: expected an integer, optionally with K, M or G")
    digits = match.group(1).lstrip("0") or "0"
    value = int(digits) * _SUFFIX[match.group(2).upper()] if len(digits) <= 19 else SIZE_MAX + 1
    if value > SIZE_MAX:
        raise QuadselError(f"{what} {str(text)[:40]} is beyond {SIZE_MAX} bytes")
    return value


def format_size(n):
    """Human label of a byte count: 1024 -> "1K", 1048576 -> "1M", 1500 -> "1500"."""
    n = int(n)
    for suffix, unit in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= unit and n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)
