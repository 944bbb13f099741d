"""Header names -> fields, shared by the CSV, OSU and IMB readers (their headers differ only in spelling)."""

import re

FIELDS = ("collective", "algorithm", "segsize", "comm_size", "msg_size", "msg_total", "time", "stddev", "reps",
          "nodes", "ppn")
LAYOUT_FIELDS = ("nodes", "ppn")     # optional: the layout, comm_size = nodes x ppn (docs/formats-input.md)

# Keys are header names lower-cased without spaces, underscores, dashes, a leading '#' and a unit suffix.
ALIASES = {
    "collective": ("collective", "coll"),
    "algorithm": ("algorithm", "alg", "algo", "method"),
    "segsize": ("segsize", "segment", "seg", "segmentsize"),
    "comm_size": ("commsize", "procs", "processes", "nprocs", "np", "ranks", "nranks"),
    "msg_size": ("msgsize", "size", "bytes", "messagesize"),
    # a size summed over the ranks (what Open MPI matches allgather on): divided by the comm size on reading
    "msg_total": ("msgtotal", "totalsize", "totalbytes", "totalmsgsize"),
    "time": ("time", "timeus", "latency", "avglatency", "tavg"),
    "stddev": ("stddev", "stddevus", "std"),
    # OSU's Iterations and IMB's #repetitions both count the timed repetitions behind the mean.
    "reps": ("reps", "repetitions", "iterations"),
    "nodes": ("nodes", "nnodes", "numnodes"),
    "ppn": ("ppn", "procspernode", "rankspernode", "taskspernode", "processespernode"),
}
_FIELD_OF = {alias: field for field, aliases in ALIASES.items() for alias in aliases}

# Columns that are read past: extremes and checks printed next to the mean, never needed for selection.
IGNORABLE = frozenset(("", "min", "max", "minlatency", "maxlatency", "tmin", "tmax", "mintime", "maxtime",
                       "p50taillat", "p95taillat", "p99taillat", "mbytes/sec", "defects", "validation"))

# Time columns may state their unit; everything is converted to microseconds.
TIME_UNITS = {"us": 1.0, "usec": 1.0, "µs": 1.0, "μs": 1.0, "microseconds": 1.0,
              "ns": 1e-3, "nsec": 1e-3, "ms": 1e3, "msec": 1e3, "s": 1e6, "sec": 1e6, "seconds": 1e6}
SIZE_UNITS = ("b", "byte", "bytes")

_UNIT = re.compile(r"^(.*?)\s*[(\[]\s*([^()\[\]]*?)\s*[)\]]\s*$")


def split_unit(name):
    """"Latency(us)" -> ("latency", "us"); "t_avg[usec]" -> ("tavg", "usec"); "Size" -> ("size", "")."""
    match = _UNIT.match(name.strip())
    base, unit = (match.group(1), match.group(2)) if match else (name, "")
    key = re.sub(r"[\s_\-]+", "", base.lower()).lstrip("#")
    return key, unit.lower()


def resolve(ctx, line, names):
    """Map header `names` to {field: (index, µs per unit or None)}; `ctx.column_map` (--map) wins over aliases."""
    wanted = {}
    for field, column in ctx.column_map.items():
        if field not in FIELDS:
            raise ctx.error(line, f"--map field {field!r} is not one of {', '.join(FIELDS)}")
        matches = [i for i, name in enumerate(names)
                   if name.strip() == column.strip() or split_unit(name)[0] == split_unit(column)[0]]
        if not matches:
            raise ctx.error(line, f"--map {field}={column}: no column {column!r} in the header")
        wanted[matches[0]] = field
    mapped = set(wanted.values())
    found = {}
    for index, name in enumerate(names):
        key, unit = split_unit(name)
        field = wanted.get(index) or _FIELD_OF.get(key)
        if field is None or (index not in wanted and field in mapped):
            if field is None and key not in IGNORABLE:
                raise ctx.error(line, f"unknown column {name.strip()!r} (use --map FIELD={name.strip()} "
                                      "or see docs/formats-input.md)")
            continue  # ignorable, or an alias of a field that --map assigned to another column
        if field in found:
            raise ctx.error(line, f"columns {names[found[field][0]].strip()!r} and {name.strip()!r} "
                                  f"both give the {field}; choose one with --map {field}=COLUMN")
        found[field] = (index, _scale(ctx, line, field, name, unit))
    return found


def _scale(ctx, line, field, name, unit):
    if not unit:
        return None
    if field in ("time", "stddev"):
        if unit not in TIME_UNITS:
            raise ctx.error(line, f"unknown time unit {unit!r} in column {name.strip()!r}")
        return TIME_UNITS[unit]
    if field in ("msg_size", "msg_total", "segsize") and unit not in SIZE_UNITS:
        raise ctx.error(line, f"column {name.strip()!r}: sizes must be in bytes, not {unit!r}")
    return None
