"""What every reader shares: the file's lines, checked numbers, and where missing facts come from."""

import math
import re
from pathlib import Path

from ..errors import InputError
from .names import FileName, normalise_collective
from .table import DEFAULT_ALGORITHM, Measurement

# An optional cell (stddev, reps) holding one of these means "not measured".
MISSING = frozenset(("", "-", "--", "---", "na", "n/a", "nan", "none"))

_INTEGER = re.compile(r"^[+-]?\d+(?:\.0*)?$")  # "1024" or "1024.0" (spreadsheets), never "1.5" or "1e3"


def read_lines(path):
    """The file's lines; InputError with no line number when it is missing, unreadable, binary or empty."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # -sig: spreadsheets prepend a byte-order mark
    except FileNotFoundError:
        raise InputError(path, None, "file not found") from None
    except IsADirectoryError:
        raise InputError(path, None, "is a directory, not a file") from None
    except UnicodeDecodeError:
        raise InputError(path, None, "not a UTF-8 text file") from None
    except OSError as exc:
        raise InputError(path, None, f"cannot read file: {exc.strerror or exc}") from None
    if not text.strip():
        raise InputError(path, None, "empty file")
    return text.splitlines()


class Context:
    """One file being read: its lines, the caller's options, and the facts its name carries."""

    def __init__(self, path, lines, collective=None, comm_size=None, column_map=None):
        self.path = str(path)
        self.lines = lines
        self.collective = collective
        self.comm_size = comm_size
        self.column_map = column_map or {}
        self.name = FileName(path)

    def error(self, line, message):
        return InputError(self.path, line, message)

    def numbered(self):
        """(line number, stripped text) of every non-blank line."""
        for number, text in enumerate(self.lines, 1):
            text = text.strip()
            if text:
                yield number, text

    # -- facts the file itself does not record: the option first, then the file name ------------
    def fallback_collective(self, why):
        if self.collective:
            return self.collective
        if self.name.collective:
            return self.name.collective
        raise self.error(None, f"{why}; give --collective (e.g. --collective bcast)")

    def fallback_comm_size(self, line, why):
        if self.comm_size is not None:
            return self.comm_size
        sizes = self.name.comm_sizes()
        if len(sizes) == 1:
            return sizes[0]
        if sizes:
            listed = ", ".join(map(str, sizes))
            raise self.error(line, f"{why} and the file name holds several numbers ({listed}); give --comm-size")
        raise self.error(line, f"{why}; give --comm-size or name the file like osu_bcast_np16.txt")

    def fallback_algorithm(self):
        """The algorithm the file name tells, or None."""
        return self.name.algorithm()

    def fallback_segsize(self):
        return self.name.segsize() or 0

    # -- checked values -------------------------------------------------------------------------
    def integer(self, line, what, text, minimum):
        if isinstance(text, int):
            value = text
        else:
            cell = str(text).strip()
            if not _INTEGER.match(cell):
                raise self.error(line, f"{what} {cell!r} is not a whole number")
            value = int(cell.split(".")[0])
        if value < minimum:
            rule = "must not be negative" if minimum == 0 else f"must be at least {minimum}"
            raise self.error(line, f"{what} {value} {rule}")
        return value

    def real(self, line, what, text, positive):
        cell = str(text).strip()
        try:
            if "_" in cell:  # float() would accept "1_0"; no benchmark writes that
                raise ValueError
            value = float(cell)
        except ValueError:
            raise self.error(line, f"{what} {cell!r} is not a number") from None
        if not math.isfinite(value):
            raise self.error(line, f"{what} {cell!r} is not a finite number")
        if value < 0 or (positive and value == 0):
            raise self.error(line, f"{what} {cell} must be {'> 0' if positive else '>= 0'}")
        return value

    def measurement(self, line, *, collective, algorithm, comm_size, msg_size, time,
                    segsize=0, stddev=None, reps=None, scale=None, stddev_scale=None):
        """One checked row; the scales convert the file's time units to microseconds (None: already µs).

        A stddev without a unit of its own is in the time's unit.
        """
        name = normalise_collective(collective)
        if name is None:
            raise self.error(line, f"unknown collective {str(collective).strip()!r}")
        algorithm = str(algorithm).strip()
        if not algorithm:
            raise self.error(line, "empty algorithm name")
        if algorithm.lower() == DEFAULT_ALGORITHM:
            algorithm = DEFAULT_ALGORITHM
        if stddev is not None and str(stddev).strip().lower() not in MISSING:
            stddev = self.real(line, "stddev", stddev, positive=False) * (stddev_scale or scale or 1.0)
        else:
            stddev = None
        if reps is not None and str(reps).strip().lower() not in MISSING:
            reps = self.integer(line, "repetition count", reps, 1)
        else:
            reps = None
        return Measurement(
            collective=name,
            algorithm=algorithm,
            segsize=self.integer(line, "segment size", segsize, 0),
            comm_size=self.integer(line, "communicator size", comm_size, 1),
            msg_size=self.integer(line, "message size", msg_size, 0),
            time=self.real(line, "time", time, positive=True) * (scale or 1.0),
            stddev=stddev,
            reps=reps,
            source=f"{self.path}:{line}",
        )
