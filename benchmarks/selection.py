"""Evidence for quadsel build's defaults: held-out and cross-run penalty of every tree builder, beside CART.

usage: python benchmarks/selection.py [--only NAME[,NAME...]]   (QUADSEL_SHARED: the shared/ folder, default ../shared)

For every data set the project has -- the ORFEO EPYC bcast/reduce sweeps (../shared, skipped when absent),
the examples (examples/*.csv) and the second runs of the examples on the same VM (examples/second-run/) --
each builder is scored:
  all     built on every measured point, scored on them (the paper's penalty);
  msg     built on every other message size, scored on the others (they fall between the training sizes);
  comm    likewise with every other communicator size;
  random  built on 75 % of the points (seed 0), scored on the other 25 %;
  run     built on one run of this VM, scored on the other run (both directions, averaged).
Columns are mean penalties in %, `leaves` the tree's leaves on all the data. Then the small-grid cases of
benchmarks/small_grids.py (3 communicator sizes x 5-8 message sizes cut from the same data, and the 2-rank
sweeps). docs/methodology.md records
the output and the defaults chosen from it.
"""

import glob
import os
import sys

from quadsel.decision.builder import DEFAULT_BUILD, build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.evaluate.comparators import CartSelector, QuadtreeSelector, SingleBest, cart_available, choice_on
from quadsel.evaluate.holdout import Holdout, split, training_map
from quadsel.evaluate.penalty import penalty_grid, summarize
from quadsel.errors import QuadselError
from quadsel.ingest import read_measurements

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORFEO = os.path.join(os.environ.get("QUADSEL_SHARED") or os.path.join(ROOT, "..", "shared"), "datasets",
                     "orfeo-epyc-openmpi4")
SPLITS = ("msg", "comm", "random:0.25")

MEASURED = dict(split="measured", between="least-bad", leaf_rule="penalty", tolerance=0.0)
BUILDERS = {
    "default build (quadsel build)": dict(DEFAULT_BUILD),
    "default build, always keep the default": dict(DEFAULT_BUILD, keep_default=True),
    "default build, never keep the default": dict(DEFAULT_BUILD, keep_default=False),
    "default build, 1-SE budget rule": dict(DEFAULT_BUILD, budget_rule="1se"),
    "default build, 0.5-SE budget rule": dict(DEFAULT_BUILD, budget_rule="0.5se"),
    "default build, 6 folds (thirds)": dict(DEFAULT_BUILD, budget_rule="thirds"),
    "default build, 8 folds (quarters)": dict(DEFAULT_BUILD, budget_rule="quarters"),
    "default build, budget rescaled": dict(DEFAULT_BUILD, budget_rule="rescaled"),
    "default build, thirds, rescaled": dict(DEFAULT_BUILD, budget_rule="thirds-rescaled"),
    "default without ci ties": dict(MEASURED, max_leaves="auto"),
    "measured, 16 leaves": dict(DEFAULT_BUILD, max_leaves=16),
    "measured, 32 leaves": dict(DEFAULT_BUILD, max_leaves=32),
    "measured exact, ci ties": dict(DEFAULT_BUILD, max_leaves=None),
    "measured exact": dict(MEASURED),
    "measured exact, tolerance 5 %": dict(MEASURED, tolerance=5.0),
    "measured exact, floor": dict(MEASURED, between="floor"),
    "paper exact (quadsel build --paper)": dict(),
    "paper depth 3": dict(max_depth=3),
    "paper depth 3, penalty leaves": dict(max_depth=3, leaf_rule="penalty"),
}


def data_sets():
    sets = {}
    if os.path.isdir(ORFEO):
        for coll in ("bcast", "reduce"):
            files = sorted(glob.glob(os.path.join(ORFEO, f"{coll}_algo*.csv"))) + [os.path.join(ORFEO, f"{coll}_default.csv")]
            sets[f"orfeo-{coll}"] = (build_decision_map(read_measurements(files)), None)
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.csv"))):
        name = os.path.basename(path)[:-4]
        other = os.path.join(ROOT, "examples", "second-run", name + ".csv")
        second = None
        if os.path.exists(other):
            try:
                second = build_decision_map(read_measurements([other]))
            except QuadselError as exc:
                print(f"note: second run skipped: {exc}", file=sys.stderr)
        sets[name] = (build_decision_map(read_measurements([path])), second)
    return sets


def score(selector, dmap, mask=None):
    return summarize(penalty_grid(dmap, choice_on(selector, dmap)), dmap, mask)


def evaluate(make, dmap, second):
    """(all, msg, comm, random, run, leaves) of one builder (`make(train_map) -> selector`) on one data set."""
    full = make(dmap)
    out = {"all": score(full, dmap).mean, "leaves": full.size}
    for name in SPLITS:
        holdout = Holdout(name) if ":" not in name else Holdout("random", 0.25, 0)
        test = split(dmap, holdout)
        out[name.split(":")[0]] = score(make(training_map(dmap, test)), dmap, test).mean
    if second is not None:
        out["run"] = (score(full, second).mean + score(make(second), dmap).mean) / 2
    return out


def main(argv):
    if "--rules" in argv:
        for rule in argv[argv.index("--rules") + 1].split(","):
            BUILDERS[f"default build, budget rule {rule}"] = dict(DEFAULT_BUILD, budget_rule=rule)
    sets = data_sets()
    only = argv[argv.index("--only") + 1].split(",") if "--only" in argv else None
    makers = {name: (lambda d, o=options: QuadtreeSelector.of(build_size_tree(d, **o)))
              for name, options in BUILDERS.items() if only is None or any(o in name for o in only)}
    makers["single best method"] = SingleBest.fit
    columns = ("all", "msg", "comm", "random", "run", "leaves")
    held = {}
    for set_name, (dmap, second) in sets.items():
        print(f"\n## {set_name}: {dmap.shape[0]} comm sizes x {dmap.shape[1]} msg sizes, {len(dmap.methods)} methods"
              + (" (second run available)" if second is not None else ""))
        print("| builder | " + " | ".join(columns) + " |")
        print("|---|" + "---:|" * len(columns))
        rows = {}
        for name, make in makers.items():
            rows[name] = evaluate(make, dmap, second)
        if cart_available() and only is None:
            budget = rows["default build (quadsel build)"]["leaves"]
            rows["CART, the default build's leaf count"] = evaluate(lambda d: CartSelector.fit(d, budget), dmap,
                                                                    second)
            budget = rows["measured, 16 leaves"]["leaves"]
            rows["CART, 16 leaves"] = evaluate(lambda d: CartSelector.fit(d, budget), dmap, second)
        for name, result in rows.items():
            held.setdefault(name, []).extend(result[c] for c in ("msg", "comm", "random", "run") if c in result)
            cells = [("-" if result.get(c) is None else f"{result[c]:.2f}" if c != "leaves" else str(result[c]))
                     for c in columns]
            print(f"| {name} | " + " | ".join(cells) + " |")
    summary(held)
    versus_single(held)
    if only is None:
        import small_grids        # the small-grid cases (issue 31), made from the same data at run time
        print("\n## Small grids (benchmarks/small_grids.py)")
        small_grids.run()


def versus_single(held):
    """Every builder against the single best method, case by case (same order of cases in every row)."""
    single = held.get("single best method")
    if not single:
        return
    print("\n## Cases where a builder loses to the single best method (held-out mean penalty, builder > single)")
    print("| builder | cases lost | of |")
    print("|---|---:|---:|")
    for name, values in held.items():
        if name != "single best method":
            print(f"| {name} | {sum(v > s + 1e-9 for v, s in zip(values, single))} | {len(values)} |")


def summary(held):
    print("\n## Mean held-out penalty over every data set (msg, comm, random and run columns)")
    print("| builder | mean % | cases |")
    print("|---|---:|---:|")
    for name, values in held.items():
        print(f"| {name} | {sum(values) / len(values):.2f} | {len(values)} |")


if __name__ == "__main__":
    main(sys.argv)
