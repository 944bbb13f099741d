"""The look-ahead of the leaf-budget growth (decision/best_first.py): the best single split of any block, cached.

A split is scored by its own gain per added leaf and by its gain together with its children's best single
splits (one level of look-ahead). The same child block comes back as a child of other candidates and of the
node's own children, and the growth with and without a budget in its scores (decision/best_first.py) ask
the same questions: each block's best split (and best two-way split) is computed once per grid.
"""

import numpy as np

from .split import EPS, _children, split_table

LOOKAHEAD = 16      # single splits looked ahead from (all of them on a plateau)


class LookAhead:
    """Best single split of any block of one grid, each block scored once: `best(block)` -> (gain per added
    leaf, comm cut, msg cut, added leaves) or None for a single cell; `two_way(block)` the same among the
    two-way splits only (what fits when one or two leaves are left)."""

    def __init__(self, costs):
        self.costs = costs
        self._best, self._two_way = {}, {}

    def best(self, block):
        if block not in self._best:
            self._score(block)
        return self._best[block]

    def two_way(self, block):
        if block not in self._two_way:
            self._score(block)
        return self._two_way[block]

    def _score(self, block):
        if block[1] - block[0] == 1 and block[3] - block[2] == 1:
            self._best[block] = self._two_way[block] = None
            return
        cc, mm, after, n = split_table(self.costs, block)
        ratio = (self.costs.cost(*block) - after) / (n - 1)
        i = int(np.argmax(ratio))
        self._best[block] = (float(ratio[i]), int(cc[i]), int(mm[i]), int(n[i] - 1))
        ratio = np.where(n == 2, ratio, -np.inf)              # first in split_table's order among equals
        i = int(np.argmax(ratio))
        self._two_way[block] = (float(ratio[i]), int(cc[i]), int(mm[i]), 1)


def gain_per_leaf(costs, ahead, block, budget_left=None):
    """The most useful split of a block, (gain per added leaf, comm cut, msg cut, added leaves), None when
    nothing fits `budget_left` (None: no budget). Each split is scored by the better of its own gain per added
    leaf and its gain per added leaf together with its children's best splits (two levels), so that a plateau
    -- where no single split helps but two do -- is crossed; with a budget, the children's splits must fit
    what is left of it too. A candidate whose two-level gain cannot beat the best found so far (bounded by
    the block's penalty above its cells' own least, over one more leaf) is not looked ahead: the result is
    the same, found sooner."""
    cc, mm, after, n = split_table(costs, block)
    here = costs.cost(*block)
    added = n - 1
    fits = np.arange(added.size) if budget_left is None else np.flatnonzero(added <= budget_left)
    if fits.size == 0:
        return None
    one = (here - after[fits]) / added[fits]
    if one.max() > EPS:          # look ahead from the most promising single splits only (the rest rarely win)
        fits = fits[np.argsort(-one, kind="stable")[:LOOKAHEAD]]
    room = max(here - costs._box(costs.floor, *block), 0.0) * (1 + 1e-9) + 1e-9
    best = None
    for j in fits.tolist():
        gain = (here - after[j]) / added[j]
        if best is not None and max(gain, room / (added[j] + 1)) <= best[0] + EPS:
            continue
        children = _children(block, int(cc[j]), int(mm[j]))
        total_added, left = int(added[j]), 0.0
        for child in children:
            left_over = None if budget_left is None else budget_left - total_added
            inner = ahead.best(child) if left_over is None or left_over >= 3 else \
                ahead.two_way(child) if left_over >= 1 else None
            child_cost = costs.cost(*child)
            if inner is not None and inner[0] > EPS:
                total_added += inner[3]
                left += child_cost - inner[0] * inner[3]
            else:
                left += child_cost
        gain = max(gain, (here - left) / total_added)
        if best is None or gain > best[0] + EPS:
            best = (float(gain), int(cc[j]), int(mm[j]), int(added[j]))
    return best
