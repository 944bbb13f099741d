"""What every reader shares: the file's lines, checked numbers, and where missing facts come from."""

import math
import re

from ..errors import InputError
from ..inputs import (INT64_MAX, INT_MAX, MAX_CUBE, MAX_GRID_POINTS, TIME_MAX_US, TIME_MIN_US, fits, read_text,
                      shorten, text_lines)
from ..libraries.sizes import BENCHMARK_TOTALS, per_rank
from .names import FileName, normalise_collective
from .table import DEFAULT_ALGORITHM, Measurement

# An optional cell (stddev, reps) holding one of these means "not measured". "nan" is not among them: a NaN is
# a computation gone wrong, refused like a NaN time (docs/formats-input.md, Limits).
MISSING = frozenset(("", "-", "--", "---", "na", "n/a", "none"))

_INTEGER = re.compile(r"^([+-]?)([0-9]+)(?:\.0*)?$")  # "1024" or "1024.0" (spreadsheets), never "1.5" or "1e3"
# What float() should accept from a benchmark: ASCII decimal notation (not "1_0", "١٢" or " 1 "), or nan/inf
# (refused below as not finite).
REAL = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$|^[+-]?(?:nan|inf|infinity)$", re.I)
ALGORITHM_MAX_CHARS = 256   # an algorithm name longer than this is not a name (MPICH's longest is 40)


def read_lines(path):
    """The file's lines; InputError with no line number when it is missing, unreadable, not a regular file,
    beyond the size limit, binary or empty."""
    return text_lines(read_content(path))


def read_content(path):
    """The file's text, with read_lines' checks (a byte-order mark, as spreadsheets write it, dropped)."""
    text = read_text(path, what="measurements")
    if not text or text.isspace():     # as `not text.strip()`, without a copy of the text
        raise InputError(path, None, "empty file")
    return text


def first_lines(text, start=0):
    """(line number from 1, end offset, line) of the text's lines from offset `start` (a line's start), lazily:
    the lines text_lines gives, for a reader that needs only the first few."""
    number, size = text.count("\n", 0, start), len(text)
    while start < size:
        end = text.find("\n", start)
        end = size if end < 0 else end
        line = text[start:end]
        number += 1
        yield number, end, line[:-1] if line.endswith("\r") else line
        start = end + 1


class Extent:
    """The sizes and methods read so far, over every file: a map too large to build in reasonable memory is
    refused as soon as the rows read show it (inputs.MAX_GRID_POINTS, MAX_CUBE), before the rest is read."""

    def __init__(self):
        self.comm, self.msg, self.methods = set(), set(), set()

    def update(self, path, line, rows):
        self.comm.update(m.comm_size for m in rows)
        self.msg.update(m.msg_size for m in rows)
        self.methods.update((m.algorithm, m.segsize) for m in rows)
        if self._beyond(len(self.comm), len(self.msg), len(self.methods)):
            raise InputError(path, line, f"the measurements read so far span {len(self.comm)} communicator sizes x "
                                         f"{len(self.msg)} message sizes x {len(self.methods)} methods: beyond "
                                         f"{MAX_GRID_POINTS} points or {MAX_CUBE} point-methods, more than a decision "
                                         "map can be built from in reasonable memory (docs/formats-input.md, Limits)")

    @staticmethod
    def _beyond(comm, msg, methods):
        return comm * msg > MAX_GRID_POINTS or comm * msg * methods > MAX_CUBE

    @staticmethod
    def of_columns(cols):
        """(comm sizes, msg sizes, methods) of column_table.Columns, as sets."""
        from .column_table import distinct
        methods = {(cols.labels[a], s) for a, s in distinct(cols.algorithm, cols.segsize)[0].tolist()}
        return set(distinct(cols.comm_size)[0][:, 0].tolist()), set(distinct(cols.msg_size)[0][:, 0].tolist()), methods

    def admits(self, seen):
        """Would rows of these sizes and methods (of_columns) stay within the limits? (If not, the row reader
        refuses them at the line where the limits are passed.)"""
        comm, msg, methods = seen
        return not self._beyond(len(self.comm | comm), len(self.msg | msg), len(self.methods | methods))

    def add(self, seen):
        """Count rows of these sizes and methods (of_columns; admitted: within the limits)."""
        comm, msg, methods = seen
        self.comm |= comm
        self.msg |= msg
        self.methods |= methods


class OtherCollective(InputError):
    """A file whose collective (from its content or its name) is not the one asked for: it is left out,
    never relabelled (an error when nothing else is read). `found`: the collectives it holds."""

    def __init__(self, path, message, found):
        super().__init__(path, None, message)
        self.found = found


class Context:
    """One file being read: its lines, the caller's options, and the facts its name carries."""

    def __init__(self, path, lines, collective=None, comm_size=None, column_map=None, extent=None, text=None,
                 layout=None):
        self.layout = layout        # (nodes, ppn) of every row without layout cells (--layout), or None
        self.extent = extent if extent is not None else Extent()
        self.path = str(path)
        self._lines = lines
        self.text = text            # the file's text, until `lines` are split from it (when first asked for)
        self.collective = collective
        self.comm_size = comm_size
        self.column_map = column_map or {}
        self.name = FileName(path)

    def total_sizes(self, benchmark, collective):
        """Does `benchmark` print `collective`'s size as a total over the ranks (libraries/sizes.py)?"""
        return normalise_collective(collective) in BENCHMARK_TOTALS.get(benchmark, ())

    @property
    def lines(self):
        if self._lines is None:
            self._lines, self.text = text_lines(self.text), None
        return self._lines

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
        named = self.name.collective
        if self.collective:
            if named and named != self.collective:
                raise OtherCollective(self.path, f"its name says {named}, not {self.collective} "
                                                 "(--collective selects files, it never relabels them)", [named])
            return self.collective
        if self.name.collective:
            return self.name.collective
        raise self.error(None, f"{why}; give --collective (e.g. --collective bcast)")

    def fallback_comm_size(self, line, why):
        if self.comm_size is not None:
            return self.comm_size
        if self.layout is not None:           # --layout NODESxPPN: the communicator is nodes x ppn
            return self.layout[0] * self.layout[1]
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
    def integer(self, line, what, text, minimum, maximum=INT64_MAX, why="a 64-bit integer"):
        """A whole number in [minimum, maximum]; `why` names what the maximum is the limit of."""
        if type(text) is str and len(text) < 19 and text.isascii() and text.isdigit():   # the common case, fast
            value = int(text)
            if minimum <= value <= maximum:
                return value
        if isinstance(text, int):
            value, shown = text, shorten(text)
        else:
            cell = str(text).strip()
            match = _INTEGER.match(cell)
            if not match:
                raise self.error(line, f"{what} {shorten(cell)!r} is not a whole number")
            sign, digits = match.groups()
            shown = shorten(cell)
            if not fits(digits, maximum):
                if sign != "-":
                    raise self.error(line, f"{what} {shown} is beyond {maximum}, the limit of {why}")
                value = minimum - 1     # a huge negative number: refused as negative below
            else:     # without its leading zeros: int() refuses more than 4,300 digits
                value = int(digits.lstrip("0") or "0") * (-1 if sign == "-" else 1)
        if value < minimum:
            rule = "must not be negative" if minimum == 0 else f"must be at least {minimum}"
            raise self.error(line, f"{what} {shown} {rule}")
        if value > maximum:
            raise self.error(line, f"{what} {shown} is beyond {maximum}, the limit of {why}")
        return value

    def real(self, line, what, text, positive, scale=1.0):
        """A finite number >= 0 (> 0 if positive), times `scale`; in µs it must stay within the time limits."""
        cell = str(text).strip()
        if not REAL.match(cell):
            raise self.error(line, f"{what} {shorten(cell)!r} is not a number")
        value = float(cell)
        if not math.isfinite(value):
            raise self.error(line, f"{what} {shorten(cell)!r} is not a finite number")
        if value < 0 or (positive and value == 0):
            raise self.error(line, f"{what} {shorten(cell)} must be {'> 0' if positive else '>= 0'}")
        value *= scale
        if value > TIME_MAX_US or (positive and value < TIME_MIN_US):
            raise self.error(line, f"{what} {shorten(cell)} is outside {TIME_MIN_US:g} to {TIME_MAX_US:g} µs "
                                   "(docs/formats-input.md, Limits)")
        return value

    def measurement(self, line, *, collective, algorithm, comm_size, msg_size, time,
                    segsize=0, stddev=None, reps=None, scale=None, stddev_scale=None, total=False, nodes=None,
                    ppn=None):
        """One checked row; the scales convert the file's time units to microseconds (None: already µs).

        A stddev without a unit of its own is in the time's unit. total=True: msg_size is a total over the
        ranks (a benchmark's reduce_scatter), converted to the decision map's bytes per rank (libraries/sizes.py).
        """
        name = normalise_collective(collective)
        if name is None:
            raise self.error(line, f"unknown collective {str(collective).strip()!r}")
        algorithm = str(algorithm).strip()
        if not algorithm:
            raise self.error(line, "empty algorithm name")
        if algorithm.lower() == DEFAULT_ALGORITHM:
            algorithm = DEFAULT_ALGORITHM
        elif algorithm.isdigit():   # an id: every stage reads it with int()
            if not algorithm.isascii():
                raise self.error(line, f"algorithm id {shorten(algorithm)!r} is not written in ASCII digits")
            self.integer(line, "algorithm id", algorithm, 0, INT_MAX, "a C int (the id the C function returns)")
        elif len(algorithm) > ALGORITHM_MAX_CHARS:
            raise self.error(line, f"algorithm name of {len(algorithm)} characters (at most {ALGORITHM_MAX_CHARS})")
        if stddev is not None and str(stddev).strip().lower() not in MISSING:
            stddev = self.real(line, "stddev", stddev, positive=False, scale=stddev_scale or scale or 1.0)
        else:
            stddev = None
        if reps is not None and str(reps).strip().lower() not in MISSING:
            reps = self.integer(line, "repetition count", reps, 1)
        else:
            reps = None
        comm_size, nodes, ppn = self._layout(line, comm_size, nodes, ppn)
        msg_size = self.integer(line, "message size", msg_size, 0, INT64_MAX,
                                "a 64-bit integer (message sizes in the decision map)")
        return Measurement(
            collective=name,
            algorithm=algorithm,
            segsize=self.integer(line, "segment size", segsize, 0, INT_MAX, "a C int (the segment size in C and MPI)"),
            comm_size=comm_size,
            msg_size=per_rank(msg_size, comm_size) if total else msg_size,
            time=self.real(line, "time", time, positive=True, scale=scale or 1.0),
            stddev=stddev,
            reps=reps,
            source=f"{self.path}:{line}",
            nodes=nodes,
            ppn=ppn,
        )

    def _layout(self, line, comm_size, nodes, ppn):
        """(comm size, nodes, ppn) of one row, checked: comm size = nodes x ppn where both are given, a missing one
        derived from the others (docs/formats-input.md, The layout). Cells, else --layout, else no layout."""
        given = lambda v: v is not None and str(v).strip().lower() not in MISSING   # noqa: E731
        nodes, ppn = (nodes if given(nodes) else None), (ppn if given(ppn) else None)
        what = "the layout"
        if nodes is None and ppn is None and self.layout is not None:
            (nodes, ppn), what = self.layout, f"--layout {self.layout[0]}x{self.layout[1]}"
        c_int = "a C int (MPI communicator sizes)"
        if nodes is not None:
            nodes = self.integer(line, "node count", nodes, 1, INT_MAX, c_int)
        if ppn is not None:
            ppn = self.integer(line, "ranks per node (ppn)", ppn, 1, INT_MAX, c_int)
        if comm_size is None:          # no communicator-size column: nodes x ppn
            if nodes is None or ppn is None:
                raise self.error(line, "no communicator size: give both nodes and ppn, or a comm_size column")
            if nodes * ppn > INT_MAX:
                raise self.error(line, f"nodes x ppn = {nodes} x {ppn} is beyond {INT_MAX}, the limit of {c_int}")
            return nodes * ppn, nodes, ppn
        comm_size = self.integer(line, "communicator size", comm_size, 1, INT_MAX, c_int)
        if nodes is not None and ppn is not None:
            if comm_size != nodes * ppn:
                raise self.error(line, f"communicator size {comm_size} is not nodes x ppn = {nodes} x {ppn} "
                                       f"({what}; docs/formats-input.md)")
        elif nodes is not None or ppn is not None:
            known, name = (nodes, "node count") if nodes is not None else (ppn, "ppn")
            if comm_size % known:
                raise self.error(line, f"communicator size {comm_size} is not a multiple of the {name} {known}: "
                                       "no whole layout (give both nodes and ppn)")
            nodes, ppn = (nodes, comm_size // nodes) if nodes is not None else (comm_size // ppn, ppn)
        return comm_size, nodes, ppn
