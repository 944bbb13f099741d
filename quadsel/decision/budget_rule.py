"""Which leaf budget to take from the held-out folds' curve (decision/size.py computes the curve).

On a small, noisy grid the curve of held-out penalty against the leaf budget is flat and noisy: its plain
minimum is often a larger tree than the data can support, and it moves from one run to the next. The
rules (docs/methodology.md, "The leaf budget"):

  min   the budget with the least mean penalty over the folds (the smaller one of equal means);
  1se   the one-standard-error rule (Breiman et al., CART, 1984): the smallest budget whose mean is within
        one standard error of the minimum's, the standard error being that of the minimum's mean over the
        folds (sd / sqrt(folds));
  0.5se the same within half a standard error.

`choose(per_fold, rule)` is all a fold implementation needs to call.
"""

import math

import numpy as np

RULES = {"min": 0.0, "0.5se": 0.5, "1se": 1.0}
DEFAULT_RULE = "min"


def choose(per_fold, rule=DEFAULT_RULE):
    """(budget, {budget: mean}) from {budget: [held-out penalty of each fold]}, budgets in increasing order
    (None, the exact tree, last)."""
    if rule not in RULES:
        raise ValueError(f"unknown budget rule {rule!r} (choose from {', '.join(RULES)})")
    means = {b: float(np.mean(v)) for b, v in per_fold.items()}
    best = min(means.values())
    lowest = next(b for b in per_fold if means[b] <= best + 1e-9)
    values = np.asarray(per_fold[lowest], dtype=float)
    se = float(values.std(ddof=1)) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    limit = best + RULES[rule] * se + 1e-9
    return next(b for b in per_fold if means[b] <= limit), means
