"""`quadsel verify`: the plan of a verification (grid, arms), its launches, and its report."""

import json
import os
import subprocess
import sys
import tempfile

from ..errors import QuadselError
from ..ingest.table import DEFAULT_ALGORITHM
from ..measure import launch
from ..measure.libraries import detect
from . import follow, speed


def plan(fn, library, np_, comm_sizes=None, msg_sizes=None, measurements=None):
    """Points of one tree: [{"collective", "comm", "msg", "default", "quadsel", "candidates"}]."""
    label = lambda m: [follow.library_label(library, fn.collective, m), int(m.segsize) if library == "openmpi" else 0]
    comms = [int(c) for c in (comm_sizes or fn.comm_sizes.tolist()) if int(c) <= np_]
    msgs = [int(m) for m in (msg_sizes or fn.msg_sizes.tolist())]
    if not comms:
        raise QuadselError(f"{fn.collective}: no communicator size <= {np_} to verify (use --np or --comm-sizes)")
    if fn.collective != "bcast" and 0 in msgs:
        msgs.remove(0)
    all_methods = [label(m) for m in fn.methods]
    points = []
    for n in comms:
        for m in msgs:
            chosen = label(fn.query(n, m))
            if measurements is not None:
                best = measurements.get((n, m))
                candidates = [label(best)] if best is not None else [chosen]
            else:
                candidates = all_methods
            points.append({"collective": fn.collective, "comm": n, "msg": m, "default": [DEFAULT_ALGORITHM, 0],
                           "quadsel": chosen, "candidates": candidates})
    return points


def best_measured(paths, collective):
    """{(comm, msg): fastest non-default Method} from measurement files."""
    from ..decision_map import Method
    from ..ingest import read_measurements
    best = {}
    for row in read_measurements(list(paths), collective=collective):
        if row.is_default:
            continue
        key = (row.comm_size, row.msg_size)
        if key not in best or row.time < best[key][0]:
            best[key] = (row.time, Method(row.algorithm, row.segsize))
    return {k: v[1] for k, v in best.items()}


def current_library():
    if launch.inside_mpi_job():
        from mpi4py import MPI
        kind = detect(MPI.Get_library_version())
    else:
        kind = detect(launch.library_without_init())
    if kind is None:
        raise QuadselError("verify needs Open MPI or MPICH (mpi4py loads neither)")
    return kind


def run_speed(spec, np_, mpiexec=None, timeout=None):
    """Launch quadsel.verify.speed under mpiexec (or run it here when already inside an MPI job)."""
    if launch.inside_mpi_job():
        return speed.run(spec)
    mpiexec = launch.find_mpiexec(mpiexec)
    flavor = launch.mpiexec_flavor(mpiexec)
    with tempfile.TemporaryDirectory(prefix="quadsel-verify-") as workdir:
        spec_path, out_path = os.path.join(workdir, "spec.json"), os.path.join(workdir, "out.json")
        with open(spec_path, "w") as handle:
            json.dump(spec, handle)
        cmd = [mpiexec] + (["--oversubscribe"] if flavor == "openmpi" and np_ > (os.cpu_count() or 1) else [])
        cmd += ["-n", str(np_), sys.executable, "-m", "quadsel.verify.speed", spec_path, out_path]
        status = subprocess.call(cmd, env=launch.launch_env(flavor), timeout=timeout)
        if status != 0 or not os.path.exists(out_path):
            raise QuadselError(f"the verify launch failed (exit status {status})")
        with open(out_path) as handle:
            return json.load(handle)


def format_table(rows, summaries, checks):
    out = ["| collective | comm | msg (B) | default µs | quadsel µs | best µs | speed-up | vs best | quadsel | best |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in rows:
        out.append(f"| {r['collective']} | {r['comm_size']} | {r['msg_size']} | {r['default_us']:.1f} | "
                   f"{r['quadsel_us']:.1f} | {r['best_us']:.1f} | {r['speedup']:.2f} | {100 * r['vs_best']:+.0f} % | "
                   f"{r['quadsel']} | {r['best']} |")
    out.append("")
    for coll, s in summaries.items():
        w, low = s["worst_vs_best"], s["lowest_speedup"]
        out.append(f"{coll}: {s['points']} points; geometric-mean speed-up over default {s['geomean_speedup']:.2f}x; "
                   f"faster than default at {100 * s['faster_than_default']:.0f} %; within 10 % of the best at "
                   f"{100 * s['within_10pct_of_best']:.0f} %; worst point comm {w['comm_size']} msg {w['msg_size']} "
                   f"({100 * w['vs_best']:+.0f} % vs best {w['best']}); lowest speed-up {low['speedup']:.2f}x "
                   f"at comm {low['comm_size']} msg {low['msg_size']}")
    if checks is not None:
        counts = follow.summary(checks)
        out.append("rules file followed by the library: " + (", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
                                                         or "no point checked"))
        for c in checks:
            if c.status == "differs":
                out.append(f"  DIFFERS: {c.collective} comm {c.comm} msg {c.msg}: tree {c.method}, library ran "
                           f"{', '.join(c.matches) or 'none of the forced methods'}")
    return "\n".join(out) + "\n"
