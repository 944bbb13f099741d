"""The steps of `quadsel tune`: measure and build one collective; verify and prune the deployment.

Measuring runs `quadsel measure` itself (it self-launches under mpiexec, resumes its CSV point by point, and
falls back to one launch per method where MPI_T cannot force a collective): tune adds nothing to how a point is
timed. Building is the default build of `quadsel build`; verifying is `quadsel verify` with the follow proof;
pruning is `codegen --verified`. Each is the same function the separate command calls.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time

from ..errors import QuadselError, one_line
from ..output import write_text
from ..layout import Layout
from .folder import input_identity


def measure(spec, folder, collective, seconds=None, on_progress=None):
    """Measure `collective` into folder.measurement(collective) with the strategy of `strategy_for`; stopped (Ctrl-C
    to the job, which keeps every row finished) after `seconds`. `on_progress(done, total, fraction)` at every
    point measure reports (its QUADSEL_PROGRESS_REPORT lines). Returns {"complete": bool, "seconds": wall time,
    "stopped": bool, "strategy": "full" or "adaptive"}."""
    out = folder.measurement(collective)
    msg_sizes = "0" if collective == "barrier" else spec.msg_sizes    # a barrier carries no data
    from ..measure.launch import python_module     # not the working folder's modules (issue 31)
    cmd = python_module(sys.executable, "quadsel") + ["measure", "--np", str(spec.np), "-c", collective,
           "--msg-sizes", msg_sizes, "-o", out] + spec.measure_options
    if spec.comm_sizes:
        cmd += ["--comm-sizes", spec.comm_sizes]
    if spec.mpiexec:
        cmd += ["--mpiexec", spec.mpiexec]
    if spec.mpiexec_args:       # across hosts: every layout, the full sweep (tune/hosts.py)
        from .hosts import measure_options
        cmd += measure_options(spec)
    strategy = strategy_for(spec)
    if strategy == "adaptive":
        result = _measure(cmd + ["--adaptive"], out, collective, seconds, on_progress,
                          fallback=spec.strategy == "auto")
        if result is not None:
            return dict(result, strategy="adaptive")
        strategy = "full"    # auto, and this library cannot force the collective in-process (MPI_T): the full sweep
    return dict(_measure(cmd, out, collective, seconds, on_progress), strategy=strategy)


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


_NO_INPROCESS = ("--adaptive needs in-process forcing", "--adaptive and --sample need it")


def _measure(cmd, out, collective, seconds, on_progress=None, fallback=False, wait=60):
    """Run `quadsel measure` (cmd); with `fallback`, None when it refused --adaptive because this library cannot
    force the collective in-process. tune holds its folder's lock (folder.py), so a measurement whose CSV is locked
    is the leftover of a killed run whose ranks are still ending (they may take the lock only after the check
    below): measure is started again once they have, for up to `wait` seconds."""
    from ..measure.output import LOCKED
    deadline = time.monotonic() + wait
    while True:
        _wait_unlocked(out, max(1.0, deadline - time.monotonic()))
        try:
            return _measure_once(cmd, out, collective, seconds, on_progress, fallback)
        except QuadselError as exc:
            if LOCKED not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(1)


def _measure_once(cmd, out, collective, seconds, on_progress, fallback):
    started = time.monotonic()
    # A session of its own (the terminal's Ctrl-C reaches tune, which stops the job as below), and SIGINT when
    # tune itself dies (kill -9, a job's time limit): measure then keeps its rows and releases its CSV.
    from ..measure.progress import REPORT_ENV
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=_interrupt_with_parent, env=dict(os.environ, **{REPORT_ENV: "1"}))
    said = []
    reader = threading.Thread(target=_read_stderr, args=(proc.stderr, said, on_progress), daemon=True)
    reader.start()
    stopped = False
    try:
        try:
            proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            stopped = True
            os.killpg(proc.pid, signal.SIGINT)     # measure keeps what it finished, as on Ctrl-C
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    except KeyboardInterrupt:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait()
        raise
    finally:
        reader.join(timeout=10)
    elapsed = time.monotonic() - started
    text = "\n".join(said)
    if proc.returncode not in (0, 130) and not (stopped and proc.returncode in (-signal.SIGINT, 130)):
        if fallback and any(reason in text for reason in _NO_INPROCESS):
            return None
        last = [line for line in text.splitlines() if line.strip()][-1:] or [f"exit status {proc.returncode}"]
        raise QuadselError(f"measuring {collective} failed: {one_line(last[0], 400)}")
    return {"complete": _complete(out), "seconds": round(elapsed, 1), "stopped": stopped}


def _read_stderr(stream, said, on_progress, keep=200):
    """measure's stderr, line by line: its progress reports to `on_progress`, the last `keep` other lines to
    `said` (the error message when it fails)."""
    from ..measure.progress import parse_report
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        report = parse_report(line)
        if report is None:
            said.append(line)
            del said[:-keep]
        elif on_progress is not None:
            on_progress(*report)
    stream.close()


def _interrupt_with_parent():
    """In measure's process before exec: SIGINT when tune dies, and SIGINT's default action back. An ignored SIGINT
    survives exec (tune started from a non-interactive shell's `&`, or a parent that ignored it), and a Python
    started with it ignored installs no KeyboardInterrupt: the orphaned measure would never end and keep its CSV
    locked (docs/conventions.md, "Ctrl-C")."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGINT)    # PR_SET_PDEATHSIG (Linux)
    except (OSError, AttributeError):
        pass    # elsewhere a killed tune leaves its measurement running to its end


def _wait_unlocked(csv, seconds=60):
    """A measurement a killed tune left behind may still be ending (it got SIGINT): wait for its lock."""
    from ..measure.output import check_unlocked
    deadline = time.monotonic() + seconds
    while True:
        try:
            return check_unlocked(csv)
        except QuadselError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


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
    from ..pipeline.build import build as build_function, decision_maps
    csv = folder.measurement(collective)
    maps = decision_maps(read_measurements([csv], collective=collective, columns=True), collective)
    settings = {k: v for k, v in DEFAULT_BUILD.items() if k != "keep_default"}
    built = build_function(maps, settings, "auto", "default",
                           {"sources": [os.path.basename(csv)], "inputs": [input_identity(csv, meta_path(csv))]})
    fn, score = built.fn, built.score
    write_text(folder.tree(collective), fn.dumps())
    summary = {"leaves": fn.stats()["leaves"], "penalty_mean": round(score.mean, 3), "penalty_max": round(score.max, 3),
               "comm_sizes": len({c for d in maps.maps.values() for c in d.comm_sizes.tolist()}),
               "msg_sizes": len({m for d in maps.maps.values() for m in d.msg_sizes.tolist()}),
               "methods": len(set().union(*(d.methods for d in maps.maps.values()))), "constraint": fn.constraint}
    if fn.has_layout:     # what tune's report says of the layouts measured
        layouts = sorted({Layout(n, p) for layer in fn.layers for p in layer.measured_ppn for n in layer.nodes})
        summary.update(layouts=[str(layout) for layout in layouts], members=len(fn.layers))
    return fn, summary, maps


def verify(spec, files, measurements, result_path, echo):
    """`quadsel verify FILES` with the follow proof over the tuned grid; writes and returns its JSON document."""
    from ..verify.run import run_verify
    hosts = {"mpiexec_args": spec.mpiexec_args, "layouts": spec.layouts} if spec.mpiexec_args else {}
    outcome = run_verify(files, spec.np, spec.comm_sizes, spec.msg_sizes, None if hosts else measurements,
                         spec.verify_rounds, spec.verify_max_reps, spec.verify_max_time, True, spec.mpiexec, echo,
                         progress=False, min_gain=spec.min_gain, **hosts)
    write_text(result_path, json.dumps(outcome.document, indent=1) + "\n")
    return outcome.document


def prune(fns, result_path, echo):
    """The trees without what the verify run at `result_path` found slower (`codegen --verified`)."""
    from ..verify.prune import prune_all
    return prune_all(fns, result_path, echo=echo)
