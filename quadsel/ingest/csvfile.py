"""Comma-separated tables: our own layout (GENERIC_COLUMNS) and third-party ones found by header names."""

import csv
import re

import numpy as np

from . import columns, csv_columns
from ..inputs import INT_MAX, MAX_COLUMNS
from .common import first_lines
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
        if "nodes" in found and "ppn" in found:
            fixed["comm_size"] = None        # nodes x ppn of every row (common.Context._layout)
        else:
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
_NOT_PLAIN = re.compile(r'["\r\x00]')        # quotes, a carriage return or NUL: csv.reader's business


def read_columns(ctx):
    """The file as Columns when every row is plain (the fast case of the row reader), else None: then `read`
    reads it, with its errors at their lines. Header errors are the row reader's own (the same calls); the
    rows are read from the text's bytes (csv_columns.py)."""
    text = _text(ctx)
    header = None
    for line, end, raw in first_lines(text):
        raw = raw.strip()
        if raw and not raw.startswith("#"):
            if _NOT_PLAIN.search(raw) or raw.count(",") >= MAX_COLUMNS:
                return None
            header = raw.split(",")
            break
    if header is None or max(map(len, header)) > csv.field_size_limit():     # csv.reader refuses such a cell
        return None
    header = [cell.strip() for cell in header]
    found = columns.resolve(ctx, line, header)
    fixed = _missing_columns(ctx, line, found)
    if "msg_total" in found or any(f in found for f in columns.LAYOUT_FIELDS) or ctx.layout is not None:
        return None                      # totals and layouts: the row reader's (docs/benchmarks.md, layouts.py)
    got = csv_columns.read(text, end + 1, line + 1, len(header), found)
    return None if got is None else _columns(ctx, fixed, *got)


def _text(ctx):
    """The file's lines as one text, joined by newlines (as text_lines splits it: a carriage return before a
    newline dropped)."""
    if ctx.text is None:
        return "\n".join(ctx.lines)
    text = ctx.text
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        text = text[:-1] if text.endswith("\r") else text
    return text


def _columns(ctx, fixed, got, names, numbers):
    """Columns of the file from its arrays (`got`), the codes of its labels and the fields without a column."""
    from .column_table import Columns
    n = len(numbers)
    for field, (lo, hi) in csv_columns.WHOLE.items():
        if field in got:
            continue
        if field in fixed:
            value = _fixed_whole(fixed[field], lo, hi)
            if value is None:
                return None
            got[field] = np.full(n, value, dtype=np.int64)
        else:
            got[field] = np.zeros(n, dtype=np.int64)         # reps not recorded
    got.setdefault("stddev", np.full(n, np.nan))
    coded = {}
    for field, check in (("collective", _collective), ("algorithm", _algorithm)):
        if field not in got:
            names[field] = {str(fixed[field]): 0}
            got[field] = np.zeros(n, dtype=np.int64)
        checked = [check(name) for name in names[field]]
        if any(c is None for c in checked):
            return None
        distinct = sorted(set(checked))
        coded[field] = (distinct, np.array([distinct.index(c) for c in checked], dtype=np.int64)[got[field]])
    return Columns(coded["collective"][0], coded["algorithm"][0], [ctx.path], coded["collective"][1],
                   coded["algorithm"][1], got["segsize"], got["comm_size"], got["msg_size"], got["time"],
                   got["stddev"], got["reps"], np.asarray(numbers, dtype=np.int64), np.zeros(n, dtype=np.int64))


def _fixed_whole(value, lo, hi):
    """A value the file name or an option gives to every row, as `read` checks it; None when it needs the rows."""
    value = str(value)
    return int(value) if value.isascii() and value.isdigit() and lo <= int(value) <= hi else None


def _collective(cell):
    return normalise_collective(cell)


def _algorithm(cell):
    """Context.measurement's algorithm checks on one distinct label: the label, or None (the rows refuse it)."""
    from .common import ALGORITHM_MAX_CHARS
    algorithm = str(cell).strip()
    if not algorithm or len(algorithm) > ALGORITHM_MAX_CHARS:
        return None
    if algorithm.lower() == DEFAULT_ALGORITHM:
        return DEFAULT_ALGORITHM
    if algorithm.isdigit() and not (algorithm.isascii() and len(algorithm) < 19 and int(algorithm) <= INT_MAX):
        return None
    return algorithm
