"""Which leaf budget to take from the held-out folds' curve (decision/size.py computes the curve).

On a small, noisy grid the curve of held-out penalty against the leaf budget is flat and noisy: its plain
minimum is often a larger tree than the data can support, and it moves from one run to the next. A rule
says how the folds are cut and which budget their curve gives (docs/methodology.md, "The leaf budget"):

  min       the budget with the least mean penalty over the folds (the smaller one of equal means), the
            folds holding out every other size of an axis (4 folds): the default;
  1se       the one-standard-error rule (Breiman et al., CART, 1984): the smallest budget whose mean is within
            one standard error of the minimum's, the standard error being that of the minimum's mean over the
            folds (sd / sqrt(folds));
  0.5se     the same within half a standard error;
  thirds    `min` with folds that hold out every third size of an axis (6 folds: each trains on two thirds
            of the sizes, closer to the full grid);
  quarters  every fourth size (8 folds);
  rescaled  `min`, then the budget scaled from the folds' training grids to the full one: times the measured
            points over the mean training points, to the nearest power of two (the exact tree when the exact
            tree has no more leaves);
  thirds-rescaled  both;
  measured-floor  `min`, then on a small grid (decision/measured_floor.py) the smallest budget, of those the
            folds cannot tell from min's (paired differences within 2 standard errors), within 2 points of the
            least penalty of theirs on the measured points: the default;
  measured-floor-1se, -ties, -1pt   the same with 1 standard error, with exactly equal means only, or within 1
            point; larger-ties, 1se-larger: the budget of least measured penalty among those of exactly equal
            means, or within one standard error (the larger tree on ties); loo, loo-measured-floor: on small
            grids the folds leave one interior size out in turn; measured-floor-every-grid: the floor on every grid;
            thirds-floor: measured-floor with the folds of `thirds` (better on the 14 data sets the rules were
            chosen on, worse on 14 others: benchmarks/selection_rules.py --rules, --fresh).

Measured on every data set the project has (benchmarks/selection.py, benchmarks/small_grids.py): only
`measured-floor` is used by `quadsel build`; the others are kept for that evidence. `choose(per_fold, rule)` is all a fold implementation needs to call.
"""

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np


@dataclass(frozen=True)
class Rule:
    se: float = 0.0          # the smallest budget within this many standard errors of the least mean
    stride: int = 2          # the folds hold out every stride-th size of an axis
    rescale: bool = False    # the budget scaled from the training grids to the full grid
    floor: Optional[float] = None       # points: the measured floor on small grids (decision/measured_floor.py)
    floor_se: Optional[float] = None    # standard errors within which the folds cannot tell budgets apart
    loo: bool = False        # small grids: the folds leave one interior size out in turn
    small_only: bool = True  # the floor and loo on small grids only


RULES = {"min": Rule(), "0.5se": Rule(se=0.5), "1se": Rule(se=1.0), "thirds": Rule(stride=3),
         "quarters": Rule(stride=4), "rescaled": Rule(rescale=True), "thirds-rescaled": Rule(stride=3, rescale=True),
         "measured-floor": Rule(floor=2.0, floor_se=2.0), "measured-floor-1se": Rule(floor=2.0, floor_se=1.0),
         "measured-floor-ties": Rule(floor=2.0), "measured-floor-1pt": Rule(floor=1.0, floor_se=2.0),
         "larger-ties": Rule(floor=0.0), "1se-larger": Rule(floor=0.0, floor_se=1.0), "loo": Rule(loo=True),
         "loo-measured-floor": Rule(loo=True, floor=2.0, floor_se=2.0),
         "measured-floor-every-grid": Rule(floor=2.0, floor_se=2.0, small_only=False),
         "thirds-floor": Rule(stride=3, floor=2.0, floor_se=2.0)}
DEFAULT_RULE = "measured-floor"


def rule_of(name):
    if name not in RULES:
        raise ValueError(f"unknown budget rule {name!r} (choose from {', '.join(RULES)})")
    return RULES[name]


def choose(per_fold, rule=DEFAULT_RULE):
    """(budget, {budget: mean}) from {budget: [held-out penalty of each fold]}, budgets in increasing order
    (None, the exact tree, last)."""
    se_rule = rule_of(rule).se
    means = {b: float(np.mean(v)) for b, v in per_fold.items()}
    best = min(means.values())
    lowest = next(b for b in per_fold if means[b] <= best + 1e-9)
    values = np.asarray(per_fold[lowest], dtype=float)
    se = float(values.std(ddof=1)) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    limit = best + se_rule * se + 1e-9
    return next(b for b in per_fold if means[b] <= limit), means


def rescaled(budget, ratio, more_than):
    """`budget` (chosen on training grids) for a grid `ratio` times larger: the nearest power of two to
    budget * ratio, or None (the exact tree) when the exact tree has no more leaves than that."""
    if budget is None or budget <= 1:
        return budget
    scaled = 1 << max(0, int(round(math.log2(budget * ratio))))
    return scaled if more_than(scaled) else None
