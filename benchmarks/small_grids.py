"""Small grids: does the default build keep the measured structure of a sweep of a few sizes?

usage: python benchmarks/small_grids.py [--only NAME[,NAME...]] [--full] [--cases] [--rules R,...] [--shape C,LO,HI]
       (QUADSEL_SHARED: the shared/ folder, default ../shared; selection.py runs it too)

The cases are made at run time (the shared data sets are never copied): every data set the project has, with
every collective in it, is cut down to a small grid the way a user's first sweep looks --
  - ORFEO EPYC (OSU, Open MPI 4.1.6: bcast and reduce, 8 comm sizes x 20 msg sizes) and the examples measured on
    this VM (ompi5-bcast, ompi5-reduce, mpich5-bcast: 7 x 21): 3 communicator sizes x 5-8 message sizes, three
    choices each (`even`: spread evenly; `r1`, `r2`: random, seeds 1 and 2);
  - ompi-collectives-tuning's gather example (2 comm sizes x 21 msg sizes): both comm sizes x 5-8 msg sizes;
  - examples/two-ranks (Open MPI bcast, reduce, allreduce on 2 ranks, 1 x 21): 5 message sizes, three choices,
    and the whole 1 x 21 sweep.
Each case is scored
  all   on its own measured points (the paper's penalty; what the issue's 44.8 % and 13.2 % are);
  msg   at the message sizes of the full sweep it does not have (inside its range), at its communicator sizes;
  comm  at the communicator sizes it does not have (inside its range), at its message sizes;
  run   on the second run of the same sweep (two-ranks and the 8-rank examples), inside its range;
  worst the largest penalty at one of its own measured points;
  leaves.
--full prints every builder's table, --cases the cases' sizes, --rules adds budget rules
(decision/budget_rule.py), --shape cuts the multi-size sweeps to C comm sizes x LO-HI msg sizes instead.
Columns are mean penalties in % (the library default's penalty where a tree hands a point back to it; negative
where that default beats every forced method, as on ORFEO).
"""

import os
import sys

import numpy as np

from quadsel.decision.builder import DEFAULT_BUILD, build_size_tree
from quadsel.decision.decision_map import build_decision_map, training_map
from quadsel.evaluate.comparators import QuadtreeSelector, SingleBest, choice_on
from quadsel.evaluate.penalty import penalty_grid, summarize
from quadsel.ingest import read_measurements

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("QUADSEL_SHARED") or os.path.join(ROOT, "..", "shared")
ORFEO = os.path.join(SHARED, "datasets", "orfeo-epyc-openmpi4")
GATHER = os.path.join(SHARED, "datasets", "ompi-collectives-tuning-example", "detail.out")
CHOICES = ("even", "r1", "r2")

BEFORE = "default build before issue 31 (budget rule min)"
AFTER = "default build (quadsel build)"
SIXTEEN = "measured, 16 leaves"
BUILDERS = {
    AFTER: dict(DEFAULT_BUILD),
    BEFORE: dict(DEFAULT_BUILD, budget_rule="min"),
    SIXTEEN: dict(DEFAULT_BUILD, max_leaves=16),
    "measured exact, ci ties": dict(DEFAULT_BUILD, max_leaves=None),
}
for _rule, _what in (("1se", "1-SE (smaller tree)"), ("1se-larger", "1-SE, the larger tree"),
                     ("larger-ties", "the larger tree of equal means"),
                     ("measured-floor-ties", "floor 2 points, equal means only"),
                     ("measured-floor-1se", "floor 2 points, 1 SE"), ("measured-floor-1pt", "floor 1 point, 2 SE"),
                     ("loo", "leave-one-out folds"), ("loo-measured-floor", "leave-one-out folds, floor 2 points, 2 SE")):
    BUILDERS[f"budget rule {_rule}: {_what}"] = dict(DEFAULT_BUILD, budget_rule=_rule)


def _pick(n, k, choice):
    """k sorted indices of 0..n-1: spread evenly (`even`, first and last included) or at random."""
    if k >= n:
        return np.arange(n)
    if choice == "even":
        return np.unique(np.round(np.linspace(0, n - 1, k)).astype(int))
    rng = np.random.default_rng(int(choice[1:]))
    return np.sort(rng.choice(n, size=k, replace=False))


def _sub(dmap, rows, cols):
    """The decision map of the points at rows x cols of `dmap` only (rebuilt from them: axes, fill, best)."""
    keep = np.zeros(dmap.shape, dtype=bool)
    keep[np.ix_(rows, cols)] = True
    return training_map(dmap, ~keep)


def _within(axis, sizes):
    return (axis >= sizes.min()) & (axis <= sizes.max())


def _case(full, rows, cols, second=None):
    """(small map, {score name: (map scored on, mask of its points)})."""
    small = _sub(full, rows, cols)
    in_rows, in_cols = np.zeros(full.shape[0], bool), np.zeros(full.shape[1], bool)
    in_rows[rows], in_cols[cols] = True, True
    row_range, col_range = _within(full.comm_sizes, small.comm_sizes), _within(full.msg_sizes, small.msg_sizes)
    tests = {"msg": (full, np.outer(in_rows, col_range & ~in_cols)),
             "comm": (full, np.outer(row_range & ~in_rows, in_cols))}
    if second is not None:
        tests["run"] = (second, np.outer(_within(second.comm_sizes, small.comm_sizes),
                                         _within(second.msg_sizes, small.msg_sizes)))
    return small, {k: v for k, v in tests.items() if (v[1] & v[0].measured).any()}


def _map(paths, **options):
    return build_decision_map(read_measurements(paths, **options))


def full_maps(shape=None):
    """[(name, full map, second run's map or None, comm sizes to keep, msg sizes to keep as (low, high))];
    `shape` (comm sizes, fewest msg sizes, most): another cut of the multi-size sweeps, without the 2-rank ones."""
    out = []
    if shape is not None:
        return [(n, f, s, shape[0], shape[1:]) for n, f, s, c, _ in full_maps() if c > 1 and n != "tuning-gather"]
    if os.path.isdir(ORFEO):
        for coll in ("bcast", "reduce"):
            paths = sorted(p for p in os.listdir(ORFEO) if p.startswith(coll) and "combined" not in p)
            out.append((f"orfeo-{coll}", _map([os.path.join(ORFEO, p) for p in paths]), None, 3, (5, 8)))
    if os.path.exists(GATHER):
        out.append(("tuning-gather", _map([GATHER], collective="gather", library="openmpi"), None, 3, (5, 8)))
    examples = os.path.join(ROOT, "examples")
    for name in ("ompi5-bcast", "ompi5-reduce", "mpich5-bcast"):
        other = os.path.join(examples, "second-run", name + ".csv")
        out.append((name, _map([os.path.join(examples, name + ".csv")]),
                    _map([other]) if os.path.exists(other) else None, 3, (5, 8)))
    for coll in ("bcast", "reduce", "allreduce"):
        out.append((f"two-ranks-{coll}", _map([os.path.join(examples, "two-ranks", coll + ".csv")]),
                    _map([os.path.join(examples, "two-ranks", "second-run", coll + ".csv")]), 1, (5, 5)))
    return out


def cases(shape=None):
    """{case name: (small map, tests)}."""
    out = {}
    for name, full, second, n_comm, (low, high) in full_maps(shape):
        for i, choice in enumerate(CHOICES):
            rows = _pick(full.shape[0], n_comm, choice)
            n_msg = low + (i * 3 + len(name)) % (high - low + 1)
            cols = _pick(full.shape[1], n_msg, choice)
            out[f"{name} {choice}"] = _case(full, rows, cols, second)
        if name.startswith("two-ranks"):
            out[f"{name} whole"] = _case(full, np.arange(full.shape[0]), np.arange(full.shape[1]), second)
    return out


def evaluate(make, small, tests):
    """{all, worst, msg, comm, run, leaves} of one builder on one case."""
    selector = make(small)
    own = summarize(penalty_grid(small, choice_on(selector, small)), small)
    out = {"all": own.mean, "worst": own.max, "leaves": selector.size}
    for name, (dmap, mask) in tests.items():
        out[name] = summarize(penalty_grid(dmap, choice_on(selector, dmap)), dmap, mask).mean
    return out


def makers(only=None):
    out = {name: (lambda d, o=options: QuadtreeSelector.of(build_size_tree(d, **o)))
           for name, options in BUILDERS.items() if only is None or any(o in name for o in only)}
    out["single best method"] = SingleBest.fit
    return out


COLUMNS = ("all", "worst", "msg", "comm", "run", "leaves")


def run(only=None, out=sys.stdout, shape=None, full=False):
    """Print the before/after table (a row per case), the summary of every builder and, with `full`, one table
    per builder; return {builder: {case: scores}}."""
    every = cases(shape)
    results = {}
    for builder, make in makers(only).items():
        results[builder] = {case: evaluate(make, small, tests) for case, (small, tests) in every.items()}
    fmt = lambda r, c: "-" if r.get(c) is None else str(r[c]) if c == "leaves" else f"{r[c]:.2f}"  # noqa: E731
    if all(name in results for name in (BEFORE, AFTER, SIXTEEN)):
        print("\n#### small grids: the default build before and after issue 31, and the 16-leaf tree "
              "(all / worst / msg / comm / run / leaves)", file=out)
        print("| case | grid | before | after | 16 leaves | meets before | meets after |", file=out)
        print("|---|---|---|---|---|---|---|", file=out)
        for case in every:
            cells = [" / ".join(fmt(results[b][case], c) for c in COLUMNS) for b in (BEFORE, AFTER, SIXTEEN)]
            ok = ["yes" if meets(results[b][case], results[SIXTEEN][case]) else "**no**" for b in (BEFORE, AFTER)]
            shape_ = "x".join(str(n) for n in every[case][0].shape)
            print(f"| {case} | {shape_} | " + " | ".join(cells + ok) + " |", file=out)
    for builder, rows in results.items() if full else ():
        print(f"\n#### small grids: {builder}", file=out)
        print("| case | grid | " + " | ".join(COLUMNS) + " |", file=out)
        print("|---|---|" + "---:|" * len(COLUMNS), file=out)
        for case, result in rows.items():
            shape_ = "x".join(str(n) for n in every[case][0].shape)
            print(f"| {case} | {shape_} | " + " | ".join(fmt(result, c) for c in COLUMNS) + " |", file=out)
    summary(results, out)
    return results


def _held(result, columns=("msg", "comm", "run")):
    values = [result[c] for c in columns if c in result]
    return float(np.mean(values)) if values else None


def meets(result, sixteen):
    """Issue 31's bar: within 2 points of the 16-leaf tree on the measured points, or a lower held-out mean."""
    return result["all"] <= sixteen["all"] + 2.0 + 1e-9 or _held(result) < _held(sixteen) - 1e-9


def summary(results, out=sys.stdout):
    """Per builder: the mean of each column over the cases, and how many cases meet issue 31's bar against the
    16-leaf tree (`meets`)."""
    sixteen = results.get(SIXTEEN)
    print("\n#### small grids: summary (means over the cases; held-out: msg and comm; `meets`: within 2 points of "
          "the 16-leaf tree on the measured points, or a lower mean over msg, comm and run than it)", file=out)
    print("| builder | all | worst | held-out | run | leaves | meets | cases |", file=out)
    print("|---|---:|---:|---:|---:|---:|---:|---:|", file=out)
    for builder, rows in results.items():
        same = [v for v in (_held(r, ("msg", "comm")) for r in rows.values()) if v is not None]
        runs = [r["run"] for r in rows.values() if "run" in r]
        ok = "-" if sixteen is None else str(sum(meets(r, sixteen[case]) for case, r in rows.items()))
        col = lambda c: np.mean([r[c] for r in rows.values()])  # noqa: E731
        print(f"| {builder} | {col('all'):.2f} | {col('worst'):.2f} | {np.mean(same):.2f} | {np.mean(runs):.2f} "
              f"| {col('leaves'):.1f} | {ok} | {len(rows)} |", file=out)


def main(argv):
    only = argv[argv.index("--only") + 1].split(",") if "--only" in argv else None
    if "--rules" in argv:
        for rule in argv[argv.index("--rules") + 1].split(","):
            BUILDERS[f"budget rule {rule}"] = dict(DEFAULT_BUILD, budget_rule=rule)
    if "--cases" in argv:
        for case, (small, tests) in cases().items():
            print(case, small.comm_sizes.tolist(), small.msg_sizes.tolist(),
                  {k: int((v[1] & v[0].measured).sum()) for k, v in tests.items()})
        return
    shape = tuple(int(v) for v in argv[argv.index("--shape") + 1].split(",")) if "--shape" in argv else None
    run(only, shape=shape, full="--full" in argv)


if __name__ == "__main__":
    main(sys.argv)
