"""The speed-up of quadsel's selection over the library default, measured on the real MPI.

At every grid point three arms are timed, interleaved in one run (quadsel.measure.timing.time_methods:
shuffled visiting order, barrier before each call; the time of a call as `quadsel measure` takes it,
spec["timing"] "auto" by default: latest end - earliest start on one host; across hosts the same on clocks moved
onto rank 0's by SKaMPI's offsets, every call started at a common time, measure's `offset`), over several rounds
whose samples are pooled:
  default  the library's own choice (Open MPI: its fixed decision; MPICH: its built-in selection);
  quadsel  the method the tree selects, forced through MPI_T exactly as `quadsel measure` forces it;
  best     the per-point best of the candidate methods (every method of the tree, or the best of a
           measurement file), timed in the same run; quadsel's method is always a candidate. A point
           without candidates (a rules file and no measurements) has no best arm.
That the library picks quadsel's method by itself when it loads the emitted file is shown separately,
by quadsel.verify.follow.

Run inside an MPI job:  python -m quadsel.verify.speed SPEC.json OUT.json
"""

import math
import random
import sys
import time

import numpy as np

from ..libraries.base import is_reduction
from ..targets.library_call import CallModel
from .forcing import DEFAULT_ARM, Forcing, arm_key, norm_arm, worker_main
from ..measure.multinode import flat_dup, spans_nodes
from ..measure import exchange
from .han import mark

WITHIN = 0.10   # "within 10 % of the best"


def _key(method):
    return arm_key(method)


def _arms(point):
    """Every arm of a point, normalised: default, quadsel, candidates."""
    return sorted({norm_arm(m) for m in [point["default"], point["quadsel"]] + (point["candidates"] or [])})


def _call(MPI, collective, msg, send, recv, type_size, comm_size):
    # measure's own call (quadsel.measure.calls), with the type quadsel.targets.library_call.CallModel describes
    from ..measure.calls import call_for
    call = CallModel.of_verify_call(collective, msg, type_size)
    mpitype = MPI.BYTE if not is_reduction(collective) else (MPI.FLOAT if call.type_size == 4 else MPI.UINT8_T)
    return call_for(MPI, collective, send, recv, msg, mpitype, call.type_size, comm_size)


def run(spec):
    """Every rank: time the arms of spec["points"]; rank 0 returns {"points": [...]}."""
    from mpi4py import MPI
    from ..libraries import open_library
    from ..measure.mpit import MPIT
    from ..measure.timing import Method, StoppingRule, clock_domain, resolve_timing, time_methods, wait_quietly

    world = MPI.COMM_WORLD
    rank = world.Get_rank()
    collective = spec["collective"]
    rule = StoppingRule(**spec.get("rule", {}))
    rounds = int(spec.get("rounds", 3))
    mpit = MPIT()
    library = open_library(MPI.Get_library_version(), mpit)
    library.prepare(collective)
    forcing = Forcing(library, collective)
    name = MPI.Get_processor_name()
    # across hosts: measure's timing (--timing auto there): span on clocks moved onto rank 0's by SKaMPI's offsets,
    # every call started at a common time (measure/clocksync.py), not each rank's own duration
    timing, timing_reason = resolve_timing(spec.get("timing", "auto"), exchange.allgather(world, clock_domain(name)),
                                           offsets=True)
    span = timing in ("span", "offset")
    points = [dict(p) for p in spec["points"]]
    from ..measure.calls import buffer_bytes
    sizes = buffer_bytes(collective, max(p["msg"] for p in points), max(p["comm"] for p in points))
    send, recv = np.zeros(sizes[0], dtype=np.uint8), np.zeros(sizes[1], dtype=np.uint8)
    samples = {}   # (n, m, key) -> [µs]
    ends = {}      # (n, m, key) -> number of samples at the end of each round (verify/statistics.py)
    spent = {}
    from ..measure.progress import Progress
    progress = Progress(rounds * len(points), f"verify {collective}", enabled=rank == 0 and spec.get("progress", True),
                        total_weight=rounds * sum(p["comm"] * (1 + p["msg"] / 32768) * len(_arms(p)) for p in points),
                        unit="point visits" if rounds > 1 else "points")
    from .layouts import point_layout, split_unit, units_of
    units, groups = units_of(MPI, world, points, name)
    spanning = {}   # (comm size, layout) -> its communicator spans nodes and coll/han's default is timed
    common, own_groups = None, None
    if timing == "offset":
        from ..measure import clocksync
        from ..measure.layouts import NodeGroups
        own_groups = None if groups is not None else NodeGroups(MPI, world, name)
        common, _ = clocksync.setup(MPI, world, groups or own_groups, "offset", "start")
    clock = common.clock if common is not None else (time.perf_counter if span else None)
    for round_ in range(1, rounds + 1):
        for n, layout in units:
            member, base = split_unit(MPI, world, n, layout, groups)
            if member:
                here = [p for p in points if p["comm"] == n and point_layout(p) == layout]
                if round_ == 1:   # coll/han's default, the rest without it (han.py): decided once per communicator
                    spanning[(n, layout)] = bool(spec.get("han")) and spans_nodes(MPI, base)
                    if spanning[(n, layout)]:
                        mark(here)
                han_off = spanning[(n, layout)]
                methods = sorted({m for p in here for m in _arms(p)})
                comms = {}
                for method in methods:
                    forcing.activate(method)   # Open MPI binds the forced method at creation
                    comms[method] = flat_dup(MPI, base, library) if han_off and method != DEFAULT_ARM else base.Dup()
                if library.carries_forcing:
                    forcing.activate(DEFAULT_ARM)
                for p in here:
                    arms = _arms(p)
                    contenders = [Method(_key(m), comms[m], None if library.carries_forcing else
                                         (lambda m=m: forcing.activate(m))) for m in arms]
                    keys = [(n, p["msg"], _key(m)) + layout for m in arms]
                    prior = {k[2]: samples.get(k, []) for k in keys}
                    prior_time = {k[2]: spent.get(k, 0.0) for k in keys}
                    rng = random.Random(f"{spec.get('seed', 0)}:{round_}:{n}:{p['msg']}"
                                        + (f":{layout[0]}x{layout[1]}" if layout else ""))
                    got, used = time_methods(contenders, _call(MPI, collective, p["msg"], send, recv, p.get("type_size"), n), rule, rng,
                                             warmup=int(spec.get("warmup", 2)), batch=int(spec.get("batch", 5)),
                                             prior=prior, prior_time=prior_time, share=round_ / rounds,
                                             span=span, clock=clock, sync=common)
                    for k in keys:
                        samples[k] = got[k[2]]
                        spent[k] = prior_time[k[2]] + used[k[2]]
                        ends.setdefault(k, []).append(len(got[k[2]]))
                    progress.advance(1, f"[round {round_}/{rounds} n={n} msg={p['msg']}]",
                                     weight=n * (1 + p["msg"] / 32768) * len(arms))
                if not library.carries_forcing:
                    forcing.activate(DEFAULT_ARM)
                for comm in comms.values():
                    comm.Free()
                base.Free()
                if common is not None:
                    common.forget()   # a new communicator may reuse a freed one's address: calibrate again
            wait_quietly(world)
    progress.close()
    mpit.close()
    for owned in (groups, own_groups):
        if owned is not None:
            owned.free()
    if rank != 0:
        return None
    out = []
    for p in points:
        times = {}
        for m in _arms(p):
            k = (p["comm"], p["msg"], _key(m)) + point_layout(p)
            mean, sd, count = rule.summarize(samples[k])
            times[_key(m)] = {"mean_us": mean, "stddev_us": sd, "n": count,
                              "rounds_us": round_medians(samples[k], ends[k])}
        out.append(dict(p, times=times))
    return {"points": out, "library": library.name, "library_version": library.version, "rounds": rounds,
            "ranks": world.Get_size(), "timing": timing, "timing_reason": timing_reason}


def round_medians(samples, ends):
    """The median of each round's samples (`ends`: the sample count at the end of each round)."""
    return [float(np.median(samples[a:b])) for a, b in zip([0] + ends[:-1], ends) if b > a]


def paired_rounds(point):
    """How many rounds every arm of a point has (the rounds whose medians are compared; normally --rounds)."""
    counts = [len(v.get("rounds_us") or ()) for v in point["times"].values()]
    return min(counts) if counts and min(counts) > 0 else 0


def typical_times(point):
    """{arm key: µs} of a point: the geometric mean over the paired rounds of each round's median (the very
    figures the speed-up and its interval are computed from, verify/statistics.py, so that default / quadsel
    printed side by side *is* the printed speed-up); the mean of all calls where no round medians are known."""
    n = paired_rounds(point)
    if not n:
        return {k: v["mean_us"] for k, v in point["times"].items()}
    return {k: float(math.exp(np.mean(np.log(np.asarray(v["rounds_us"][:n], dtype=float)))))
            for k, v in point["times"].items()}


def summarize(result):
    """Per-point rows and the summary: geometric-mean speed-up over default, share within 10 % of best.

    The times of a row are `typical_times` (the speed-up is their ratio); `*_mean_us` keep the Tukey-fenced mean
    of all calls of each arm, which a round that ran fewer (slow) calls weighs less than the speed-up does.
    Points without candidates (no best arm) have best/best_us/vs_best None, and so do the summary's
    best-related entries when no point has a best arm.
    """
    rows = []
    for p in result["points"]:
        t = typical_times(p)
        mean = {k: v["mean_us"] for k, v in p["times"].items()}
        default, chosen = t[_key(p["default"])], t[_key(p["quadsel"])]
        best_key = best = vs_best = None
        if p["candidates"] is not None:
            best_key = min((_key(m) for m in p["candidates"] + [p["quadsel"]]), key=lambda k: t[k])
            best = t[best_key]
            vs_best = chosen / best - 1.0
        row = {"collective": p.get("collective", result.get("collective")), "comm_size": p["comm"],
               "msg_size": p["msg"], **({"nodes": p["layout"][0], "ppn": p["layout"][1]} if p.get("layout") else {}),
               "quadsel": _key(p["quadsel"]), "best": best_key,
               "default_us": default, "quadsel_us": chosen, "best_us": best,
               "speedup": default / chosen, "vs_best": vs_best,
               "default_mean_us": mean[_key(p["default"])], "quadsel_mean_us": mean[_key(p["quadsel"])],
               "best_mean_us": None if best_key is None else mean[best_key]}
        if p.get("rule"):
            row["rule"] = p["rule"]
        if p.get("han"):
            row["han"] = True
        rows.append(row)
    if not rows:
        return rows, {}
    speedups = np.array([r["speedup"] for r in rows])
    with_best = [r for r in rows if r["vs_best"] is not None]
    worst = max(with_best, key=lambda r: r["vs_best"]) if with_best else None
    slowest = min(rows, key=lambda r: r["speedup"])
    summary = {
        "points": len(rows),
        "geomean_speedup": float(math.exp(np.mean(np.log(speedups)))),
        "points_with_best": len(with_best),
        "within_10pct_of_best": float(np.mean([r["vs_best"] <= WITHIN for r in with_best])) if with_best else None,
        "worst_vs_best": {k: worst[k] for k in ("comm_size", "msg_size", "quadsel", "best", "vs_best")}
        if worst else None,
        "lowest_speedup": {k: slowest[k] for k in ("comm_size", "msg_size", "quadsel", "speedup")},
        "faster_than_default": float(np.mean(speedups > 1.0)),
    }
    return rows, summary


if __name__ == "__main__":
    worker_main(run, sys.argv[1:])
