"""Quadtrees whose cuts sit at measured sizes, chosen to minimise the penalty (no padding needed).

Each node still cuts its block once on each axis (NW/NE/SW/SE), but the communicator cut and the message
cut are chosen among the cell boundaries of the decision grid -- the measured sizes and, with the between
rule, the open intervals beside them -- so that the four children, each with its best single method, lose
the least penalty. A cut may sit at the block's edge on one axis: the node then splits two ways on the
other axis. A block one row high cannot be cut across the communicator axis at all, and a decision that
changes along one axis only would otherwise pay three leaves for one change (docs/methodology.md).

Two ways to grow:
  exact / depth- or threshold-limited   every block is cut (best cut first) until it is a leaf under the
                                        paper's constraints; with no constraint, until some method is
                                        (within tolerance) the best at every cell of every leaf;
  leaf budget (`max_leaves`)            best-first: the split that removes the most penalty per added leaf
                                        goes first, each split scored with a look-ahead of one level (its
                                        children's best splits), so that a plateau -- a checkerboard, a lone
                                        column, where no single split helps -- does not stop the growth.
The penalty of a block for a method is the sum over its cells of weight × penalty (decision/grid.py).
"""

import heapq

import numpy as np

from .quadtree import TreeBuilder

EPS = 1e-9
LOOKAHEAD = 16      # single splits looked ahead from (all of them on a plateau)


class BlockCosts:
    """Penalty sums of every method over any block of cells, by 2-D prefix sums (O(K) per block)."""

    def __init__(self, grid):
        penalty = np.nan_to_num(grid.penalty) * grid.weight[:, :, None]
        rows, cols, k = penalty.shape
        self.sums = np.zeros((rows + 1, cols + 1, k))
        self.sums[1:, 1:] = penalty.cumsum(axis=0).cumsum(axis=1)
        onehot = np.zeros((rows, cols, k))
        np.put_along_axis(onehot, grid.best[:, :, None], 1.0, axis=2)
        counted = np.where(grid.weight[:, :, None] > 0, onehot * grid.weight[:, :, None], 0.0)
        self.votes = np.zeros((rows + 1, cols + 1, k))
        self.votes[1:, 1:] = counted.cumsum(axis=0).cumsum(axis=1)
        self.plain = np.zeros((rows + 1, cols + 1, k))          # unweighted votes: blocks with no weight
        self.plain[1:, 1:] = onehot.cumsum(axis=0).cumsum(axis=1)
        self.floor = np.zeros((rows + 1, cols + 1))              # sum of every cell's own least penalty
        self.floor[1:, 1:] = penalty.min(axis=2).cumsum(axis=0).cumsum(axis=1)

    @staticmethod
    def _box(table, r0, r1, c0, c1):
        return table[r1, c1] - table[r0, c1] - table[r1, c0] + table[r0, c0]

    def cost(self, r0, r1, c0, c1):
        """Least penalty sum of one method over the block(s) (vectorised over array bounds)."""
        return self._box(self.sums, r0, r1, c0, c1).min(axis=-1)

    def exact(self, block):
        """True when one method is as good as each cell's own best everywhere in the block."""
        return self.cost(*block) <= self._box(self.floor, *block) + EPS

    def exact_method(self, block):
        """The method of least penalty sum over the block (the exact one when `exact(block)`)."""
        return int(np.argmin(self._box(self.sums, *block)))

    def leaf(self, block, leaf_rule):
        """(method, penalty sum of that method, majority share) of one block."""
        r0, r1, c0, c1 = block
        totals = self._box(self.sums, r0, r1, c0, c1)
        votes = self._box(self.votes, r0, r1, c0, c1)
        if votes.sum() <= EPS:
            votes = self._box(self.plain, r0, r1, c0, c1)
        top = np.flatnonzero(votes >= votes.max() - EPS)
        if leaf_rule == "penalty" and self._box(self.votes, r0, r1, c0, c1).sum() > EPS:
            method = int(np.argmin(totals))
        else:
            method = int(top[np.argmin(totals[top])])       # majority; ties to the least penalty
        return method, float(totals[method]), float(votes.max() / max(votes.sum(), EPS))


def _candidates(block):
    """Every (comm cut, msg cut) of a block, -1 = no cut on that axis; both absent is not a split."""
    r0, r1, c0, c1 = block
    comm = np.concatenate([[-1], np.arange(r0 + 1, r1)])
    msg = np.concatenate([[-1], np.arange(c0 + 1, c1)])
    cc, mm = np.meshgrid(comm, msg, indexing="ij")
    keep = (cc >= 0) | (mm >= 0)
    return cc[keep], mm[keep]


def _children(block, comm_cut, msg_cut):
    """Child blocks of one split, in NW, NE, SW, SE order of the quadrants that exist."""
    r0, r1, c0, c1 = block
    rows = [(r0, comm_cut), (comm_cut, r1)] if comm_cut >= 0 else [(r0, r1)]
    cols = [(c0, msg_cut), (msg_cut, c1)] if msg_cut >= 0 else [(c0, c1)]
    return [(a, b, c, d) for a, b in rows for c, d in cols]


def _split_costs(costs, block, cc, mm):
    """Penalty left after each candidate split (children at their best method) and its number of children."""
    r0, r1, c0, c1 = block
    north_hi = np.where(cc >= 0, cc, r1)
    west_hi = np.where(mm >= 0, mm, c1)
    after = costs.cost(r0, north_hi, c0, west_hi)                        # NW (or the north / west half)
    has_comm, has_msg = cc >= 0, mm >= 0
    sc, sm = np.where(has_comm, cc, r1), np.where(has_msg, mm, c1)
    after = after + np.where(has_msg, costs.cost(r0, north_hi, sm, c1), 0.0)                 # NE
    after = after + np.where(has_comm, costs.cost(sc, r1, c0, west_hi), 0.0)                  # SW
    after = after + np.where(has_comm & has_msg, costs.cost(sc, r1, sm, c1), 0.0)             # SE
    return after, (1 + has_comm) * (1 + has_msg)


def best_split(costs, block):
    """The split leaving the least penalty (ties: fewer children, then the most central cuts), or None."""
    cc, mm = _candidates(block)
    if cc.size == 0:
        return None
    after, n = _split_costs(costs, block, cc, mm)
    r0, r1, c0, c1 = block
    off_centre = np.abs(np.where(cc >= 0, cc, (r0 + r1) / 2) - (r0 + r1) / 2) / max(r1 - r0, 1) + \
        np.abs(np.where(mm >= 0, mm, (c0 + c1) / 2) - (c0 + c1) / 2) / max(c1 - c0, 1)
    i = np.lexsort((off_centre, n, np.round(after, 9)))[0]
    return float(after[i]), int(cc[i]), int(mm[i])


def grow_exact(grid, leaf_rule="penalty", max_depth=None, accuracy_threshold=1.0):
    """Cut every block at its best split until it is a leaf (no penalty left, one cell, the depth limit or
    a majority share >= accuracy_threshold)."""
    costs, builder = BlockCosts(grid), TreeBuilder()
    rows, cols = grid.shape

    def grow(block, depth):
        method, cost, share = costs.leaf(block, leaf_rule)
        exact = costs.exact(block)
        if exact:         # some method is as good as each cell's own best: that one, whatever the leaf rule
            method = costs.exact_method(block)
        node = builder.node(method, depth)
        single = block[1] - block[0] == 1 and block[3] - block[2] == 1
        limited = (max_depth is not None and depth >= max_depth) or \
            (accuracy_threshold < 1.0 and share >= accuracy_threshold)
        if single or limited or exact:
            return node
        _, comm_cut, msg_cut = best_split(costs, block)
        kids = [grow(child, depth + 1) for child in _children(block, comm_cut, msg_cut)]
        builder.split(node, comm_cut, msg_cut, kids)
        return node

    grow((0, rows, 0, cols), 0)
    return builder.tree()


def _one_level(costs, block, budget_left):
    """(gain per added leaf, comm cut, msg cut, added leaves) of the best single split that fits, or None."""
    cc, mm = _candidates(block)
    if cc.size == 0:
        return None
    after, n = _split_costs(costs, block, cc, mm)
    added = n - 1
    ratio = np.where(added <= budget_left, (costs.cost(*block) - after) / added, -np.inf)
    i = int(np.argmax(ratio))
    return None if ratio[i] == -np.inf else (float(ratio[i]), int(cc[i]), int(mm[i]), int(added[i]))


def _gain_per_leaf(costs, block, budget_left):
    """The most useful split of a block that fits the budget: each split is scored by the better of its own
    gain per added leaf and its gain per added leaf together with its children's best splits (two levels),
    so that a plateau -- where no single split helps but two do -- is crossed."""
    cc, mm = _candidates(block)
    if cc.size == 0:
        return None
    here = costs.cost(*block)
    after, n = _split_costs(costs, block, cc, mm)
    added = n - 1
    fits = np.flatnonzero(added <= budget_left)
    if fits.size == 0:
        return None
    one = (here - after[fits]) / added[fits]
    if one.max() > EPS:          # look ahead from the most promising single splits only (the rest rarely win)
        fits = fits[np.argsort(-one, kind="stable")[:LOOKAHEAD]]
    best = None
    for j in fits:
        gain = (here - after[j]) / added[j]
        total_added, left = int(added[j]), 0.0
        for child in _children(block, int(cc[j]), int(mm[j])):
            inner = _one_level(costs, child, budget_left - total_added)
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


def grow_best_first(grid, max_leaves, leaf_rule="penalty", max_depth=None):
    """Best-first growth to at most `max_leaves` leaves (fewer when no split removes any penalty)."""
    costs, builder = BlockCosts(grid), TreeBuilder()
    rows, cols = grid.shape
    root = (0, rows, 0, cols)
    blocks = {builder.node(costs.leaf(root, leaf_rule)[0], 0): root}
    depth = {0: 0}
    leaves, heap = 1, []

    def push(node):
        if max_depth is not None and depth[node] >= max_depth:
            return
        found = _gain_per_leaf(costs, blocks[node], max_leaves - leaves)
        if found is not None and found[0] > EPS:
            heapq.heappush(heap, (-found[0], node, found))

    push(0)
    while heap and leaves < max_leaves:
        _, node, (gain, comm_cut, msg_cut, added) = heapq.heappop(heap)
        if leaves + added > max_leaves:       # the budget shrank since it was scored: score it again
            push(node)
            continue
        kids = []
        for child in _children(blocks[node], comm_cut, msg_cut):
            kid = builder.node(costs.leaf(child, leaf_rule)[0], depth[node] + 1)
            blocks[kid], depth[kid] = child, depth[node] + 1
            kids.append(kid)
        builder.split(node, comm_cut, msg_cut, kids)
        leaves += added
        for kid in kids:
            push(kid)
    return builder.tree()
