"""Does a tree built on one run of a machine hold up on another run? Every pair of runs the project has.

usage: python benchmarks/run_to_run.py

The pairs: every example with a second run (examples/X.csv and examples/second-run/X.csv: 8 ranks on the
2-core VM, oversubscribed) and the 2-rank sweeps (examples/two-ranks/X.csv and examples/two-ranks/second-run/
X.csv: 2 ranks on 2 cores, not oversubscribed, one communicator size). For each pair, each builder is built on
run 1 and scored on run 2, and built on run 2 and scored on run 1 (mean penalty %, both directions and their
mean, the *run* column of benchmarks/selection.py):
  - the default build, then the same with the leaf budget chosen by 1-SE and with ties within a fixed
    tolerance instead of the noise (--tolerance 5, 10, 20, 40);
  - every fixed leaf budget (1, 2, 4, ... 64 and the exact tree; the default build's other options, the
    library default not kept): what any rule that takes the budget from one run's folds can reach;
  - the single best method of the run built on.
docs/methodology.md ("The leaf budget") records the output.
"""

import glob
import os
import sys

from quadsel.decision.decision_function import DEFAULT_BUILD, build_decision_function
from quadsel.decision.decision_map import build_decision_map
from quadsel.evaluate.comparators import QuadtreeSelector, SingleBest, choice_on
from quadsel.evaluate.penalty import penalty_grid, summarize
from quadsel.ingest import read_measurements

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ("examples", os.path.join("examples", "two-ranks"))


def pairs():
    """{name: (run 1 map, run 2 map)} of every sweep with a second run."""
    out = {}
    for folder in FOLDERS:
        for path in sorted(glob.glob(os.path.join(ROOT, folder, "*.csv"))):
            other = os.path.join(os.path.dirname(path), "second-run", os.path.basename(path))
            if os.path.exists(other):
                name = os.path.relpath(path, os.path.join(ROOT, "examples"))[:-4]
                out[name] = tuple(build_decision_map(read_measurements([p])) for p in (path, other))
    return out


def builders():
    tree = lambda **options: (lambda d: QuadtreeSelector.of(build_decision_function(d, **dict(DEFAULT_BUILD, **options))))  # noqa: E731,E501
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
    for name, (one, two) in pairs().items():
        print(f"\n## {name}: {one.shape[0]} comm sizes x {one.shape[1]} msg sizes, {len(one.methods)} methods")
        print("| builder | leaves (run 1 / run 2) | run 1 -> run 2 | run 2 -> run 1 | run |")
        print("|---|---|---:|---:|---:|")
        for label, make in makers.items():
            first, second = make(one), make(two)
            there, back = mean_penalty(first, two), mean_penalty(second, one)
            print(f"| {label} | {first.size} / {second.size} | {there:.2f} | {back:.2f} | {(there + back) / 2:.2f} |")


if __name__ == "__main__":
    main() if len(sys.argv) == 1 else sys.exit(__doc__.split("\n\n")[1])
