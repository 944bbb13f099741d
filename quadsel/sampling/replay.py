"""`quadsel measure --replay FILES`: answer measurements from recorded full sweeps instead of running MPI.

The files are read as `quadsel build` reads them (every format, detected by content). A measurement of
a method at a point is answered with the recorded row: its time and standard deviation. What the replay
models is the *repetitions*: without --adaptive a pair costs its recorded repetitions; with --adaptive
the interleaved loop at a point is re-enacted on the recorded mean and standard deviation (the CI after
n calls is t·sd/√n), so the decision-aware stopping rule stops where it would have. Files that record
no standard deviation or no repetitions (OSU, IMB without them) charge every measured pair its recorded
repetitions, or one call each where none are recorded: the saving is then only the pairs not measured.
"""

import hashlib
import math
import os
import sys
import time

from .. import __version__
from ..decision.decision_map import method_label
from ..errors import QuadselError
from ..ingest import read_measurements
from ..measure import output, resume
from .adaptive import FullSweep, is_default
from .sample import make_plan
from .sweep import PlanRun
from ..measure.timing import ranking_settled, t_quantile


class Recording:
    """The recorded rows of one collective: {(algorithm, segsize, comm size, msg size): Measurement}."""

    def __init__(self, files, collective, library=None):
        rows = read_measurements(list(files), collective=collective, library=library)
        layouts = sorted({m.layout for m in rows if m.layout})
        if layouts:   # a replay keys on the communicator size: layouts of one size would be pooled (issue 30)
            names = ", ".join(os.path.basename(f) for f in files)
            raise QuadselError(f"{names}: rows of {len(layouts)} layout(s) (nodes/ppn columns): a replay answers one "
                               "host's communicator sizes; replay one ppn's rows without the nodes/ppn columns")
        self.library = rows.library
        self.files = list(files)
        self.rows = {(m.algorithm, m.segsize, m.comm_size, m.msg_size): m for m in rows}
        self.methods = sorted({(m.algorithm, m.segsize) for m in rows}, key=_method_order)
        self.comm_sizes = sorted({m.comm_size for m in rows})
        self.msg_sizes = sorted({m.msg_size for m in rows})

    def get(self, c, m, method):
        return self.rows.get((method[0], method[1], c, m))

    def grid(self, comm_sizes=None, msg_sizes=None, algorithms=None, segments=None, planned=False):
        """(comm sizes, msg sizes, methods) recorded, narrowed to the options the user gave. The library default
        alone is a grid (`--algorithms default` completes a file with the default's rows), but not for a plan
        (`planned`: --adaptive, --sample), which chooses between the other methods."""
        comms = [c for c in self.comm_sizes if comm_sizes is None or c in comm_sizes]
        msgs = [m for m in self.msg_sizes if msg_sizes is None or m in msg_sizes]
        wanted = None if algorithms is None else {a.strip().lower() for a in algorithms}
        methods = [k for k in self.methods
                   if (wanted is None or k[0].strip().lower() in wanted or (is_default(k) and "default" in wanted))
                   and (segments is None or k[1] in segments or k[1] == 0)]
        names = ", ".join(os.path.basename(f) for f in self.files)
        if comms and msgs and methods and planned and all(is_default(k) for k in methods):
            raise QuadselError(f"{names}: --adaptive and --sample choose between methods, and the requested grid "
                               "holds only the library default: replay it without them")
        if not comms or not msgs or not methods:
            raise QuadselError(f"{names}: no recorded measurements in the requested grid "
                               f"(recorded: comm sizes {_span(self.comm_sizes)}, msg sizes {_span(self.msg_sizes)}, "
                               f"methods {', '.join(_label(k) for k in self.methods)})")
        return comms, msgs, methods

    def full_cost(self, comms, msgs, methods):
        """The full sweep's benchmarking time (µs): recorded time × recorded repetitions (1 where unknown)."""
        return sum(r.time * (r.reps or 1) for c in comms for m in msgs for k in methods
                   for r in [self.get(c, m, k)] if r is not None)


def replay_point(recording, c, m, methods, rule, batch, decisive):
    """{method: (mean, stddev, reps)} as the timing loop would have measured them at (c, m).

    Recorded rows are answered as they are. With `decisive` (adaptive) and a recorded stddev and
    repetitions for every method here, the interleaved loop is re-enacted: every pass adds `batch` calls
    to each active method, and a method stops once `ranking_settled` says so, its CI reaches the
    precision, or it reaches the recorded repetitions (what the full sweep's rule spent). A method not
    recorded at the point is left out (the recording has a hole there).
    """
    rows = {k: recording.get(c, m, k) for k in methods}
    rows = {k: r for k, r in rows.items() if r is not None}
    if not decisive or any(r.stddev is None or not r.reps for r in rows.values()):
        return {k: (r.time, r.stddev, r.reps) for k, r in rows.items()}
    candidates = [k for k in rows if not is_default(k)]
    calls = {k: 0 for k in rows}
    active = set(rows)
    while active:
        for k in active:
            calls[k] = min(calls[k] + batch, rows[k].reps)
        intervals = {k: (rows[k].time, _half_width(rule, rows[k].stddev, calls[k])) for k in rows}
        settled = ranking_settled(intervals, candidates)
        active = {k for k in rows   # as time_methods(decisive=True): a stopped method may resume
                  if not (calls[k] >= min(rule.min_reps, rows[k].reps)
                          and (k in settled or intervals[k][1] <= rule.precision * rows[k].time
                               or calls[k] >= rows[k].reps))}
    return {k: (r.time, r.stddev, calls[k]) for k, r in rows.items()}


def _half_width(rule, stddev, n):
    return t_quantile(rule.confidence, n - 1) * stddev / math.sqrt(n) if n >= 2 else math.inf


def run_replay(spec, files, library=None):
    """The replay of `spec` (full sweep, or --adaptive) from the recorded `files` (of MPI library `library`,
    over what their metadata says: --library); writes spec.output."""
    recording = Recording(files, spec.collective, library)
    planned = spec.adaptive or spec.sample
    comms, msgs, methods = recording.grid(spec.comm_sizes, spec.msg_sizes, spec.algorithms, spec.segments,
                                          planned=bool(planned))
    plan = make_plan(spec, comms, msgs, methods) if planned else FullSweep(comms, msgs, methods)
    old = None
    if spec.resume and os.path.exists(spec.output):
        note = output.check_resume(spec.output, spec.collective, "replay",
                                   {"comm_sizes": comms, "msg_sizes": msgs,
                                    "methods": [method_label(a, s) for a, s in methods], "datatype": None})
        if note:
            sys.stderr.write(note + "\n")
        old = output.read_meta(spec.output)
    try:
        results = output.ResultFile(spec.output, spec.resume)
    except OSError as exc:
        raise QuadselError(f"cannot write {spec.output}: {exc.strerror}") from None
    meta = _meta(spec, recording, comms, msgs, methods, old)
    this, earlier = meta["runs"][-1]["grid"], resume.earlier_grids(old)
    if any(grid != this for grid in earlier):   # another grid resumed: the file's grid is the union
        meta["grid"]["points"] = resume.points(spec.collective, earlier + [this], results.replaced)
    results.write_meta(meta)   # beside the CSV, or (a stream) into it
    full = recording.full_cost(comms, msgs, methods)
    run = PlanRun(plan, spec.collective, results, budget=spec.budget, progress=spec.progress, label="replay",
                  full_cost=full, elapsed=lambda: plan.spent() / 1e6)
    while (c := run.next_row()) is not None:
        for m in msgs:
            todo = run.todo(c, m)
            if todo is None:
                break
            run.done(c, m, replay_point(recording, c, m, todo, spec.rule, spec.batch, spec.adaptive))
        else:
            run.row_finished(c)
            continue
        break
    run.close()
    meta["runs"][-1].update(finished=_now(), complete=run.finished)
    meta["complete"] = resume.complete(spec.collective, this, run.finished, earlier, results)
    meta["benchmarking_time_us"] = round(plan.spent(), 3)
    meta["full_sweep_benchmarking_time_us"] = round(full, 3)
    if planned:
        meta["sample" if spec.sample else "adaptive"] = run.summary()
    results.write_meta(meta)
    results.close()
    return meta


def _meta(spec, recording, comms, msgs, methods, old):
    grid = {"methods": [method_label(a, s) for a, s in methods], "comm_sizes": comms, "msg_sizes": msgs,
            "points": len(comms) * len(msgs) * len(methods)}
    return {
        "quadsel_version": __version__,
        "collective": spec.collective,
        "library": "replay",
        "replay": {"files": [{"path": os.path.abspath(f), "sha256": _sha256(f)} for f in recording.files],
                   "answers": "recorded time and stddev; repetitions modelled (docs/measure.md)"},
        "command": spec.command,
        "grid": resume.union((old or {}).get("grid"), grid),
        "methodology": {"precision": spec.rule.precision, "confidence": spec.rule.confidence,
                        "min_reps": spec.rule.min_reps, "batch": spec.batch, "adaptive": spec.adaptive,
                        "sample": spec.sample},
        "runs": (old or {}).get("runs", []) + [{"command": spec.command, "grid": resume.run_grid(grid),
                                               "started": _now(), "finished": None, "complete": False}],
        "complete": False,
    }


def _sha256(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def _now():
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _method_order(k):
    return (not is_default(k), (0, int(k[0]), "") if k[0].isdigit() else (1, 0, k[0].lower()), k[1])


def _label(k):
    return k[0] if k[1] == 0 else f"{k[0]}:{k[1]}"


def _span(values):
    return f"{values[0]}-{values[-1]}" if len(values) > 1 else str(values[0])
