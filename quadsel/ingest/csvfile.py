"""Comma-separated tables: our own layout (GENERIC_COLUMNS) and third-party ones found by header names."""

import csv
import re

import numpy as np

from . import columns
from ..inputs import MAX_COLUMNS, TIME_MAX_US, TIME_MIN_US
from .common import MISSING
from .names import normalise_collective
from .table import DEFAULT_ALGORITHM

CHECK_EVERY = 1 << 16    # rows between two checks of the map's extent (common.Extent)


def _cells(ctx, line, text):
    # One physical line is one row: keeps line numbers exact (no quoted newlines in measurement tables).
    if text.count(",") >= MAX_COLUMNS:     # counted before it is split: a line of millions of commas
        raise ctx.error(line, f"more than {MAX_COLUMNS} cells in one line: not a measurement table")
    try:
        return [cell.strip() for cell in next(csv.reader([text]))]
    except csv.Error as exc:   # e.g. a cell beyond csv.field_size_limit() (131,072 characters)
        raise ctx.error(line, f"not a CSV row ({exc})") from None


def read(ctx):
    rows, header, found, fixed = [], None, None, None
    for line, text in ctx.numbered():
        if text.startswith("#"):
            continue
        cells = _cells(ctx, line, text)
        if header is None:
            header, found = cells, columns.resolve(ctx, line, cells)
            fixed = _missing_columns(ctx, line, found)
            continue
        if len(cells) != len(header):
            raise ctx.error(line, f"{len(cells)} cells, but the header has {len(header)} columns")
        values = dict(fixed)
        for field, (index, _) in found.items():
            values[field] = cells[index]
        stddev_scale = found["stddev"][1] if "stddev" in found else None
        total = "msg_total" in values
        if total:
            values["msg_size"] = values.pop("msg_total")
        rows.append(ctx.measurement(line, scale=found["time"][1], stddev_scale=stddev_scale, total=total, **values))
        if len(rows) % CHECK_EVERY == 0:
            ctx.extent.update(ctx.path, line, rows[-CHECK_EVERY:])
    if header is None:
        raise ctx.error(None, "no header line")
    return rows


def _missing_columns(ctx, line, found):
    """Values for fields without a column: required ones fail here, at the header line."""
    if "msg_size" in found and "msg_total" in found:
        raise ctx.error(line, "both a per-rank message size column and a total size column: keep one "
                              "(docs/formats-input.md, message sizes)")
    if "msg_total" in found:
        found = {**found, "msg_size": found["msg_total"]}      # for the check below only
    for field in ("msg_size", "time"):
        if field not in found:
            raise ctx.error(line, f"missing column for the {field} ({', '.join(columns.ALIASES[field])}); "
                                  f"use --map {field}=COLUMN")
    fixed = {}
    if "collective" not in found:
        fixed["collective"] = ctx.fallback_collective("the file has no collective column")
    if "comm_size" not in found:
        fixed["comm_size"] = ctx.fallback_comm_size(line, "the file has no communicator-size column")
    if "algorithm" not in found:
        # Without it every row would silently become one method; the file name may still name it.
        algorithm = ctx.fallback_algorithm()
        if algorithm is None:
            raise ctx.error(line, "missing algorithm column (algorithm, alg, algo, method); use "
                                  "--map algorithm=COLUMN or name the file like bcast_alg6.csv")
        fixed["algorithm"] = algorithm
    if "segsize" not in found:
        fixed["segsize"] = ctx.fallback_segsize()
    return fixed


# -- the plain sweep as columns (column_table.py) ------------------------------------------------------------
_PLAIN_CHUNK = 1 << 16                       # lines split together (bounds the cell strings alive at once)
_REAL_CHARS = re.compile(r"[0-9.eE+-]+")     # a real in these characters is read alike by float() and NumPy
_NOT_PLAIN = re.compile(r'["\r\x00]')        # quotes, a carriage return or NUL: csv.reader's business
_INNER_SPACE = re.compile(r"[^\S\n]")


def read_columns(ctx):
    """The file as Columns when every row is plain (the fast case of the row reader), else None: then `read`
    reads it, with its errors at their lines. Header errors are the row reader's own (the same calls)."""
    header = None
    for line, raw in enumerate(ctx.lines, 1):
        text = raw.strip()
        if text and not text.startswith("#"):
            if _NOT_PLAIN.search(text) or text.count(",") >= MAX_COLUMNS:
                return None
            header = [cell.strip() for cell in text.split(",")]
            break
    if header is None:
        return None
    found = columns.resolve(ctx, line, header)
    fixed = _missing_columns(ctx, line, found)
    if "msg_total" in found:
        return None
    body = [raw.strip() for raw in ctx.lines[line:]]
    keep = [bool(text) and text[0] != "#" for text in body]
    if all(keep):
        data, numbers = body, np.arange(line + 1, line + 1 + len(body))
    else:
        data = [text for text, k in zip(body, keep) if k]
        numbers = np.flatnonzero(np.array(keep, dtype=bool)) + line + 1
    del body, keep
    width = len(header)
    fields = {field: [] for field in found}
    for first in range(0, len(data), _PLAIN_CHUNK):
        chunk = data[first:first + _PLAIN_CHUNK]
        joined = "\n".join(chunk)
        if not joined.isascii() or _NOT_PLAIN.search(joined):
            return None
        if any(n != width - 1 for n in map(str.count, chunk, [","] * len(chunk))):
            return None
        cells = joined.replace("\n", ",").split(",")
        if _INNER_SPACE.search(joined):
            cells = [cell.strip() for cell in cells]
        for field, (index, _) in found.items():
            fields[field].append(cells[index::width])
    if not data:
        return None
    return _columns(ctx, found, fixed, fields, numbers)


def _columns(ctx, found, fixed, fields, numbers):
    from ..inputs import INT64_MAX, INT_MAX
    from .column_table import Columns
    n = len(numbers)
    got = {}
    limits = {"comm_size": (1, INT_MAX), "msg_size": (0, INT64_MAX), "segsize": (0, INT_MAX), "reps": (1, INT64_MAX)}
    for field, (lo, hi) in limits.items():
        if field in fields:
            got[field] = _integers([_whole(part, lo, hi, field == "reps") for part in fields[field]])
        elif field in fixed:
            got[field] = _integers([_whole([str(fixed[field])], lo, hi, False)])
            got[field] = None if got[field] is None else np.full(n, got[field][0])
        else:
            got[field] = np.zeros(n, dtype=np.int64)         # reps not recorded
        if got[field] is None:
            return None
    scale = found["time"][1] or 1.0
    stddev_scale = (found["stddev"][1] if "stddev" in found else None) or scale
    time = _reals(fields["time"], scale, positive=True)
    stddev = _reals(fields["stddev"], stddev_scale, positive=False) if "stddev" in fields else np.full(n, np.nan)
    if time is None or stddev is None:
        return None
    coded = {}
    for field, check in (("collective", _collective), ("algorithm", _algorithm)):
        parts = fields[field] if field in fields else [[str(fixed[field])] * n]
        names = {name: i for i, name in enumerate(dict.fromkeys(cell for part in parts for cell in part))}
        checked = [check(name) for name in names]
        if any(c is None for c in checked):
            return None
        distinct = sorted(set(checked))
        to_distinct = np.array([distinct.index(c) for c in checked], dtype=np.int64)
        codes = np.concatenate([np.fromiter(map(names.__getitem__, part), np.int64, len(part)) for part in parts])
        coded[field] = (distinct, to_distinct[codes])
    return Columns(coded["collective"][0], coded["algorithm"][0], [ctx.path], coded["collective"][1],
                   coded["algorithm"][1], got["segsize"], got["comm_size"], got["msg_size"], time, stddev,
                   got["reps"], np.asarray(numbers, dtype=np.int64), np.zeros(n, dtype=np.int64))


def _whole(cells, lo, hi, optional):
    """Context.integer over a column of ASCII digits within [lo, hi] (MISSING cells of an optional column: 0);
    None when some cell needs the row reader."""
    missing = None
    if optional and not _digits(cells):
        missing = np.array([cell.lower() in MISSING for cell in cells], dtype=bool)
        cells = [cell for cell, m in zip(cells, missing.tolist()) if not m]
    if not _digits(cells):
        return None
    try:
        values = np.array(cells, dtype=np.int64)
    except (ValueError, OverflowError):      # beyond int64
        return None
    if values.size and (values.min() < lo or values.max() > hi):
        return None
    if missing is not None:
        full = np.zeros(missing.size, dtype=np.int64)
        full[~missing] = values
        values = full
    return values


def _digits(cells):
    joined = "".join(cells)
    return "" not in cells and joined.isascii() and (joined.isdigit() or not joined)


def _integers(parts):
    return None if any(p is None for p in parts) else np.concatenate(parts)


def _reals(parts, scale, positive):
    """Context.real over a column (MISSING cells of the stddev: NaN); None when some cell needs the row reader."""
    out = []
    for cells in parts:
        values = _plain_reals(cells)
        missing = None
        if values is None and not positive:
            missing = np.array([cell.lower() in MISSING for cell in cells], dtype=bool)
            values = _plain_reals([cell for cell, m in zip(cells, missing.tolist()) if not m])
        if values is None:
            return None
        if not np.isfinite(values).all() or (values < 0).any() or (positive and (values == 0).any()):
            return None
        values = values * scale
        if (values > TIME_MAX_US).any() or (positive and (values < TIME_MIN_US).any()):
            return None
        if missing is not None:
            full = np.full(missing.size, np.nan)
            full[~missing] = values
            values = full
        out.append(values)
    return np.concatenate(out)


def _plain_reals(cells):
    """The cells as floats when each is a plain decimal number (as _REAL and float() read it), else None."""
    if "" in cells or (cells and not _REAL_CHARS.fullmatch("".join(cells))):
        return None
    try:
        return np.array(cells, dtype=float)
    except ValueError:
        return None


def _collective(cell):
    return normalise_collective(cell)


def _algorithm(cell):
    """Context.measurement's algorithm checks on one distinct label: the label, or None (the rows refuse it)."""
    from ..inputs import INT_MAX
    from .common import ALGORITHM_MAX_CHARS
    algorithm = str(cell).strip()
    if not algorithm or len(algorithm) > ALGORITHM_MAX_CHARS:
        return None
    if algorithm.lower() == DEFAULT_ALGORITHM:
        return DEFAULT_ALGORITHM
    if algorithm.isdigit() and not (algorithm.isascii() and len(algorithm) < 19 and int(algorithm) <= INT_MAX):
        return None
    return algorithm
