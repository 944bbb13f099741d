"""`quadsel verify`: the plan of a verification (grid, arms), its launches, and its report."""

import json
import os
import sys
import tempfile
import time

from ..errors import QuadselError
from ..layout import Layout
from ..measure import launch
from ..libraries import detect, get as get_library, label_of
from ..libraries.fallbacks import fails
from ..targets.library_call import CallModel, verify_type_size
from . import follow, speed
from .forcing import DEFAULT_ARM, json_arm


def plan(sel, library, np_, comm_sizes=None, msg_sizes=None, measurements=None, layouts=None, best_arm=True):
    """Points of one selection: [{"collective", "comm", "msg", "default", "quadsel", "candidates", "rule"}].

    sel: a selection (quadsel.verify.selection) or a DecisionFunction. Grid: comm_sizes / msg_sizes, else
    the selection's own (a tree's measured sizes), else the measured points of `measurements`
    ({(comm, msg): [Method, ...]}, the per-point fastest first). Candidates for the best arm: those measured
    methods, else every method of a tree; a rules file without measurements has none (candidates None: no
    best arm). The selected method is always timed too, as the `quadsel` arm.
    layouts: [(nodes, ppn)] of a layout forest (verify/layouts.py): its points are every layout x message size,
    each with `layout`, comm = nodes x ppn (--comm-sizes does not apply).
    best_arm False: no candidates at all (tune: the decision never reads the best arm, and across hosts it was
    every method of the tree at every point).
    """
    from .selection import as_selection
    sel = as_selection(sel, library)
    grid_comms, grid_msgs = sel.comm_sizes, sel.msg_sizes
    if measurements:
        grid_comms = grid_comms or sorted({k[0] for k in measurements})
        grid_msgs = grid_msgs or sorted({k[1] for k in measurements})
    comms = comm_sizes or grid_comms
    msgs = msg_sizes or grid_msgs
    if not comms or not msgs:
        missing = " and ".join(o for o, v in (("--comm-sizes", comms), ("--msg-sizes", msgs)) if not v)
        raise QuadselError(f"{sel.path}: a rules file has no measurement grid: give {missing} "
                           f"(or --measurements with {sel.collective} measurements)")
    comms = [int(c) for c in comms if int(c) <= np_]
    msgs = [int(m) for m in msgs]
    if layouts is not None:
        units = [(lay.comm_size, Layout(*lay)) for lay in layouts if lay.comm_size <= np_]
        if not units:
            raise QuadselError(f"{sel.collective}: no layout of at most {np_} ranks to verify (use --np or --layouts)")
    else:
        units = [(n, ()) for n in comms]
    if not units:
        raise QuadselError(f"{sel.collective}: no communicator size <= {np_} to verify (use --np or --comm-sizes)")
    if sel.collective == "barrier":
        msgs = [0]        # a barrier carries no data, whatever the grid says
    elif sel.collective != "bcast" and 0 in msgs:
        msgs.remove(0)
    method_pick = getattr(sel, "method_pick", None) or (lambda m: _measured_pick(library, sel.collective, m))
    all_methods = [json_arm(m.arm()) for m in sel.methods()] if hasattr(sel, "methods") else None
    type_size = verify_type_size(sel.collective, msgs)
    points = []
    for n, layout in units:
        for m in msgs:
            call = CallModel.of_verify_call(sel.collective, m, type_size)
            chosen = sel.pick(n, m, call=call, ppn=layout[1]) if layout else sel.pick(n, m, call=call)
            if not best_arm:
                candidates = None
            elif measurements is not None:
                best = measurements.get((n, m) + layout) or measurements.get((n, m))
                candidates = ([json_arm(method_pick(b).arm()) for b in best] if best else [json_arm(chosen.arm())])
            else:          # every method of the tree, but one the library fails at this size (fallbacks.fails)
                candidates = None if all_methods is None else [
                    a for a in all_methods if not fails(library, sel.collective, a[0], a[1], n, m)]
            points.append({"collective": sel.collective, "comm": n, "msg": m, "type_size": type_size,
                           "default": json_arm(DEFAULT_ARM),
                           "quadsel": json_arm(chosen.arm()), "candidates": candidates, "rule": chosen.rule,
                           **({"layout": list(layout)} if layout else {})})
    return points


def _measured_pick(library, collective, method):
    from ..targets.library_call import Pick
    return Pick(label_of(library, collective, method),
                int(method.segsize) if get_library(library).forces_segsize else 0)


BEST_OF = 3   # --measurements: the measured per-point fastest three methods are the best arm's candidates


def best_measured(paths, collective=None, top=BEST_OF):
    """{(comm, msg): [the `top` fastest non-default Methods, fastest first]} from measurement files;
    with collective=None {collective: that} for every collective the files hold.

    Several, not only the winner: for a tree built from the same file the winner is the tree's own choice,
    and "within 10 % of the best" would hold by construction.
    """
    from ..decision.decision_map import Method
    from ..ingest import read_measurements
    times = {}
    for row in read_measurements(list(paths)):
        if row.is_default:
            continue
        method = Method(row.algorithm, row.segsize)
        key = (row.comm_size, row.msg_size) + (row.layout or ())   # a layout's rows are its own
        point = times.setdefault(row.collective, {}).setdefault(key, {})
        point[method] = min(row.time, point.get(method, float("inf")))
    out = {coll: {k: sorted(v, key=v.get)[:top] for k, v in points.items()} for coll, points in times.items()}
    return out if collective is None else out.get(collective, {})


def current_library():
    return current_library_version()[0]


def current_library_version():
    """('openmpi' | 'mpich' | 'intelmpi', MPI_Get_library_version()) of the MPI mpi4py loads."""
    if launch.inside_mpi_job():
        from mpi4py import MPI
        version = MPI.Get_library_version()
    else:
        version = launch.library_without_init()
    version = version.replace("\0", "")   # MPICH pads its version string with NULs
    kind = detect(version)
    if kind is None:
        raise QuadselError("verify needs Open MPI, MPICH or Intel MPI (mpi4py loads none of them)")
    return kind, version


def run_speed_env(spec, np_, forcing_env, mpiexec=None, timeout=None):
    """run_speed for a library forced by the launch's environment only (Intel MPI): one launch per arm, in which
    that arm is the library's own choice; the arms of a point are therefore timed in separate launches, not
    interleaved (docs/deploy.md)."""
    if launch.inside_mpi_job():
        raise QuadselError("this MPI library reads its algorithm at start-up only: run verify with --np "
                           "(one launch per method), not under mpiexec")
    from .speed import _arms, _key
    points = spec["points"]
    arms = sorted({a for p in points for a in _arms(p)})
    times = [{} for _ in points]
    result = None
    from ..measure.progress import LAUNCH_ENV, START_ENV
    start = f"{time.time():.3f}"     # one progress display over the launches (measure/progress.py)
    for k, arm in enumerate(arms, start=1):
        mine = [i for i, p in enumerate(points) if arm in _arms(p)]
        sub = [dict(points[i], default=json_arm(arm), quadsel=json_arm(arm), candidates=None) for i in mine]
        env = dict(forcing_env(spec["collective"], arm[0]), **{LAUNCH_ENV: f"{k}/{len(arms)}", START_ENV: start})
        result = run_speed(dict(spec, points=sub), np_, mpiexec, timeout, env=env)
        for i, p in zip(mine, result["points"]):
            times[i][_key(arm)] = p["times"][_key(arm)]
    return dict(result, points=[dict(p, times=t) for p, t in zip(points, times)], interleaved=False)


def run_speed(spec, np_, mpiexec=None, timeout=None, env=None):
    """Launch quadsel.verify.speed under mpiexec (or run it here when already inside an MPI job)."""
    if launch.inside_mpi_job():
        return speed.run(spec)
    mpiexec = launch.find_mpiexec(mpiexec)
    flavor = launch.mpiexec_flavor(mpiexec)
    with tempfile.TemporaryDirectory(prefix="quadsel-verify-") as workdir:
        spec_path, out_path = os.path.join(workdir, "spec.json"), os.path.join(workdir, "out.json")
        with open(spec_path, "w") as handle:
            json.dump(spec, handle)
        from . import hosts
        cmd = hosts.command(mpiexec, flavor, np_, (sys.executable, "quadsel.verify.speed"), [spec_path, out_path], env)
        env = hosts.environment(flavor, env, han=bool(spec.get("han")))
        if sys.stderr.isatty():
            env["QUADSEL_MEASURE_TTY"] = "1"    # the ranks' stderr is a pipe to mpiexec: the bar still fits a terminal
        status = launch.run(cmd, env, timeout=timeout)   # Ctrl-C: the job is stopped
        if status != 0 or not os.path.exists(out_path):
            raise QuadselError(f"the verify launch failed (exit status {status})")
        with open(out_path) as handle:
            return json.load(handle)


def _us(value):
    return "—" if value is None else f"{value:.1f}"


def format_table(rows, summaries, checks, notes=(), library=None):
    """verify's table: times are speed.typical_times (default / quadsel = the speed-up); every algorithm id with its
    name beside it (`library`'s names: "6" is another algorithm for each collective); `default ran` names the
    algorithm the library default ran (verify/default_ran.py; — where the follow check did not fingerprint it)."""
    from ..libraries import named_label
    out = ["| collective | comm | msg (B) | default µs | quadsel µs | best µs | speed-up | interval | verdict | "
           "vs best | quadsel | best | default ran |",
           "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---|---|---|"]
    for r in rows:
        vs_best = "—" if r["vs_best"] is None else f"{100 * r['vs_best']:+.0f} %"
        ci = "—" if r.get("speedup_low") is None else f"[{r['speedup_low']:.2f}, {r['speedup_high']:.2f}]"
        comm = (f"{r['comm_size']}" + (f" = {r['nodes']}x{r['ppn']}" if r.get("nodes") else "")
                + (f" ({r['oversubscription']}x)" if r.get("oversubscription") else ""))
        ran = (r.get("default_ran") or {}).get("text", "—")
        out.append(f"| {r['collective']} | {comm} | {r['msg_size']} | {_us(r.get('default_us'))} | "
                   f"{_us(r.get('quadsel_us'))} | {_us(r.get('best_us'))} | {r['speedup']:.2f} | {ci} | "
                   f"{r.get('verdict', '—')} | {vs_best} | {named_label(library, r['collective'], r['quadsel'])} | "
                   f"{named_label(library, r['collective'], r['best']) if r['best'] else '—'} | {ran} |")
    out.append("")
    for coll, s in summaries.items():
        if "lowest_speedup" not in s:     # nothing timed (VerifyOptions.time_default_points False)
            out.append(f"{coll}: {s['points']} points, the library default at every one (not timed)")
            continue
        low = s["lowest_speedup"]
        line = (f"{coll}: {s['points']} points; significantly faster than default at "
                f"{100 * s['faster_than_default']:.0f} %; ")
        w = s["worst_vs_best"]
        if w is None:
            line += "best arm skipped (a rules file: give --measurements to time each point's measured best); "
        else:
            line += (f"within 10 % of the best at {100 * s['within_10pct_of_best']:.0f} %; worst point comm "
                     f"{w['comm_size']} msg {w['msg_size']} ({100 * w['vs_best']:+.0f} % vs best "
                     f"{named_label(library, coll, w['best'])}); ")
        timing = f" (timing: {s['timing']})" if s.get("timing") else ""
        if s.get("untimed_default_points"):
            timing += f"; {s['untimed_default_points']} point(s) at the library default not timed"
        out.append(line + f"lowest speed-up {low['speedup']:.2f}x at comm {low['comm_size']} msg {low['msg_size']}"
                   + timing)
    for note in notes:
        out.append(note)
    if checks is not None:
        for source, file_checks in checks.items():
            counts = follow.summary(file_checks)
            out.append(f"rules file followed by the library ({source}): " +
                       (", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "no point checked"))
            for c in file_checks:
                if c.status == "differs":
                    at = f" layout {Layout(*c.layout)}" if c.layout else ""
                    ran = ", ".join(named_label(library, c.collective, m) for m in c.matches)
                    out.append(f"  DIFFERS: {c.collective}{at} comm {c.comm} msg {c.msg}: selected "
                               f"{named_label(library, c.collective, c.method)}, library ran "
                               f"{ran or 'none of the forced methods'}")
    return "\n".join(out) + "\n"
