"""The body of a plain CSV sweep read as NumPy columns from its bytes (issue 19; csvfile.read_columns).

The row reader (csvfile.read) spends microseconds on every row: a csv.reader call, a dict and each number
checked in Python. Here the body is cut into chunks of whole lines and each chunk is read with array
operations on its bytes: its lines (stripped; blank and comment lines skipped), its cells (between the commas,
stripped), whole numbers from their digits, reals by NumPy's parser once their syntax is the row reader's,
labels as their distinct values. A cell outside the common form of the row reader's checks (a sign, a
missing value where one is required, a number out of range, ...) sends the whole file to the row reader
(None), which reads it or refuses it at its line: both ways give the same table (tests/ingest/test_csv_columns.py).
"""

import csv

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..inputs import INT64_MAX, INT_MAX, TIME_MAX_US, TIME_MIN_US
from .common import MISSING, REAL

CHUNK = 1 << 21          # bytes of whole lines read together: bounds the arrays alive at once
WHOLE = {"comm_size": (1, INT_MAX), "msg_size": (0, INT64_MAX), "segsize": (0, INT_MAX), "reps": (1, INT64_MAX)}
LABELS = ("collective", "algorithm")
_DIGITS = 18             # a whole number of at most 18 digits is below 2**63: read from its digits
_SHORT = 32              # longer cells (rare) are read one by one, as Python strings
_NEWLINE, _COMMA, _HASH = 10, 44, 35
_PAD = 64                # zero bytes around a chunk: every cell read as a window of at most this many bytes
_TENS = 10 ** np.arange(_DIGITS - 1, -1, -1, dtype=np.int64)

# what str.strip() takes off an ASCII cell (the newline ends the line instead)
_SPACE = np.array([c < 128 and chr(c).isspace() and c != _NEWLINE for c in range(256)])

# The row reader's real syntax (common.REAL without nan and inf), one byte at a time: character classes end
# (the zero bytes after a cell), digit, '.', 'e'/'E', sign, other; states start, sign, digits, digits '.', '.'
# alone, fraction, 'e', exponent sign, exponent digits, done (a real ended), failed.
_CLASS = np.full(256, 5, dtype=np.int8)
_CLASS[0] = 0
_CLASS[48:58] = 1
_CLASS[[ord("."), ord("e"), ord("E"), ord("+"), ord("-")]] = [2, 3, 3, 4, 4]
_DONE, _FAILED = 9, 10
_PLAIN_REAL = np.full(256, 64 * 2, dtype=np.int16)    # per byte: a digit 1, '.' 64, the zeros after a cell 0
_PLAIN_REAL[48:58], _PLAIN_REAL[ord(".")], _PLAIN_REAL[0] = 1, 64, 0
_STEP = np.full((11, 6), _FAILED, dtype=np.int8)
for state, moves in {0: {1: 2, 2: 4, 4: 1}, 1: {1: 2, 2: 4}, 2: {0: 9, 1: 2, 2: 3, 3: 6}, 3: {0: 9, 1: 5, 3: 6},
                     4: {1: 5}, 5: {0: 9, 1: 5, 3: 6}, 6: {1: 8, 4: 7}, 7: {1: 8}, 8: {0: 9, 1: 8}, 9: {0: 9}}.items():
    for kind, to in moves.items():
        _STEP[state, kind] = to


def read(text, start, first_line, width, found):
    """(arrays {field: values}, labels {field: {label: code}}, line numbers) of the rows of `text` from offset
    `start` (the line after the header, numbered `first_line`), a header of `width` columns whose `found` fields
    ({field: (index, scale)}, columns.resolve) are read; None when the row reader must read the file."""
    parts, labels, numbers, line = {field: [] for field in found}, {f: {} for f in LABELS if f in found}, [], first_line
    while start < len(text):
        stop = text.find("\n", start + CHUNK)
        stop = len(text) if stop < 0 else stop + 1
        piece = text[start:stop]
        if not _plain(piece):
            piece = _without_comments(piece)        # what comments may hold is no cell's business
            if not _plain(piece):
                return None
        raw = piece.encode("ascii") + (b"" if piece.endswith("\n") else b"\n")
        got = _chunk(raw, width, found, labels)
        if got is None:
            return None
        values, rows, lines = got
        for field, column in values.items():
            parts[field].append(column)
        numbers.append(rows + line)
        line += lines
        start = stop
    if not numbers or not sum(map(len, numbers)):
        return None
    return {field: np.concatenate(v) for field, v in parts.items()}, labels, np.concatenate(numbers)


def _plain(piece):
    # ASCII without quotes, NUL or carriage returns: csv.reader would split it at its commas
    return piece.isascii() and '"' not in piece and "\x00" not in piece and "\r" not in piece


def _without_comments(piece):
    """The lines of `piece` with its comment lines emptied (the line numbers stay)."""
    return "\n".join("" if not line.strip() or line.strip().startswith("#") else line for line in piece.split("\n"))


def _chunk(raw, width, found, labels):
    """(arrays, rows read as offsets of their lines, lines) of one chunk of whole lines; None as `read`."""
    padded = np.frombuffer(bytes(_PAD) + raw + bytes(_PAD), dtype=np.uint8)
    b = padded[_PAD:-_PAD]
    ends = np.flatnonzero(b == _NEWLINE)
    starts = np.concatenate(([0], ends[:-1] + 1))
    after = None
    if np.count_nonzero(b <= 32) > len(ends) or (b == _HASH).any() or (starts == ends).any():
        # lines to strip, comments, blank lines: the next and the last byte strip() keeps, from every byte
        solid, at = ~_SPACE[b] & (b != _NEWLINE), np.arange(len(b), dtype=np.int32)
        after = np.minimum.accumulate(np.where(solid, at, len(b) - 1)[::-1])[::-1]
        before = np.maximum.accumulate(np.where(solid, at, 0))
        first = after[starts]
        rows = np.flatnonzero((first < ends) & (b[first] != _HASH))
        lo, hi = first[rows], before[ends[rows] - 1] + 1
    else:
        rows, lo, hi = np.arange(len(ends)), starts, ends
    commas = np.flatnonzero(b == _COMMA)
    per_line = np.searchsorted(commas, ends[rows]) - np.searchsorted(commas, starts[rows])
    if (per_line != width - 1).any():
        return None                    # cells unlike the header's: the row reader says where
    if len(rows) != len(ends):        # the commas of the rows read
        keep = np.zeros(len(ends), dtype=bool)
        keep[rows] = True
        commas = commas[keep[np.searchsorted(ends, commas)]]
    edges = np.empty((len(rows), width + 1), dtype=np.int64)    # cell k: edges[k] + 1 up to edges[k + 1]
    edges[:, 0], edges[:, 1:-1], edges[:, -1] = lo - 1, commas.reshape(len(rows), width - 1), hi
    limit = csv.field_size_limit()
    if len(rows) and int((hi - lo).max()) > limit and int((np.diff(edges, axis=1) - 1).max()) > limit:
        return None                    # csv.reader refuses such a cell
    values = {}
    for field, (index, scale) in found.items():
        a, z = edges[:, index] + 1, edges[:, index + 1]
        if after is not None:          # the cell stripped: from its first to its last character strip() keeps
            first = after[a]
            empty = first >= z
            a, z = np.where(empty, a, first), np.where(empty, a, before[np.maximum(z - 1, 0)] + 1)
        if field in WHOLE:
            got = _whole(raw, padded, a, z - a, *WHOLE[field], optional=field == "reps")
        elif field in LABELS:
            got = _labels(raw, padded, a, z - a, labels[field])
        else:                          # the time and the stddev (a stddev without a unit has the time's)
            scale = (scale or found["time"][1] or 1.0) if field == "stddev" else (scale or 1.0)
            got = _reals(raw, padded, a, z - a, scale, positive=field == "time")
        if got is None:
            return None
        values[field] = got
    return values, rows, len(ends)


def _gather(padded, a, n, width, right=False):
    """The cells (offsets a, lengths n) as the rows of a (cells, width) byte matrix, from the left with zeros
    after each cell; right=True: (aligned on the right with what precedes each cell, a mask of the cell's bytes).
    `padded`: the chunk between _PAD zeros."""
    cells = sliding_window_view(padded, width)[(a + n - width if right else a) + _PAD]
    if right:
        return cells, np.arange(width) >= (width - n)[:, None]
    cells *= np.arange(width) < n[:, None]
    return cells


def _texts(raw, a, n):
    return [raw[i:i + k].decode("ascii") for i, k in zip(a.tolist(), n.tolist())]


def _whole(raw, padded, a, n, lo, hi, optional):
    """Context.integer over cells of ASCII digits within [lo, hi] (MISSING cells of an optional column: 0); None
    when some cell needs the row reader."""
    values = np.zeros(len(a), dtype=np.int64)
    short = (n > 0) & (n <= _DIGITS)
    odd = np.ones(len(a), dtype=bool)
    if short.any():
        short = _where(short)
        width = int(n[short].max())
        cells, inside = _gather(padded, a[short], n[short], width, right=True)
        digits = cells - np.uint8(48)
        digits *= inside                                # before the cell: leading zeros
        odd[short] = (digits > 9).any(axis=1)
        values[short] = digits @ _TENS[-width:]          # at most 18 digits: below 2**63
    missing = np.zeros(len(a), dtype=bool)
    for i, cell in _odd_cells(raw, a, n, odd):
        digits = cell.lstrip("0") or "0"
        if optional and cell.lower() in MISSING:
            missing[i], values[i] = True, 0
        elif not cell.isdigit() or len(digits) > _DIGITS + 1 or int(digits) > hi:
            return None
        else:
            values[i] = int(digits)
    present = values[~missing] if missing.any() else values
    if len(present) and (present.min() < lo or present.max() > hi):
        return None
    return values


def _reals(raw, padded, a, n, scale, positive):
    """Context.real over cells in the row reader's syntax, times `scale` (MISSING cells of the stddev: NaN);
    None when some cell needs the row reader."""
    values = np.full(len(a), np.nan)
    short = (n > 0) & (n <= _SHORT)
    odd = np.ones(len(a), dtype=bool)
    if short.any():
        short = _where(short)
        width = int(n[short].max()) + 1         # a zero byte after the longest cell ends it
        cells = _gather(padded, a[short], n[short], width)
        kinds = _PLAIN_REAL[cells].sum(axis=1, dtype=np.int32)
        good = (kinds < 64 * 2) & (kinds % 64 > 0)     # like 12.5: digits, at most one '.', nothing else
        rest = np.flatnonzero(~good)
        if len(rest):                           # signs, exponents: the syntax checked character by character
            state = np.zeros(len(rest), dtype=np.int8)
            for j in range(width):
                state = _STEP[state, _CLASS[cells[rest, j]]]
            good[rest] = state == _DONE
        if not good.all():
            short, cells = np.arange(len(a))[short][good], cells[good]
        with np.errstate(over="ignore"):        # 1e999: infinite, refused below
            values[short] = cells.view(f"S{width}")[:, 0].astype(np.float64)
        odd[short] = False
    missing = np.zeros(len(a), dtype=bool)
    for i, cell in _odd_cells(raw, a, n, odd):
        if not positive and cell.lower() in MISSING:
            missing[i] = True
        elif REAL.match(cell):
            values[i] = float(cell)
        else:
            return None
    present = values[~missing] if missing.any() else values
    if not np.isfinite(present).all() or (present < 0).any() or (positive and (present == 0).any()):
        return None
    present = present * scale
    if (present > TIME_MAX_US).any() or (positive and (present < TIME_MIN_US).any()):
        return None
    if not missing.any():
        return present
    values[~missing] = present
    return values


def _where(mask):
    """Index of the True entries: every entry (a slice, no copies) when all are."""
    return slice(None) if mask.all() else np.flatnonzero(mask)


def _odd_cells(raw, a, n, odd):
    """(index, text) of the cells marked odd, read one by one."""
    at = np.flatnonzero(odd)
    return zip(at.tolist(), _texts(raw, a[at], n[at])) if len(at) else ()


def _labels(raw, padded, a, n, codes):
    """The code in `codes` ({label: code}, grown here) of every cell."""
    out = np.empty(len(a), dtype=np.int64)
    short = np.flatnonzero(n <= _SHORT)
    if len(short):
        width = max(int(n[short].max()), 8)     # eight bytes or fewer are compared as one integer
        cells = _gather(padded, a[short], n[short], width)
        found, inverse = np.unique(cells.view("<u8" if width == 8 else f"S{width}")[:, 0], return_inverse=True)
        found = found.view("S8") if width == 8 else found
        table = np.array([codes.setdefault(cell.decode("ascii"), len(codes)) for cell in found.tolist()],
                         dtype=np.int64)
        out[short] = table[inverse.ravel()]
    long = np.flatnonzero(n > _SHORT)
    for i, cell in zip(long.tolist(), _texts(raw, a[long], n[long])):
        out[i] = codes.setdefault(cell, len(codes))
    return out
