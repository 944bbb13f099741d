"""Does a tree built on one run of a machine hold up on another run? Every set of runs the project has.

usage: python benchmarks/run_to_run.py

The runs: every example with a second run (examples/X.csv, examples/second-run/X.csv and, where there is
one, examples/third-run/X.csv: 8 ranks on the 2-core VM, oversubscribed) and the 2-rank sweeps
(examples/two-ranks/X.csv and examples/two-ranks/second-run/X.csv: 2 ranks on 2 cores, not oversubscribed,
one communicator size). For runs 1 and 2 of each, each builder is built on run 1 and scored on run 2, and
built on run 2 and scored on run 1 (mean penalty %, both directions and their mean, the *run* column of
benchmarks/selection.py):
  - the default build, then the same with the leaf budget chosen by 1-SE and with ties within a fixed
    tolerance instead of the noise (--tolerance 5, 10, 20, 40);
  - every fixed leaf budget (1, 2, 4, ... 64 and the exact tree; the default build's other options, the
    library default not kept): what any rule that takes the budget from one run's folds can reach;
  - the single best method of the run built on.
With three runs, each run is also held out in turn and the default build and the single best method are built
on the other two pooled (`quadsel build RUN_A RUN_B`: repeats pooled by ingest/aggregate.py) and on each of
them alone. docs/methodology.md ("The leaf budget", "Ties shape, times label") records the output.
"""

import glob
import os
import sys

from quadsel.decision.builder import DEFAULT_BUILD, build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.evaluate.comparators import QuadtreeSelector, SingleBest, choice_on
from quadsel.evaluate.penalty import penalty_grid, summarize
from quadsel.ingest import read_measurements

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ("examples", os.path.join("examples", "two-ranks"))
LATER = ("second-run", "third-run")


def runs():
    """{name: [path of run 1, run 2, ...]} of every sweep with a second run."""
    out = {}
    for folder in FOLDERS:
        for path in sorted(glob.glob(os.path.join(ROOT, folder, "*.csv"))):
            later = [os.path.join(os.path.dirname(path), run, os.path.basename(path)) for run in LATER]
            later = [p for p in later if os.path.exists(p)]
            if later:
                out[os.path.relpath(path, os.path.join(ROOT, "examples"))[:-4]] = [path] + later
    return out


def builders():
    tree = lambda **options: (lambda d: QuadtreeSelector.of(build_size_tree(d, **dict(DEFAULT_BUILD, **options))))  # noqa: E731,E501
    out = {"default build (quadsel build)": tree(), "default build, 1-SE budget rule": tree(budget_rule="1se")}
    for tolerance in (5.0, 10.0, 20.0, 40.0):
        out[f"default build, tolerance {tolerance:g} %"] = tree(tolerance=tolerance)
    for budget in (1, 2, 4, 8, 16, 32, 64, None):
        out["exact tree" if budget is None else f"{budget} leaves" if budget > 1 else "1 leaf"] = \
            tree(max_leaves=budget, keep_default=False)
    out["single best method"] = SingleBest.fit
    return out


def mean_penalty(selector, dmap):
    return summarize(penalty_grid(dmap, choice_on(selector, dmap)), dmap).mean


def main():
    makers = builders()
    found = runs()
    for name, paths in found.items():
        one, two = (build_decision_map(read_measurements([p])) for p in paths[:2])
        print(f"\n## {name}: {one.shape[0]} comm sizes x {one.shape[1]} msg sizes, {len(one.methods)} methods")
        print("| builder | leaves (run 1 / run 2) | run 1 -> run 2 | run 2 -> run 1 | run |")
        print("|---|---|---:|---:|---:|")
        for label, make in makers.items():
            first, second = make(one), make(two)
            there, back = mean_penalty(first, two), mean_penalty(second, one)
            print(f"| {label} | {first.size} / {second.size} | {there:.2f} | {back:.2f} | {(there + back) / 2:.2f} |")
    for name, paths in found.items():
        if len(paths) >= 3:
            three_runs(name, paths, makers)


def three_runs(name, paths, makers):
    """Each run held out in turn: the default build and the single best method built on the other runs pooled,
    and on each of them alone (the mean over them)."""
    maps = [build_decision_map(read_measurements([p])) for p in paths]
    print(f"\n## {name}: each of {len(paths)} runs held out, built on the others pooled or on one of them")
    print("| held out | default build, pooled (leaves) | single best, pooled | default build, one run | "
          "single best, one run |")
    print("|---|---:|---:|---:|---:|")
    tree, single = makers["default build (quadsel build)"], makers["single best method"]
    means = []
    for k, test in enumerate(maps):
        others = [p for i, p in enumerate(paths) if i != k]
        pooled = build_decision_map(read_measurements(others))
        fitted = tree(pooled)
        alone = [m for i, m in enumerate(maps) if i != k]
        row = [mean_penalty(fitted, test), mean_penalty(single(pooled), test),
               sum(mean_penalty(tree(m), test) for m in alone) / len(alone),
               sum(mean_penalty(single(m), test) for m in alone) / len(alone)]
        means.append(row)
        print(f"| run {k + 1} | {row[0]:.2f} ({fitted.size}) | {row[1]:.2f} | {row[2]:.2f} | {row[3]:.2f} |")
    print("| mean | " + " | ".join(f"{sum(r[i] for r in means) / len(means):.2f}" for i in range(4)) + " |")


if __name__ == "__main__":
    main() if len(sys.argv) == 1 else sys.exit(__doc__.split("\n\n")[1])
