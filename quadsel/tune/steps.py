"""The steps of `quadsel tune`: measure and build one collective; verify and prune the deployment.

Each is the function the separate command calls: measuring is pipeline/measure.py (the job started from here,
its CSV resumed point by point, one launch per method where the library cannot force a collective in-process):
tune adds nothing to how a point is timed. Building is pipeline/build.py, `quadsel build`'s default build;
verifying is `quadsel verify` with the follow proof; pruning is `codegen --verified`.
"""

import json
import os
import sys
import time

from ..errors import QuadselError
from ..layout import Layout
from .folder import MEASUREMENT, input_identity


def measure(spec, folder, collective, seconds=None, on_progress=None):
    """Measure `collective` into folder.measurement(collective) with the strategy of `strategy_for`; ended (its
    finished rows kept) after `seconds`. `on_progress(done, total, fraction)` at every point measure reports.
    Returns {"complete": bool, "seconds": wall time, "stopped": bool, "strategy": "full" or "adaptive"}."""
    from ..pipeline.measure import NeedsFullSweep
    strategy = strategy_for(spec)
    if strategy == "adaptive":
        try:
            return dict(_measure(spec, folder, collective, seconds, on_progress, adaptive=True), strategy="adaptive")
        except NeedsFullSweep:
            if spec.strategy != "auto":
                raise
            strategy = "full"    # auto, and the library cannot force this collective in-process: the full sweep
    return dict(_measure(spec, folder, collective, seconds, on_progress), strategy=strategy)


def strategy_for(spec):
    """The measuring strategy of one collective: `full` or `adaptive` as asked, or `auto` (the default): adaptive,
    which falls back to the full sweep where the library cannot force the collective in-process (docs/tune.md,
    *Strategy*: on every replayed sweep, single rows included, adaptive stays within +0.5 pp of the full sweep's
    penalty and 30 % of its time (3.9-26.2 %); docs/benchmarks.md, *Measuring strategies*). Across hosts `auto` is
    the full sweep: measure's per-ppn plans (sampling/adaptive_run.py) replayed on the synthetic 3-axis sweep
    (`benchmarks/adaptive.py --layouts`) miss the penalty bound on 2 of 6 ppn; `--strategy adaptive` asks for them."""
    if spec.mpiexec_args and spec.strategy == "auto":
        return "full"
    return "adaptive" if spec.strategy == "auto" else spec.strategy


def measure_spec(spec, folder, collective, adaptive=False):
    """The measurement tune asks of one collective: `quadsel measure`'s defaults, tune's grid and limits."""
    from ..measure.grid import parse_list
    from ..measure.runner import Spec
    from ..measure.timing import StoppingRule
    measure = Spec(collective=collective, output=folder.measurement(collective),
                   comm_sizes=parse_list(spec.comm_sizes, "communicator size") if spec.comm_sizes else None,
                   msg_sizes=[0] if collective == "barrier" else parse_list(spec.msg_sizes, "message size"),
                   segments=[0, 1024, 8192, 65536], rounds=spec.rounds,
                   rule=StoppingRule(max_reps=spec.max_reps, max_time=spec.max_time),
                   command=f"{spec.command} [measure {collective}]")
    measure.adaptive = adaptive      # with its strategy's defaults (spec.strategy None)
    if spec.layouts:         # across hosts: every layout (tune/hosts.py)
        measure.layouts = list(spec.layouts)
        measure.comm_sizes = sorted({layout.comm_size for layout in spec.layouts})
    if spec.sync:
        measure.sync = spec.sync
    return measure


def _measure(spec, folder, collective, seconds, on_progress, adaptive=False, wait=60):
    """One measurement (pipeline/measure.py). tune holds its folder's lock (folder.py), so a measurement whose CSV
    is locked is the leftover of a killed run whose ranks are still ending (they may take the lock only after the
    check below): it is started again once they have, for up to `wait` seconds."""
    from ..measure.output import LOCKED, check_unlocked
    from ..measure.progress import parse_report
    from ..pipeline.measure import measure
    deadline = time.monotonic() + wait

    def on_line(line):
        report = parse_report(line)
        if report is not None and on_progress is not None:
            on_progress(*report)
        return True      # measure's own lines are tune's to tell: the display, or the error it raises

    from ..ingest.metadata import meta_path
    csv = folder.measurement(collective)
    for path in (csv, meta_path(csv)):      # a measurement of someone else's is not appended to; tune's own is
        folder.claim(path, MEASUREMENT)     # recorded before it starts: a run killed while it measures (a job's
        folder.record(path, MEASUREMENT)    # time limit, kill -9) leaves it tune's, so the rerun continues it
    while True:
        try:
            check_unlocked(folder.measurement(collective))
            done = measure(measure_spec(spec, folder, collective, adaptive), spec.np, spec.mpiexec, spec.mpiexec_args,
                           on_line=on_line, stop_after=seconds)
            return {"complete": _complete(folder.measurement(collective)), "seconds": done.seconds,
                    "stopped": done.stopped}
        except QuadselError as exc:
            if LOCKED not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(1)


def has_rows(folder, collective):
    """Did measure write the collective's CSV with at least one row (a budget can end it before the first)?"""
    from ..ingest.metadata import meta_path
    csv = folder.measurement(collective)
    if not os.path.exists(csv) or not os.path.exists(meta_path(csv)):
        return False
    with open(csv, "rb") as handle:
        return any(line.strip() and not line.startswith(b"#") for line in list(handle)[1:])


def _complete(csv):
    from ..errors import QuadselError
    from ..ingest.metadata import meta_path
    from ..schemas import load_json
    try:
        return bool(load_json(meta_path(csv), "metadata").get("complete"))
    except (OSError, QuadselError):
        return False


def build(folder, collective):
    """The default build of `quadsel build` on the collective's measurements (pipeline/build.py; with a layout key
    when they were measured across hosts): (DecisionFunction, summary, pipeline Maps)."""
    from ..decision.options import DEFAULT_BUILD
    from ..ingest import read_measurements
    from ..ingest.metadata import meta_path
    from ..pipeline.build import as_written, build as build_function, decision_maps
    csv = folder.measurement(collective)
    maps = decision_maps(read_measurements([csv], collective=collective, columns=True), collective)
    settings = {k: v for k, v in DEFAULT_BUILD.items() if k != "keep_default"}
    built = build_function(maps, settings, "auto", "auto",
                           {"sources": [os.path.basename(csv)], "inputs": [input_identity(csv, meta_path(csv))]})
    built = as_written(built, built.fn.library)      # the choice the deployed file makes, as verify will time it
    fn, score = built.fn, built.score
    folder.write(folder.tree(collective), fn.dumps())
    summary = {"leaves": fn.stats()["leaves"], "penalty_mean": round(score.mean, 3), "penalty_max": round(score.max, 3),
               "comm_sizes": len({c for d in maps.maps.values() for c in d.comm_sizes.tolist()}),
               "msg_sizes": len({m for d in maps.maps.values() for m in d.msg_sizes.tolist()}),
               "methods": len(set().union(*(d.methods for d in maps.maps.values()))), "constraint": fn.constraint}
    if fn.has_layout:     # what tune's report says of the layouts measured
        layouts = sorted({Layout(n, p) for layer in fn.layers for p in layer.measured_ppn for n in layer.nodes})
        summary.update(layouts=[str(layout) for layout in layouts], members=len(fn.layers))
    return fn, summary, maps


def verify(spec, folder, files, measurements, result_path, echo):
    """`quadsel verify FILES` with the follow proof over the tuned grid; writes and returns its JSON document."""
    from ..verify.run import VerifyOptions, run_verify
    across = bool(spec.mpiexec_args)
    outcome = run_verify(VerifyOptions(
        list(files), spec.np, spec.comm_sizes, spec.msg_sizes, () if across else list(measurements), spec.verify_rounds,
        spec.verify_max_reps, spec.verify_max_time, mpiexec=spec.mpiexec, mpiexec_args=spec.mpiexec_args,
        progress=False, min_gain=spec.min_gain, layouts=spec.layouts if across else None, busy_ok=spec.busy_ok,
        best_arm=False, time_default_points=False), echo)
    folder.write(result_path, json.dumps(outcome.document, indent=1) + "\n")
    return outcome.document


def prune(fns, result_path, echo):
    """The trees without what the verify run at `result_path` found slower (`codegen --verified`)."""
    from ..verify.prune import prune_all
    return prune_all(fns, result_path, echo=echo)
