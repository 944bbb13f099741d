"""Issue 39: the default build's rules chosen again under the one penalty, with nested validation.

usage: python benchmarks/selection_rules.py [--grid] [--cases SUBSTR,..]      (QUADSEL_SHARED: the shared/ folder)

Every data set of benchmarks/selection_cart.py, its four held-out parity splits (every other message size of each
communicator size, odd and even positions; every other communicator size), scored by selection_cart's own penalty
(the issue's rule). The builds run in this process (build_size_tree on the training map; the C of these
trees answers alike: selection_cart.py scores the chosen ones through their compiled C).

  (default)  the library default as a method: always kept (issue 39), chosen by the folds (before), never;
             outside the measured range: per side by the folds (issue 39), always handed back, always extrapolated;
             then `--max-leaves 16` with least-bad and with floor between sizes, held out and on all points
  --grid     24 rule sets: ties within the noise (ci) or none x gap cells weighing 1 or 0.5 x least-bad or floor
             between sizes x the budget rules measured-floor, min, 1se; then leave-one-data-set-out: for each data
             set the rule set with the least mean held-out penalty on the other data sets is scored on it (the
             choice itself tested on data it did not see)
  --rules A,B  the default build with each budget rule (decision/budget_rule.py) instead of its own, side by side
  --budgets 8,16,32 [--gap-weights 1,0.5,0.25,0.1]  fixed leaf budgets (`--max-leaves N`) built with the gap
             cells (the sizes between measured ones) weighing less in the objective: mean penalty on all points
             (built on them) and held out, over the data sets
  --fresh      score on 14 other data sets instead, none of which chose a rule: the project's repeat sweeps of
             the ompi5 examples (examples/second-run, examples/third-run), eight more random piecewise maps (seeds
             3-10) and the layout model at 4 and 16 ranks per node (benchmarks/synthetic_maps.py)
"""

import argparse
import itertools
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import selection_cart as sc  # noqa: E402

from quadsel.decision import grid as grid_module  # noqa: E402
from quadsel.decision.builder import DEFAULT_BUILD, build_size_tree  # noqa: E402
from quadsel.decision.decision_map import DEFAULT_METHOD, Method, map_from_cube, training_map  # noqa: E402


def dmap_of(cube):
    default = None if np.all(np.isnan(cube.default)) else cube.default
    return map_from_cube(cube.collective, cube.comm, cube.msg, [Method(a, s) for a, s in cube.methods], cube.cost,
                         cube.se, default, (), cube.library, cube.default_se)


def answers(cube, fn, points):
    index = {Method(a, s): k for k, (a, s) in enumerate(cube.methods)}
    chosen = fn.choices(np.array([cube.comm[c] for c, _ in points]), np.array([cube.msg[m] for _, m in points]))
    return [sc.DEFAULT if fn.methods[i] == DEFAULT_METHOD else index.get(fn.methods[i], sc.UNKNOWN)
            for i in chosen.tolist()]


def scores(cubes, variants, splits=sc.HELD_OUT, leaves=None):
    """{(variant, case, split): mean penalty %} of every held-out split (and "all": built and scored on all);
    `leaves` (a dict): the same keys, each tree's leaf count."""
    out = {}
    for cube in cubes:
        full = dmap_of(cube)
        for split, test in sc.splits(cube).items():
            if split not in splits:
                continue
            train = full if split == "all" else training_map(full, ~sc.train_of(cube, split, test))
            points = list(zip(*np.nonzero(test)))
            for name, options in variants.items():
                fn = build_size_tree(train, **options)
                out[name, cube.name, split] = float(sc.penalties(cube, points, answers(cube, fn, points)).mean())
                if leaves is not None:
                    leaves[name, cube.name, split] = fn.tree.n_leaves
    return out


def mean_of(out, name, cases, splits=sc.HELD_OUT):
    return float(np.mean([v for (n, c, s), v in out.items() if n == name and c in cases and s in splits]))


def print_table(out, names, cases, splits=sc.HELD_OUT):
    print("| variant | " + " | ".join(cases) + " | mean |\n|---|" + "---:|" * (len(cases) + 1))
    for name in names:
        cells = [f"{mean_of(out, name, [c], splits):.2f}" for c in cases]
        print(f"| {name} | " + " | ".join(cells) + f" | **{mean_of(out, name, cases, splits):.2f}** |")


def leave_one_out(out, names, cases):
    """For each data set the variant best on the others, scored on it: (nested mean over the splits, choices)."""
    values, chosen = [], {}
    for case in cases:
        best = min(names, key=lambda n: mean_of(out, n, [c for c in cases if c != case]))
        chosen[case] = best
        values += [v for (n, c, _), v in out.items() if n == best and c == case]
    return float(np.mean(values)), chosen


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--grid", action="store_true")
    parser.add_argument("--cases", default="")
    parser.add_argument("--rules", default="", help="budget rules to compare (comma-separated)")
    parser.add_argument("--fresh", action="store_true", help="the 14 data sets no rule was chosen on")
    parser.add_argument("--budgets", default="", help="fixed leaf budgets to build (comma-separated)")
    parser.add_argument("--gap-weights", default="1,0.5,0.25,0.1", help="with --budgets: the gap cells' weights")
    args = parser.parse_args()
    wanted = [c for c in args.cases.split(",") if c]
    makers = sc.fresh_cases() if args.fresh else sc.cases()
    cubes = [cube for cube in (make() for make in makers) if not wanted or any(w in cube.name for w in wanted)]
    cases = [cube.name for cube in cubes]
    base = dict(DEFAULT_BUILD, keep_default="auto", outside="auto")
    if args.budgets:
        print("| leaves | gap weight | all points | held out |\n|---:|---:|---:|---:|")
        for budget in (int(b) for b in args.budgets.split(",")):
            for weight in (float(w) for w in args.gap_weights.split(",")):
                grid_module.GAP_WEIGHT = weight
                out = scores(cubes, {"x": dict(base, max_leaves=budget)}, ("all",) + sc.HELD_OUT)
                print(f"| {budget} | {weight:g} | {mean_of(out, 'x', cases, ('all',)):.2f} | "
                      f"{mean_of(out, 'x', cases):.2f} |", flush=True)
        grid_module.GAP_WEIGHT = 1.0
        return
    if args.rules:
        variants = {f"budget rule {rule}": dict(base, budget_rule=rule) for rule in args.rules.split(",")}
        leaves = {}
        out = scores(cubes, variants, leaves=leaves)
        print_table(out, list(variants), cases)
        print("\nThe splits where they differ by more than 1 point: held-out penalty % (leaves)\n")
        for case in cases:
            for split in sc.HELD_OUT:
                values = [out.get((n, case, split)) for n in variants]
                if None not in values and max(values) - min(values) > 1.0:
                    print(f"- {case} {split}: " + ", ".join(f"{out[n, case, split]:.2f} ({leaves[n, case, split]})"
                                                          for n in variants))
        return
    if not args.grid:
        variants = {"default build (issue 39)": base, "the default: folds decide (before)": dict(base, keep_default=None),
                    "the default: never": dict(base, keep_default=False),
                    "outside: always handed back (before)": dict(base, outside="default"),
                    "outside: always extrapolated": dict(base, outside="extrapolate"),
                    "the measured floor on every grid": dict(base, budget_rule="measured-floor-every-grid")}
        out = scores(cubes, variants)
        print_table(out, list(variants), cases)
        sixteen = {"16 leaves": dict(base, max_leaves=16), "16 leaves, --between floor": dict(base, max_leaves=16,
                                                                                               between="floor")}
        out = scores(cubes, sixteen, ("all",) + sc.HELD_OUT)
        print("\nThe same held out, and on all measured points (built on them), of `--max-leaves 16`:\n")
        print_table(out, list(sixteen), cases)
        print()
        print_table(out, list(sixteen), cases, ("all",))
        return
    out, names = {}, []
    for tol, weight, between, rule in itertools.product(("ci", 0.0), (1.0, 0.5), ("least-bad", "floor"),
                                                        ("measured-floor", "min", "1se")):
        name = f"ties {tol}, gap weight {weight:g}, {between}, {rule}"
        grid_module.GAP_WEIGHT = weight
        out.update(scores(cubes, {name: dict(base, tolerance=tol, between=between, budget_rule=rule)}))
        names.append(name)
        print(f"{mean_of(out, name, cases):7.3f}  {name}", file=sys.stderr, flush=True)
    grid_module.GAP_WEIGHT = 1.0
    ranked = sorted(names, key=lambda n: mean_of(out, n, cases))
    print("| rule set | mean held-out % |\n|---|---:|")
    for name in ranked:
        print(f"| {name} | {mean_of(out, name, cases):.2f} |")
    nested, chosen = leave_one_out(out, names, cases)
    print(f"\nleave one data set out: nested mean {nested:.2f} % over {len(cases)} data sets; chosen: "
          + "; ".join(f"{n} ({list(chosen.values()).count(n)}x)" for n in dict.fromkeys(chosen.values())))


if __name__ == "__main__":
    main()
