"""`quadsel trace`: trace a forced algorithm rank by rank (trace/record.py), then print its breakdown."""

import json
import os
import shlex
import sys
import tempfile

import click

from .echo import say
from .types import FloatRange, ranks
from ..errors import QuadselError, ctrl_c_says, one_line
from ..libraries import COLLECTIVES
from ..output import check as check_output
from ..measure import launch
from ..measure.grid import parse_list


@click.command("trace")
@click.option("-c", "--collective", type=click.Choice(COLLECTIVES), required=True, help="Collective to trace.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), metavar="FILE", required=True,
              help="Trace file (JSON, docs/trace.md); rewritten atomically after every run, resumed by a rerun.")
@click.option("--algorithms", metavar="LIST", default="default", show_default=True,
              help="Comma list of algorithms (Open MPI id or name, MPICH name, `default`), each traced in turn.")
@click.option("--msg-sizes", metavar="LIST", default="64K", show_default=True,
              help="Message sizes in bytes (list, ranges, K/M suffixes).")
@click.option("--segment", metavar="BYTES", default="0", show_default=True,
              help="Segment size for the Open MPI algorithms that segment.")
@click.option("--calls", type=click.IntRange(min=1, max=1_000_000), default=100, show_default=True,
              help="Traced calls per algorithm and message size (as many untraced ones measure the overhead).")
@click.option("--warmup", type=click.IntRange(min=0), default=10, show_default=True,
              help="Untraced calls before the traced ones.")
@click.option("--batch", type=click.IntRange(min=1), default=10, show_default=True,
              help="Calls per block; traced and untraced blocks alternate.")
@click.option("--comm-size", type=ranks(2), default=None,
              help="Trace on the first N ranks (default: all of the job).")
@click.option("--np", "np_", type=ranks(2), default=None,
              help="Outside an MPI job: start `mpiexec -n NP` yourself.")
@click.option("--map-by", metavar="SPEC", default=None,
              help="Passed to mpiexec as --map-by SPEC (with --np), e.g. core or socket; recorded in the file.")
@click.option("--mpiexec", default=None, metavar="PATH", help="mpiexec for --np (default: beside --python).")
@click.option("--python", "python", default=None, metavar="PATH",
              help="Python whose mpi4py the ranks load (--np only), e.g. an MPICH venv's; default this one.")
@click.option("--hang-timeout", type=FloatRange(min=0), default=300.0, show_default=True,
              help="Abort the job when one run (algorithm x message size) takes longer than this (0: never).")
@click.option("--resume/--no-resume", default=True, show_default=True,
              help="Keep the runs already in OUTPUT and trace only the missing ones.")
@click.option("--quiet", is_flag=True, help="No progress lines and no breakdown table at the end.")
def trace(collective, output, algorithms, msg_sizes, segment, calls, warmup, batch, comm_size, np_, map_by, mpiexec,
          python, hang_timeout, resume, quiet):
    """Trace every rank's entry and exit of a forced collective algorithm, call by call.

    Each listed algorithm (forced as `measure` forces it) is called --calls times at each message size, with
    a barrier before every call; every rank reads the clock right before and after the call. The timestamps
    go, on one clock, into a trace file, and the per-rank breakdown (arrival wait, departure wait, time
    inside, critical path, tree position) is printed; `quadsel breakdown` analyses trace files further and
    compares configurations side by side:

    \b
        quadsel trace --np 4 -c bcast --algorithms 6,3 --msg-sizes 64K -o bcast.trace.json
        quadsel breakdown bcast.trace.json --timemap bcast-timemap.png
    """
    from ..inputs import parse_size
    spec = {"collective": collective, "output": os.path.abspath(output) if output != "-" else output,
            "algorithms": [a.strip() for a in algorithms.split(",") if a.strip()] or None,
            "msg_sizes": parse_list(msg_sizes, "message size"), "segment": parse_size(segment, "segment size"),
            "calls": calls, "warmup": warmup, "batch": batch, "comm_size": comm_size, "map_by": map_by,
            "resume": resume, "progress": not quiet, "hang_timeout": hang_timeout, "command": _command_line()}
    if collective != "bcast" and 0 in spec["msg_sizes"]:
        raise QuadselError(f"message size 0: {collective} needs data")
    check_output(output)
    if launch.inside_mpi_job():
        if np_ is not None or map_by or python:
            raise QuadselError("--np, --map-by and --python start a job: drop them under your own launcher")
        from types import SimpleNamespace
        from ..trace import record as job
        try:
            doc = job.run(SimpleNamespace(**spec))
        except QuadselError:
            if launch.job_rank() != 0:
                sys.exit(2)
            raise
        if doc is not None and not quiet:
            _print_breakdown(output)
        return
    if np_ is None:
        raise QuadselError("give --np N (or run under mpiexec)")
    if comm_size and comm_size > np_:
        raise QuadselError(f"--comm-size {comm_size} is larger than --np {np_}")
    if python is None:       # this interpreter's MPI: unknown algorithms fail here, before mpiexec
        from ..libraries import open_library
        open_library(launch.library_without_init()).resolve(collective, spec["algorithms"])
    # the file holds every message size finished before: say so (exit 130)
    with ctrl_c_says(f"quadsel trace: interrupted; the runs finished so far are in {one_line(output)}: "
                     "run the same command again to trace the rest"):
        _self_launch(spec, np_, mpiexec, python, map_by)
        if output != "-":
            _identify_default(output, np_, mpiexec, python, quiet)
    if not quiet:
        _print_breakdown(output)


def _self_launch(spec, np_, mpiexec, python, map_by):
    python = python or sys.executable
    if mpiexec is None:
        beside = os.path.join(os.path.dirname(python), "mpiexec")
        mpiexec = beside if os.access(beside, os.X_OK) else None
    exe = launch.find_mpiexec(mpiexec)
    flavor = launch.mpiexec_flavor(exe)
    from ..libraries import get as get_library
    launcher = get_library(flavor)      # the library whose mpiexec this is
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    extra = {"PYTHONPATH": os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)}
    extra.update(launcher.forcing_environment())
    env = launch.launch_env(flavor, extra, spec["command"], keep_selection=True)   # the user's rules: traced
    with tempfile.TemporaryDirectory(prefix="quadsel-trace-") as workdir:
        spec_path, status_path = os.path.join(workdir, "spec.json"), os.path.join(workdir, "status.json")
        with open(spec_path, "w") as handle:
            json.dump(spec, handle)
        cmd = [exe]
        cmd += launcher.oversubscribe(np_, os.cpu_count() or 1)
        if map_by:
            cmd += [launcher.map_by, map_by]
        cmd += ["-n", str(np_)] + launch.python_module(python, "quadsel.trace.record") + [spec_path, status_path]
        code = launch.run(cmd, env)
        if os.path.exists(status_path):
            with open(status_path) as handle:
                raise QuadselError(json.load(handle).get("error", "the trace failed"))
        if code:
            raise QuadselError(f"the trace launch failed (exit status {code})")


def _identify_default(output, np_, mpiexec, python, quiet):
    """Which algorithm the library default ran at each traced message size (quadsel.verify.default_ran, the
    follow check's fingerprints): recorded in the default's runs as `library_ran`, printed by the breakdown."""
    from ..output import write_text
    from ..trace.trace_file import load_trace
    from ..verify.follow import default_ran
    doc = load_trace(output, own=True)
    runs = [r for r in doc["runs"] if r["algorithm"] == "default" and "library_ran" not in r]
    algorithms = doc.get("algorithms") or {}
    if not runs or not algorithms:
        return
    if not quiet:
        sys.stderr.write(f"trace {doc['collective']}: which algorithm the library default ran (one fingerprint "
                         f"launch)\n")
    if python is None or mpiexec is None:        # as the trace launched: mpiexec beside the ranks' Python
        beside = os.path.join(os.path.dirname(python or sys.executable), "mpiexec")
        mpiexec = mpiexec or (beside if os.access(beside, os.X_OK) else None)
    echo = None if quiet else (lambda line: sys.stderr.write(line + "\n"))
    try:
        found = default_ran(doc["library"], doc["collective"], [(doc["comm_size"], r["msg_size"]) for r in runs],
                            np_, sorted(algorithms), python=python, mpiexec=mpiexec, echo=echo, keep_selection=True)
    except QuadselError as exc:        # the trace stands; say why the default stays unnamed
        sys.stderr.write(f"note: which algorithm the library default ran is unknown: {exc}\n")
        return
    for r in runs:
        ran = found.get((doc["comm_size"], r["msg_size"]))
        if ran is not None:
            r["library_ran"] = ran.as_json(algorithms)
    write_text(output, json.dumps(doc, separators=(",", ":")) + "\n")


def _print_breakdown(output):
    if output == "-":
        return
    from ..trace.breakdown_report import render_text
    from ..trace.trace_file import load_trace
    say(render_text([(output, load_trace(output, own=True))]), err=True)


def _command_line():
    return os.environ.get("QUADSEL_MEASURE_COMMAND") or shlex.join(["quadsel"] + sys.argv[1:])
