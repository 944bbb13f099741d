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
                                        A split's score does not depend on the budget, so one growth
                                        (`Growth`) gives the tree of every budget: its splits in their
                                        order, each kept when it fits (decision/size.py uses that).
The penalty of a block for a method is the sum over its cells of weight × penalty (decision/grid.py); every
candidate cut of a block is scored at once from the prefix sums (O(cells of the block x methods)).
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


def _min(array):
    return array.min(axis=-1)


def split_table(costs, block):
    """Every split of a block at once: (comm cuts, msg cuts, penalty left after it, children), in the order
    comm cut (-1 first) then msg cut (-1 first), the split with neither cut left out.

    Each child's penalty sum is read from the 2-D prefix sums by the same four-term formula as
    BlockCosts.cost, over slices of the table (no per-candidate gathers)."""
    r0, r1, c0, c1 = block
    S = costs.sums
    nr, nc = r1 - r0 - 1, c1 - c0 - 1
    top, bottom = S[r0, c0 + 1:c1], S[r1, c0 + 1:c1]            # (nc, K) at the message cuts
    left, right = S[r0 + 1:r1, c0], S[r0 + 1:r1, c1]            # (nr, K) at the communicator cuts
    d00, d01, d10, d11 = S[r0, c0], S[r0, c1], S[r1, c0], S[r1, c1]
    after = np.empty((nr + 1, nc + 1))
    after[0, 0] = np.inf
    after[0, 1:] = _min(bottom - top - d10 + d00) + _min(d11 - d01 - bottom + top)        # west + east
    after[1:, 0] = _min(right - d01 - left + d00) + _min(d11 - right - d10 + left)        # north + south
    step = max(1, (1 << 21) // max(1, nc * S.shape[2]))       # rows per chunk: bounded temporaries
    for i in range(0, nr, step):
        rows = slice(r0 + 1 + i, min(r1, r0 + 1 + i + step))
        a = S[rows, c0 + 1:c1]                                   # (rows, nc, K) corner at both cuts
        lf, rt = left[i:i + step, None], right[i:i + step, None]
        after[1 + i:1 + i + step, 1:] = ((_min(a - top - lf + d00) + _min(rt - d01 - a + top))
                                         + _min(bottom - a - d10 + lf)) + _min(d11 - rt - bottom + a)
    comm = np.arange(r0, r1)
    comm[0] = -1
    msg = np.arange(c0, c1)
    msg[0] = -1
    cc = np.broadcast_to(comm[:, None], (nr + 1, nc + 1)).ravel()[1:]
    mm = np.broadcast_to(msg, (nr + 1, nc + 1)).ravel()[1:]
    n = np.full((nr + 1, nc + 1), 4)
    n[0, :] = n[:, 0] = 2
    return cc, mm, after.ravel()[1:], n.ravel()[1:]


def _children(block, comm_cut, msg_cut):
    """Child blocks of one split, in NW, NE, SW, SE order of the quadrants that exist."""
    r0, r1, c0, c1 = block
    rows = [(r0, comm_cut), (comm_cut, r1)] if comm_cut >= 0 else [(r0, r1)]
    cols = [(c0, msg_cut), (msg_cut, c1)] if msg_cut >= 0 else [(c0, c1)]
    return [(a, b, c, d) for a, b in rows for c, d in cols]


def best_split(costs, block):
    """The split leaving the least penalty (ties: fewer children, then the most central cuts), or None."""
    r0, r1, c0, c1 = block
    if r1 - r0 == 1 and c1 - c0 == 1:
        return None
    cc, mm, after, n = split_table(costs, block)
    off_centre = np.abs(np.where(cc >= 0, cc, (r0 + r1) / 2) - (r0 + r1) / 2) / max(r1 - r0, 1) + \
        np.abs(np.where(mm >= 0, mm, (c0 + c1) / 2) - (c0 + c1) / 2) / max(c1 - c0, 1)
    i = np.lexsort((off_centre, n, np.round(after, 9)))[0]
    return float(after[i]), int(cc[i]), int(mm[i])


def grow_exact(grid, leaf_rule="penalty", max_depth=None, accuracy_threshold=1.0):
    """Cut every block at its best split until it is a leaf (no penalty left, one cell, the depth limit or
    a majority share >= accuracy_threshold)."""
    costs, builder = BlockCosts(grid), TreeBuilder()
    rows, cols = grid.shape
    stack = [((0, rows, 0, cols), 0, None, None)]      # (block, depth, parent, slot among its children)
    pending = {}                                       # parent -> its children in NW..SE order, as they come
    order = []
    while stack:                                        # depth-first, children in NW..SE order (as recursion)
        block, depth, parent, slot = stack.pop()
        method, _, share = costs.leaf(block, leaf_rule)
        exact = costs.exact(block)
        if exact:         # some method is as good as each cell's own best: that one, whatever the leaf rule
            method = costs.exact_method(block)
        node = builder.node(method, depth)
        if parent is not None:
            pending[parent][slot] = node
        single = block[1] - block[0] == 1 and block[3] - block[2] == 1
        limited = (max_depth is not None and depth >= max_depth) or \
            (accuracy_threshold < 1.0 and share >= accuracy_threshold)
        if single or limited or exact:
            continue
        _, comm_cut, msg_cut = best_split(costs, block)
        kids = _children(block, comm_cut, msg_cut)
        pending[node] = [None] * len(kids)
        order.append((node, comm_cut, msg_cut))
        stack.extend((kid, depth + 1, node, i) for i, kid in reversed(list(enumerate(kids))))
    for node, comm_cut, msg_cut in order:
        builder.split(node, comm_cut, msg_cut, pending[node])
    return builder.tree()


class Growth:
    """One best-first growth and the log of its splits, from which the tree of any leaf budget is read.

    The split that removes the most penalty per added leaf goes first (ties: the block nearest the top-left
    corner, so that the order never depends on node numbering); its score is the better of its own gain per
    added leaf and its gain together with its children's best single splits (a look-ahead of one level,
    LOOKAHEAD candidates, every candidate on a plateau). Scores do not depend on the budget: the tree of a
    budget B is the log's splits in their order, each kept when its parent is in the tree and it fits in B
    -- exactly what growing with the budget B would give. `max_leaves` stops the growth once that many
    leaves are reached (the log then serves every budget up to it).
    """

    def __init__(self, grid, leaf_rule="penalty", max_depth=None, max_leaves=None):
        self.costs = costs = BlockCosts(grid)
        self.leaf_rule = leaf_rule
        self._level = {}                                         # block -> its best single split (cache)
        rows, cols = grid.shape
        root = (0, rows, 0, cols)
        self.method, self.depth, self.splits = [costs.leaf(root, leaf_rule)[0]], [0], []
        blocks, heap, leaves = [root], [], 1

        def push(node):
            if max_depth is not None and self.depth[node] >= max_depth:
                return
            found = self._gain_per_leaf(blocks[node])
            if found is not None and found[0] > EPS:
                heapq.heappush(heap, (-found[0], blocks[node], node, found))

        push(0)
        while heap and (max_leaves is None or leaves < max_leaves):
            _, block, node, (gain, comm_cut, msg_cut, added, alt) = heapq.heappop(heap)
            kids = None
            if max_leaves is None or leaves + added <= max_leaves:
                kids = []
                for child in _children(block, comm_cut, msg_cut):
                    kids.append(len(blocks))
                    blocks.append(child)
                    self.method.append(costs.leaf(child, leaf_rule)[0])
                    self.depth.append(self.depth[node] + 1)
                leaves += added
            elif alt is not None:           # one leaf left: the best two-way split, its halves stay leaves
                leaves += 1
            self.splits.append((node, comm_cut, msg_cut, kids, alt))
            for kid in kids or ():
                push(kid)
        self._level = None

    def tree(self, max_leaves=None):
        """The tree of a leaf budget (None: the whole growth; at most the growth's own `max_leaves`)."""
        builder = TreeBuilder()
        ids = {0: builder.node(self.method[0], 0)}
        leaves = 1
        for node, comm_cut, msg_cut, kids, alt in self.splits:
            if node not in ids:
                continue
            if kids is not None and (max_leaves is None or leaves + len(kids) - 1 <= max_leaves):
                for kid in kids:
                    ids[kid] = builder.node(self.method[kid], self.depth[kid])
                builder.split(ids[node], comm_cut, msg_cut, [ids[kid] for kid in kids])
                leaves += len(kids) - 1
            elif alt is not None and (max_leaves is None or leaves < max_leaves):
                halves = [builder.node(m, self.depth[node] + 1) for m in alt[2]]
                builder.split(ids[node], alt[0], alt[1], halves)
                leaves += 1
        return builder.tree()

    def _one_level(self, block):
        """(gain per added leaf, comm cut, msg cut, added leaves) of a block's best single split, or None."""
        if block not in self._level:
            found = None
            if block[1] - block[0] > 1 or block[3] - block[2] > 1:
                cc, mm, after, n = split_table(self.costs, block)
                ratio = (self.costs.cost(*block) - after) / (n - 1)
                i = int(np.argmax(ratio))
                found = (float(ratio[i]), int(cc[i]), int(mm[i]), int(n[i] - 1))
            self._level[block] = found
        return self._level[block]

    def _gain_per_leaf(self, block):
        """The most useful split of a block: each split is scored by the better of its own gain per added leaf
        and its gain per added leaf together with its children's best splits (two levels), so that a plateau
        -- where no single split helps but two do -- is crossed. A candidate whose two-level gain cannot beat
        the best found so far (bounded by the block's penalty above its cells' own least, over one more
        leaf) is not looked ahead: the result is the same, found sooner."""
        if block[1] - block[0] == 1 and block[3] - block[2] == 1:
            return None
        costs = self.costs
        cc, mm, after, n = split_table(costs, block)
        here = costs.cost(*block)
        added = n - 1
        one = (here - after) / added
        fits = np.arange(one.size)
        if one.max() > EPS:          # look ahead from the most promising single splits only (the rest rarely win)
            fits = fits[np.argsort(-one, kind="stable")[:LOOKAHEAD]]
        room = max(here - costs._box(costs.floor, *block), 0.0) * (1 + 1e-9) + 1e-9
        best, alt = None, None
        two_way = np.flatnonzero(added == 1)
        if two_way.size and one[two_way].max() > EPS:     # what a budget with one leaf left takes instead
            k = int(two_way[np.argmax(one[two_way])])
            alt = (int(cc[k]), int(mm[k]), [costs.leaf(child, self.leaf_rule)[0]
                                            for child in _children(block, int(cc[k]), int(mm[k]))])
        for j in fits:
            gain = float(one[j])
            if best is not None and max(gain, room / (added[j] + 1)) <= best[0] + EPS:
                continue
            total_added, left = int(added[j]), 0.0
            for child in _children(block, int(cc[j]), int(mm[j])):
                inner = self._one_level(child)
                child_cost = costs.cost(*child)
                if inner is not None and inner[0] > EPS:
                    total_added += inner[3]
                    left += child_cost - inner[0] * inner[3]
                else:
                    left += child_cost
            gain = max(gain, (here - left) / total_added)
            if best is None or gain > best[0] + EPS:
                best = (float(gain), int(cc[j]), int(mm[j]), int(added[j]))
        return best + (alt,)


def _budget_gain(costs, block, budget_left):
    """The best split of a block that fits `budget_left` more leaves, scored as Growth scores it but with the
    look-ahead held to the budget too (None when nothing fits)."""
    cc, mm, after, n = split_table(costs, block)
    here = costs.cost(*block)
    added = n - 1
    fits = np.flatnonzero(added <= budget_left)
    if fits.size == 0:
        return None
    one = (here - after[fits]) / added[fits]
    if one.max() > EPS:
        fits = fits[np.argsort(-one, kind="stable")[:LOOKAHEAD]]
    best = None
    for j in fits:
        gain = (here - after[j]) / added[j]
        total_added, left = int(added[j]), 0.0
        for child in _children(block, int(cc[j]), int(mm[j])):
            inner = None
            if child[1] - child[0] > 1 or child[3] - child[2] > 1:
                c2, m2, a2, n2 = split_table(costs, child)
                ratio = np.where(n2 - 1 <= budget_left - total_added, (costs.cost(*child) - a2) / (n2 - 1), -np.inf)
                i = int(np.argmax(ratio))
                inner = None if ratio[i] == -np.inf else (float(ratio[i]), int(n2[i] - 1))
            child_cost = costs.cost(*child)
            if inner is not None and inner[0] > EPS:
                total_added += inner[1]
                left += child_cost - inner[0] * inner[1]
            else:
                left += child_cost
        gain = max(gain, (here - left) / total_added)
        if best is None or gain > best[0] + EPS:
            best = (float(gain), int(cc[j]), int(mm[j]), int(added[j]))
    return best


def grow_best_first(grid, max_leaves, leaf_rule="penalty", max_depth=None):
    """Best-first growth to at most `max_leaves` leaves (fewer when no split removes any penalty), every split
    scored within the budget left (the tree `quadsel build` deploys; the folds read theirs from one Growth)."""
    costs, builder = BlockCosts(grid), TreeBuilder()
    rows, cols = grid.shape
    root = (0, rows, 0, cols)
    blocks = {builder.node(costs.leaf(root, leaf_rule)[0], 0): root}
    depth = {0: 0}
    leaves, heap = 1, []

    def push(node):
        block = blocks[node]
        if (max_depth is not None and depth[node] >= max_depth) or (block[1] - block[0] == 1 and block[3] - block[2] == 1):
            return
        found = _budget_gain(costs, block, max_leaves - leaves)
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
