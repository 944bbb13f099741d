"""The trace file `quadsel trace` writes (docs/trace.md, "The trace file"): read back and checked whole, so
that the analysis (trace/breakdown.py) and a resumed trace never see half a run. No MPI, no NumPy."""

from ..errors import InputError
from ..inputs import read_text

FORMAT = "quadsel-trace"
VERSION = 1
TRACE_LIMIT = 1 << 30      # bytes: a trace of 1000 ranks x 10000 calls is ~200 MB of JSON
TIME_LIMIT_US = 1e15       # |timestamp| (31 years in microseconds): beyond, differences of two overflow a double


def load_trace(path, own=False):
    """The trace file at `path` as a dict; InputError (one line, naming the file and line) when it is not one.
    own: `quadsel trace` reading back its own output (to resume it, to add what the default ran): not an input
    the output guard protects.

    The structure (every field breakdown and timemap read, with its type and range) is the schema's,
    docs/schemas/trace.schema.json, checked by quadsel/schemas.py; what a schema cannot say is checked here."""
    from ..schemas import check_json
    text = read_text(path, what="trace output" if own else "trace", limit=TRACE_LIMIT)
    doc = check_json(text, path, "trace")
    n = doc["comm_size"]
    if doc.get("root", 0) >= n:
        raise InputError(path, None, f"root {doc['root']} is not a rank of a communicator of {n}")
    if "hosts" in doc and len(doc["hosts"]) != n:
        raise InputError(path, None, f"hosts has {len(doc['hosts'])} names, not {n} (one per rank)")
    for i, run in enumerate(doc["runs"]):
        where = f"runs[{i}]"
        for key in ("entry_us", "exit_us"):
            rows = run[key]
            if len(rows) != run["calls"]:
                raise InputError(path, None, f"{where}.{key} has {len(rows)} calls, \"calls\" says {run['calls']}")
            for c, row in enumerate(rows):
                if len(row) != n:
                    raise InputError(path, None, f"{where}.{key}[{c}]: not {n} finite numbers (one per rank)")
                if n and max(map(abs, row)) > TIME_LIMIT_US:
                    raise InputError(path, None, f"{where}.{key}[{c}]: a timestamp beyond {TIME_LIMIT_US:.0e} us")
        if any(x < e for xs, es in zip(run["exit_us"], run["entry_us"]) for x, e in zip(xs, es)):
            raise InputError(path, None, f"{where}: a rank leaves a call before it enters it")
        overhead = run.get("overhead") or {}
        if len(overhead.get("traced_us_per_iteration") or []) != len(overhead.get("untraced_us_per_iteration") or []):
            raise InputError(path, None, f"{where}.overhead: traced and untraced blocks differ in number")
    return doc
