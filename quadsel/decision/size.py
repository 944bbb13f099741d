"""Choosing the tree size from the data (`max_leaves="auto"`): the leaf budget that holds up on unseen sizes.

A tree that reproduces every measured point also reproduces its noise, and a tree that is too small misses
real changes of the best method. The budget is chosen the way it will be used -- for sizes the tree has
not seen: four folds each hold out every other message size (odd, then even positions) or every other
communicator size, trees of every candidate budget are built on the rest, and each is scored by its mean
penalty at the held-out points. The budget with the least mean over the folds is chosen, the smaller one
of equal means. docs/methodology.md records the evidence.
"""

import numpy as np


def folds(dmap):
    """(C, M) masks of the held-out points of each fold (only axes with 3 or more sizes are halved)."""
    out = []
    measured = dmap.measured
    for axis, n in ((1, dmap.shape[1]), (0, dmap.shape[0])):
        if n < 3:
            continue
        for start in (1, 0):
            mask = np.zeros(dmap.shape, dtype=bool)
            index = [slice(None), slice(None)]
            index[axis] = slice(start, None, 2)
            mask[tuple(index)] = True
            mask &= measured
            if mask.any() and (measured & ~mask).any():
                out.append(mask)
    return out


def held_out_penalty(dmap, fn, test, cube):
    """Mean penalty (%) of a tree built on part of `dmap` at the held-out points `test` (`cube`: dmap's
    decision_map.penalty_cube)."""
    rows, cols = np.nonzero(test)
    index = {m: k for k, m in enumerate(dmap.methods)}
    to_full = np.array([index[m] for m in fn.methods], dtype=np.int64)
    chosen = fn.choices(dmap.comm_sizes[rows], dmap.msg_sizes[cols])
    values = cube[rows, cols, to_full[chosen]]
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else 0.0


def candidate_budgets(exact_leaves):
    """1, 2, 4, ... below the exact tree's leaf count, then the exact tree (None)."""
    budgets, b = [], 1
    while b < exact_leaves:
        budgets.append(b)
        b *= 2
    return budgets + [None]


def pick_budget(scores):
    """The choice rule: the leaf budget taken from the held-out scores {budget: [mean penalty % of each
    fold]} (budgets increasing, None = the exact tree, last). Today: the least mean over the folds, the
    smaller budget of equal means. Replace this function to change the rule (e.g. a one-standard-error
    rule); the folds and the trees stay as they are."""
    means = {b: float(np.mean(v)) for b, v in scores.items()}
    best = min(means.values())
    return next(b for b in scores if means[b] <= best + 1e-9)


def fold_scores(dmap, trees, budgets):
    """{budget: [held-out mean penalty of each fold]}: `trees(train_map, budgets)` gives the decision
    function of every budget of one training map (from one best-first growth, decision/split.py)."""
    from .decision_map import penalty_cube, training_map
    cube = penalty_cube(dmap)
    scores = {b: [] for b in budgets}
    for test in folds(dmap):
        train = training_map(dmap, test)
        for budget, fn in zip(budgets, trees(train, budgets)):
            scores[budget].append(held_out_penalty(dmap, fn, test, cube))
    return scores


def choose_budget(dmap, trees, exact_leaves):
    """(budget or None for the exact tree, {budget: mean held-out penalty}) for `trees(dmap, budgets)`."""
    budgets = candidate_budgets(exact_leaves)
    if not folds(dmap) or len(budgets) == 1:
        return None, {}
    scores = fold_scores(dmap, trees, budgets)
    return pick_budget(scores), {b: float(np.mean(v)) for b, v in scores.items()}
