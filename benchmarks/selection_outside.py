"""Issue 39: how each side outside the measured range is decided, measured with nested validation.

usage: python benchmarks/selection_outside.py [--cases SUBSTR,..]      (QUADSEL_SHARED: the shared/ folder)
       python benchmarks/selection_outside.py --distance | --reach | --reach-time

The data sets and splits of benchmarks/selection_cart.py (the four parity splits and the two edge splits), the
default build run in this process with each candidate rule for the sides (library_default.best_hand_back), scored
by selection_cart's own penalty (the issue's rule):

  mean            every side by the mean over the folds' points beyond it (before)
  majority S      the same, and a side of S extrapolated only when it also wins at most of those points (the rule
                  built: S = above the communicator sizes, library_default.MAJORITY_SIDES); `>F`: more than F of them
  sign S          ... when it wins at more of those points than it loses
  z Z             ... when its mean gain is more than Z standard errors of the paired differences
  handed S        S always handed back
  prior K         the built rule (select4): each side's gain shrunk towards the map's gain over every held-out point of
                  the folds, K pseudo-points of it (library_default.PRIOR_POINTS), with majority comm_above; `map only`:
                  K = 10^9; the rules above it are measured without the prior (K = 0), as they were built
Then leave one data set out: for each data set the rule with the least mean on the other data sets, scored on it;
among every rule, then among the pseudo-points alone (the rule before select4 = 0, the prior rows, map only).

--reach: per side, each axis' two end sizes there held out (each communicator size's own on the message axis), the
default build trained on the rest with `--bound-extrapolation` (decision/reach.py) and without it, scored one step
and two steps past the training range: whether extrapolating up to a bound holds out better than without one.

--reach-time: the default build with and without --bound-extrapolation timed on seeded synthetic sweeps with a
library default, up to 28,000 points (400 communicator sizes x 70 message sizes) x 13 methods, and a layout forest of
4 ppn x 100 node counts x 40 message sizes (what the flag costs at a real sweep's size).

--distance: each axis halved -- trained on the lower (upper) half of its sizes, scored on the other half -- and the
points beyond the training range grouped by how many measured sizes beyond it they lie: the extrapolated answer
against the library default. This is the evidence on "extrapolating up to a bound".
"""

import argparse
import collections
import os
import sys
from contextlib import contextmanager

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import selection_cart as sc  # noqa: E402
import synthetic_maps  # noqa: E402
from selection_rules import answers, dmap_of  # noqa: E402

from quadsel.decision import library_default as ld  # noqa: E402
from quadsel.decision.builder import DEFAULT_BUILD, build_size_tree  # noqa: E402
from quadsel.decision.decision_map import training_map  # noqa: E402

BASE = dict(DEFAULT_BUILD, keep_default="auto", outside="auto")
ORIGINAL = ld.best_hand_back
SPLITS = sc.HELD_OUT + ("msg-edge", "comm-edge")
COMM = ("comm_below", "comm_above")


def _gate(test, which):
    """best_hand_back by the mean, then each extrapolated side of `which` handed back unless test(tree, default)."""
    def rule(records, sides):
        handed = set(mean_rule(records, sides)[0])
        for side in sides:
            i = ld.SIDES.index(side)
            pairs = [(t[b[i]], d[b[i]]) for t, d, b in records if b[i].any()]
            if side in which and side not in handed and (
                    not pairs or not test(np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs]))):
                handed.add(side)
        handed = tuple(side for side in sides if side in handed)
        at = [ld.SIDES.index(side) for side in handed]
        return handed, [float(np.where(b[at].any(axis=0), d, t).mean()) if t.size else 0.0 for t, d, b in records]
    return rule


def _z(z):
    def test(tree, default):
        diff = tree - default
        se = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else np.inf
        return diff.mean() + z * se < 0
    return test


def mean_rule(records, sides):
    with rule_of((), 0.5):
        return ORIGINAL(records, sides)


@contextmanager
def rule_of(majority_sides, share, prior=0.0):
    saved = ld.MAJORITY_SIDES, ld.MAJORITY, ld.PRIOR_POINTS
    ld.MAJORITY_SIDES, ld.MAJORITY, ld.PRIOR_POINTS = majority_sides, share, prior
    try:
        yield
    finally:
        ld.MAJORITY_SIDES, ld.MAJORITY, ld.PRIOR_POINTS = saved


def rules():
    """{name: (MAJORITY_SIDES, MAJORITY, replacement of best_hand_back or None[, PRIOR_POINTS])}."""
    out = {"mean (before)": ((), 0.5, None), "majority comm_above (before select4)": (("comm_above",), 0.5, None),
           "majority comm sides": (COMM, 0.5, None), "majority every side": (ld.SIDES, 0.5, None)}
    for share in (0.25, 0.4, 0.6, 0.75):
        out[f"majority comm_above >{share:g}"] = (("comm_above",), share, None)
    out["sign comm sides"] = ((), 0.5, _gate(lambda t, d: (t < d - 1e-9).sum() > (t > d + 1e-9).sum(), COMM))
    out["sign every side"] = ((), 0.5, _gate(lambda t, d: (t < d - 1e-9).sum() > (t > d + 1e-9).sum(), ld.SIDES))
    for z in (1.0, 2.0):
        out[f"z {z:g} every side"] = ((), 0.5, _gate(_z(z), ld.SIDES))
    out["z 2 comm_above"] = ((), 0.5, _gate(_z(2.0), ("comm_above",)))
    out["handed comm_above"] = ((), 0.5, _gate(lambda t, d: False, ("comm_above",)))
    for prior in (1, 4, 32, 128, 10 ** 9):
        name = "map only" if prior == 10 ** 9 else f"prior {prior}" + (" (built)" if prior == ld.PRIOR_POINTS else "")
        out[name] = (("comm_above",), 0.5, None, prior)
    out["prior 32, no majority"] = ((), 0.5, None, 32)
    return out


def scores(cubes, named):
    """{(rule, case, split): mean penalty %}."""
    out = {}
    for cube in cubes:
        full = dmap_of(cube)
        for split, test in sc.splits(cube).items():
            if split not in SPLITS:
                continue
            train = training_map(full, ~sc.train_of(cube, split, test))
            points = list(zip(*np.nonzero(test)))
            for name, (sides, share, replacement, *prior) in named.items():
                with rule_of(sides, share, *prior):
                    ld.best_hand_back = replacement or ORIGINAL
                    try:
                        fn = build_size_tree(train, **BASE)
                    finally:
                        ld.best_hand_back = ORIGINAL
                out[name, cube.name, split] = float(sc.penalties(cube, points, answers(cube, fn, points)).mean())
        print(f"  {cube.name}", file=sys.stderr, flush=True)
    return out


def references(cubes):
    """{(reference, case, split): mean penalty %} of CART-16 and the default alone."""
    out = {}
    for cube in cubes:
        for split, test in sc.splits(cube).items():
            train = sc.train_of(cube, split, test)
            points, train_pts = list(zip(*np.nonzero(test))), list(zip(*np.nonzero(train)))
            out["CART-16", cube.name, split] = float(sc.penalties(
                cube, points, sc.cart_answers("CART-16", cube, train_pts, points)).mean())
            out["default", cube.name, split] = float(sc.penalties(cube, points, [sc.DEFAULT] * len(points)).mean())
    return out


def table(out, refs, names, cases):
    held = lambda n, cs: [(c, s, v) for (m, c, s), v in out.items() if m == n and c in cs and s in sc.HELD_OUT]  # noqa
    print("| rule | held out (46 splits) | within 0.5 pp of CART-16 | within 1 pp of the default | ORFEO 4 (odd) | "
          "edge splits |\n|---|---:|---:|---:|---:|---:|")
    for name in names:
        rows = held(name, cases)
        orfeo = [out.get((name, c, s), np.nan) for c in ("orfeo-bcast", "orfeo-reduce") for s in ("msg-odd", "comm-odd")]
        edge = [v for (m, _, s), v in out.items() if m == name and s.endswith("-edge")]
        print(f"| {name} | {np.mean([v for *_, v in rows]):.2f} | "
              f"{sum(v <= refs['CART-16', c, s] + 0.5 for c, s, v in rows)} | "
              f"{sum(v <= refs['default', c, s] + 1.0 for c, s, v in rows)} | {np.mean(orfeo):.2f} | {np.mean(edge):.2f} |")
    family = [n for n in names if n.startswith(("majority comm_above (before", "prior", "map only")) and "no maj" not in n]
    for among, label in ((names, "every rule"), (family, "the pseudo-points of the map's evidence, 0 to 10^9")):
        values, chosen = [], []
        for case in cases:
            others = [c for c in cases if c != case]
            best = min(among, key=lambda n: np.mean([v for *_, v in held(n, others)]))
            chosen.append(best)
            values += [v for *_, v in held(best, [case])]
        print(f"\nleave one data set out ({label}): nested mean {np.mean(values):.2f} % over {len(values)} splits; "
              "chosen: " + "; ".join(f"{n} ({k}x)" for n, k in collections.Counter(chosen).items()))


def distance(cubes):
    """The --distance table: mean penalty % of the extrapolated answer / the library default, by measured sizes beyond
    the training range (a case's axis, a direction: one unit; `cases`: units where the tree's mean is lower)."""
    base = dict(BASE, outside="extrapolate")
    found = collections.defaultdict(list)
    for cube in cubes:
        full, meas = dmap_of(cube), cube.measured
        rows = np.flatnonzero(meas.any(axis=1))
        for axis in ("comm", "msg"):
            lines = [rows] if axis == "comm" else [np.flatnonzero(meas[r]) for r in rows]
            for direction in ("above", "below"):
                test, steps = np.zeros_like(meas), np.zeros(meas.shape, dtype=int)
                for r, line in zip(rows if axis == "msg" else [None], lines):
                    if line.size < 4:
                        continue
                    half = line[line.size - line.size // 2:] if direction == "above" else line[:line.size // 2][::-1]
                    for k, i in enumerate(half):
                        at = (i, slice(None)) if axis == "comm" else (r, i)
                        test[at], steps[at] = meas[at], k + 1
                if not test.any():
                    continue
                fn = build_size_tree(training_map(full, test), **base)
                points = list(zip(*np.nonzero(test)))
                tree = sc.penalties(cube, points, answers(cube, fn, points))
                default = sc.penalties(cube, points, [sc.DEFAULT] * len(points))
                for (c, m), t, d in zip(points, tree, default):
                    found[axis, direction, min(int(steps[c, m]), 4), cube.name].append((t, d))
        print(f"  {cube.name}", file=sys.stderr, flush=True)
    print("| side | sizes beyond | points | extrapolated | default | points won / lost | cases won |\n"
          "|---|---:|---:|---:|---:|---:|---:|")
    for axis, direction in (("comm", "above"), ("comm", "below"), ("msg", "above"), ("msg", "below")):
        for step in range(1, 5):
            units = [v for (a, d, s, _), v in found.items() if (a, d, s) == (axis, direction, step)]
            if not units:
                continue
            t, d = np.array([x for u in units for x, _ in u]), np.array([y for u in units for _, y in u])
            won = sum(np.mean([x for x, _ in u]) < np.mean([y for _, y in u]) for u in units)
            print(f"| {axis}_{direction} | {step if step < 4 else '4+'} | {t.size} | {t.mean():.2f} | {d.mean():.2f} | "
                  f"{(t < d - 1e-9).mean():.2f} / {(t > d + 1e-9).mean():.2f} | {won} of {len(units)} |")


def far_edges(cube, side):
    """(held-out mask, steps): the two end sizes of `side`'s axis at that side (each communicator size's own on the
    message axis), 1 at the inner one, 2 at the outer; None where the training map would have fewer than
    reach.REACH_SIZES + 2 sizes (its own bound needs two more held out)."""
    from quadsel.decision.reach import REACH_SIZES
    meas = cube.measured
    rows = np.flatnonzero(meas.any(axis=1))
    axis, direction = side.split("_")
    test, steps = np.zeros_like(meas), np.zeros(meas.shape, dtype=int)
    lines = [(None, rows)] if axis == "comm" else [(r, np.flatnonzero(meas[r])) for r in rows]
    for r, line in lines:
        if line.size < REACH_SIZES + 2:
            continue
        ends = line[-2:] if direction == "above" else line[:2][::-1]      # inner, outer
        for k, i in enumerate(ends):
            at = (i, slice(None)) if axis == "comm" else (r, i)
            test[at], steps[at] = meas[at], k + 1
    return (test, steps) if test.any() else None


def reach_rules():
    """{name: the two-step test's verdict (reach.holds or a replacement)}: the rule `--bound-extrapolation` builds and
    the alternatives measured beside it."""
    import quadsel.decision.reach as rc

    def beyond_se(z):
        return lambda r, side: not (r["se"] is not None and r["gain"] + z * r["se"] < 0)
    return {"gain > 0 (built)": rc.holds, "lost beyond 1 SE": beyond_se(1.0), "lost beyond 2 SE": beyond_se(2.0),
            "lost at most points, gain < 0": lambda r, side: not (r["gain"] < 0 and r["losses"] > 0.5 * r["points"]),
            "lost at every point": lambda r, side: not (r["wins"] == 0 and r["losses"] > 0),
            "lost at every point, 3 or more": lambda r, side: not (r["wins"] == 0 and r["losses"] >= 3),
            "shrunk to its 1-step gain, 8 points": lambda r, side: (
                r["gain"] * r["points"] + 8 * (r["one_step_gain"] or 0)) / (r["points"] + 8) > 1e-9}


def reach_table(cubes):
    """The --reach table: per side, the default build trained without the two end sizes there, with
    --bound-extrapolation (decision/reach.py) and without it, scored at the held-out sizes one and two steps past
    its range; then one line per rule of the two-step test (reach_rules)."""
    import quadsel.decision.reach as rc
    rules, original = reach_rules(), rc.holds
    found = collections.defaultdict(list)
    for cube in cubes:
        full = dmap_of(cube)
        for side in ld.SIDES:
            cut = far_edges(cube, side)
            if cut is None:
                continue
            test, steps = cut
            train = training_map(full, test)
            points = list(zip(*np.nonzero(test)))
            at = np.array([steps[c, m] for c, m in points])
            unbounded = build_size_tree(train, **BASE)
            plain = sc.penalties(cube, points, answers(cube, unbounded, points))
            default = sc.penalties(cube, points, [sc.DEFAULT] * len(points))
            extrapolated = side in unbounded.provenance.get("outside", {}).get("extrapolated", [])
            for name, rule in rules.items():
                rc.holds = rule
                try:
                    bounded = build_size_tree(train, **BASE, bound_outside=True)
                finally:
                    rc.holds = original
                fired = side in (bounded.options.outside_reach or {})
                found[name].append((side, cube.name, fired, extrapolated, at,
                                    sc.penalties(cube, points, answers(cube, bounded, points)), plain, default))
        print(f"  {cube.name}", file=sys.stderr, flush=True)
    built = next(iter(rules))
    print("| side | cases | extrapolated / bounded | 1 step: tree | 2 steps: bounded | 2 steps: unbounded | "
          "2 steps: default | bounded cases: 2 steps bounded / unbounded |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    for side in ld.SIDES + ("every side",):
        print(_reach_row(side, [u for u in found[built] if side in (u[0], "every side")]))
    for side, name, fired, _, at, b, u, d in found[built]:
        if fired:
            print(f"  bounded: {name} {side}: 2 steps {b[at == 2].mean():.2f} against {u[at == 2].mean():.2f} unbounded,"
                  f" the default {d[at == 2].mean():.2f}")
    print("\n| rule of the two-step test | cases | extrapolated / bounded | 1 step: tree | 2 steps: bounded | "
          "2 steps: unbounded | 2 steps: default | bounded cases: 2 steps bounded / unbounded |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in rules:
        print(_reach_row(name, found[name]))


def _reach_row(label, units):
    one = np.concatenate([u[5][u[4] == 1] for u in units])
    two = [np.concatenate([u[k][u[4] == 2] for u in units]) for k in (5, 6, 7)]
    fired = [u for u in units if u[2]]
    pair = [np.concatenate([u[k][u[4] == 2] for u in fired]).mean() if fired else np.nan for k in (5, 6)]
    return (f"| {label} | {len(units)} | {sum(u[3] for u in units)} / {len(fired)} | {one.mean():.2f} | "
            f"{two[0].mean():.2f} | {two[1].mean():.2f} | {two[2].mean():.2f} | {pair[0]:.2f} / {pair[1]:.2f} |")


def _timed_sweep(n_comm, n_msg, comm=None):
    """synthetic_maps.timed_map of C x M points (`comm`: its communicator sizes, default 4, 8, ...; message sizes
    1 B, 2 B, ... up to 40 of them, more: 16 B to 1 TiB log-uniform)."""
    rng = np.random.default_rng(n_comm * n_msg + (0 if comm is None else int(comm[0])))
    comm = np.arange(1, n_comm + 1, dtype=np.int64) * 4 if comm is None else comm
    msg = (2 ** np.arange(0, n_msg, dtype=np.int64) if n_msg <= 40
           else (16 * 2 ** np.linspace(0, 36, n_msg)).astype(np.int64))
    return synthetic_maps.timed_map(comm, msg, rng)


def _best_of_two(build):
    import time
    best, out = float("inf"), None
    for _ in range(2):
        start = time.perf_counter()
        out = build()
        best = min(best, time.perf_counter() - start)
    return best, out


def reach_time(sizes=((40, 25), (100, 40), (200, 40), (300, 40), (400, 70)), layers=(1, 2, 4, 8), nodes=100,
               layer_msgs=40):
    """The --reach-time table: the default build with and without --bound-extrapolation on seeded synthetic sweeps
    of real size (_timed_sweep), each timed in this process, best of 2; the last row a layout forest of one member
    per ppn in `layers`, each over 1..`nodes` nodes x `layer_msgs` message sizes (pipeline/build.py, as `quadsel
    build` builds rows with layouts)."""
    from quadsel.pipeline.build import Maps, build
    print("| points (C x M x 12 + default) | default build (s) | --bound-extrapolation (s) | sides bounded |\n"
          "|---|---:|---:|---|")
    for n_comm, n_msg in sizes:
        dmap = _timed_sweep(n_comm, n_msg)
        took = [_best_of_two(lambda: build_size_tree(dmap, **BASE, bound_outside=bound)) for bound in (False, True)]
        fn = took[1][1]
        print(f"| {n_comm * n_msg:,} ({n_comm} x {n_msg}) | {took[0][0]:.2f} | {took[1][0]:.2f} | "
              f"{', '.join(fn.options.outside_reach or {}) or 'none'} |", flush=True)
    counts = np.arange(1, nodes + 1, dtype=np.int64)
    maps = Maps("bcast", {p: _timed_sweep(nodes, layer_msgs, counts * p) for p in layers},
                {p: tuple(counts.tolist()) for p in layers})
    settings = {k: v for k, v in DEFAULT_BUILD.items() if k != "keep_default"}
    took = [_best_of_two(lambda: build(maps, settings, "auto", "auto", bound_outside=bound)) for bound in (False, True)]
    bounded = sum(bool(tree.options.outside_reach) for tree in took[1][1].fn.size_trees)
    print(f"| {len(layers) * nodes * layer_msgs:,} ({len(layers)} layouts (ppn {', '.join(map(str, layers))}) x "
          f"{nodes} x {layer_msgs}) | {took[0][0]:.2f} | {took[1][0]:.2f} | {bounded} of {len(layers)} members |",
          flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", default="")
    parser.add_argument("--distance", action="store_true")
    parser.add_argument("--reach", action="store_true")
    parser.add_argument("--reach-time", action="store_true")
    args = parser.parse_args()
    if args.reach_time:
        reach_time()
        return
    wanted = [c for c in args.cases.split(",") if c]
    cubes = [cube for cube in (make() for make in sc.cases()) if not wanted or any(w in cube.name for w in wanted)]
    if args.distance:
        distance(cubes)
        return
    if args.reach:
        reach_table(cubes)
        return
    named = rules()
    out = scores(cubes, named)
    table(out, references(cubes), list(named), [cube.name for cube in cubes])


if __name__ == "__main__":
    main()
