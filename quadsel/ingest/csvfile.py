"""Comma-separated tables: our own layout (GENERIC_COLUMNS) and third-party ones found by header names."""

import csv

from . import columns
from ..inputs import MAX_COLUMNS

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
