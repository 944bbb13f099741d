"""The trace file `quadsel trace` writes (docs/trace.md, "The trace file"): read back and checked whole, so
that the analysis (trace/breakdown.py) and a resumed trace never see half a run. No MPI, no NumPy."""

import json
import math

from ..errors import InputError
from ..inputs import read_text

FORMAT = "quadsel-trace"
VERSION = 1
TRACE_LIMIT = 1 << 30      # bytes: a trace of 1000 ranks x 10000 calls is ~200 MB of JSON
_HEADER = {"collective": str, "library": str, "comm_size": int, "runs": list}
_RUN = {"algorithm": str, "segsize": int, "msg_size": int, "calls": int, "entry_us": list, "exit_us": list}


def load_trace(path):
    """The trace file at `path` as a dict; InputError (one line, naming the file) when it is not one."""
    text = read_text(path, what="trace", limit=TRACE_LIMIT)
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise InputError(path, getattr(exc, "lineno", None), f"not JSON ({getattr(exc, 'msg', exc)})") from None
    except RecursionError:
        raise InputError(path, None, "nested too deeply") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(path, None, f"not a quadsel trace file (no \"format\": \"{FORMAT}\")")
    if doc.get("version") != VERSION:
        raise InputError(path, None, f"trace file version {doc.get('version')!r}; this quadsel reads {VERSION}")
    _fields(path, doc, _HEADER, "header")
    n = doc["comm_size"]
    if n < 2:
        raise InputError(path, None, f"comm_size {n}: a collective needs 2 ranks or more")
    for i, run in enumerate(doc["runs"]):
        where = f"runs[{i}]"
        if not isinstance(run, dict):
            raise InputError(path, None, f"{where} is not an object")
        _fields(path, run, _RUN, where)
        for key in ("entry_us", "exit_us"):
            rows = run[key]
            if len(rows) != run["calls"] or run["calls"] < 1:
                raise InputError(path, None, f"{where}.{key} has {len(rows)} calls, \"calls\" says {run['calls']}")
            for c, row in enumerate(rows):
                if not isinstance(row, list) or len(row) != n or not all(_finite(v) for v in row):
                    raise InputError(path, None, f"{where}.{key}[{c}]: not {n} finite numbers (one per rank)")
        if any(x < e for xs, es in zip(run["exit_us"], run["entry_us"]) for x, e in zip(xs, es)):
            raise InputError(path, None, f"{where}: a rank leaves a call before it enters it")
    return doc


def _finite(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _fields(path, obj, fields, where):
    for key, kind in fields.items():
        value = obj.get(key)
        ok = isinstance(value, kind) and not isinstance(value, bool)
        if not ok:
            raise InputError(path, None, f"{where}: \"{key}\" missing or not {kind.__name__}")
