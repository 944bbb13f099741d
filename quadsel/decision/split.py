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
                                        (within tolerance) the best at every cell of every leaf (here);
  leaf budget (`max_leaves`)            best-first, the split that removes the most penalty per added leaf
                                        first, with a look-ahead of one level (decision/best_first.py,
                                        decision/lookahead.py).
The penalty of a block for a method is the sum over its cells of weight × penalty (decision/grid.py); every
candidate cut of a block is scored at once from the prefix sums (O(cells of the block x methods)).
"""

import numpy as np

from .quadtree import TreeBuilder

EPS = 1e-9


class BlockCosts:
    """Penalty sums of every method over any block of cells, by 2-D prefix sums (O(K) per block)."""

    def __init__(self, grid, cells=True):
        """cells=False: only the sums are kept, not the grid's penalty cube (`undominated` needs it)."""
        rows, cols, k = grid.penalty.shape
        self.sums = np.zeros((rows + 1, cols + 1, k))           # [row, col, method]: a block's sums are contiguous
        inner = self.sums[1:, 1:]
        np.multiply(grid.penalty, grid.weight[:, :, None], out=inner)       # weight x penalty, in place
        if not np.isfinite(inner).all():
            inner[...] = np.nan_to_num(grid.penalty) * grid.weight[:, :, None]
        self.floor = np.zeros((rows + 1, cols + 1))              # sum of every cell's own least penalty
        self.floor[1:, 1:] = inner.min(axis=2).cumsum(axis=0).cumsum(axis=1)
        np.cumsum(inner, axis=0, out=inner)
        np.cumsum(inner, axis=1, out=inner)
        self.by_method = np.moveaxis(self.sums, 2, 0)             # the same numbers, [method, row, col] (split_after)
        del inner
        self._best, self._weight, self._penalty = grid.best, grid.weight, grid.penalty if cells else None
        self.weights = np.zeros((rows + 1, cols + 1))           # sum of the cells' weights
        self.weights[1:, 1:] = np.where(grid.weight > 0, grid.weight, 0.0).cumsum(axis=0).cumsum(axis=1)
        self._votes = self._plain = None

    def _vote_sums(self, weight):
        """Prefix sums over the cells of `weight` counted for each cell's best method ((rows + 1, cols + 1, K))."""
        rows, cols = weight.shape
        votes = np.zeros((rows + 1, cols + 1, self.by_method.shape[0]))
        np.put_along_axis(votes[1:, 1:], self._best[:, :, None], weight[:, :, None], axis=2)
        np.cumsum(votes[1:, 1:], axis=0, out=votes[1:, 1:])
        np.cumsum(votes[1:, 1:], axis=1, out=votes[1:, 1:])
        return votes

    @property
    def votes(self):
        """Each cell's weight counted for its best method (the majority rule and the share), made when first
        needed: (rows + 1) x (cols + 1) x methods, as large as the penalty sums."""
        if self._votes is None:
            self._votes = self._vote_sums(np.where(self._weight > 0, self._weight, 0.0))
        return self._votes

    @property
    def plain(self):
        """Unweighted votes (blocks with no weight), made when first needed."""
        if self._plain is None:
            self._plain = self._vote_sums(np.ones(self._weight.shape))
        return self._plain

    @staticmethod
    def _box(table, r0, r1, c0, c1):
        return table[r1, c1] - table[r0, c1] - table[r1, c0] + table[r0, c0]

    def cost(self, r0, r1, c0, c1):
        """Least penalty sum of one method over the block(s) (vectorised over array bounds)."""
        return self._box(self.sums, r0, r1, c0, c1).min(axis=-1)

    def undominated(self, block, among=None, dominators=8):
        """The methods of the grid less those dominated in the block -- no better than one other method (a best
        method of up to `dominators` of the block's cells) at any cell: a dominated method's penalty sum over any
        part of the block is no less than its dominator's, so the least over the methods is the least over these
        (weights are the same for every method of a cell, so the grid's penalties order them as the sums do).
        `among`: the undominated methods of a block around this one (the others are dominated here too)."""
        r0, r1, c0, c1 = block
        cells = self._penalty[r0:r1, c0:c1]
        among = np.arange(cells.shape[2]) if among is None else among
        cells = cells[:, :, among]
        alive = np.ones(among.size, dtype=bool)
        best, seen = np.unique(self._best[r0:r1, c0:c1], return_counts=True)
        for m in best[np.argsort(-seen, kind="stable")][:dominators].tolist():
            at = np.searchsorted(among, m)
            if at < among.size and among[at] == m and alive[at]:
                beaten = (cells >= cells[:, :, at:at + 1]).all(axis=(0, 1))
                beaten[at] = False
                alive &= ~beaten
        return among[alive]

    def exact(self, block):
        """True when one method is as good as each cell's own best everywhere in the block."""
        return self.cost(*block) <= self._box(self.floor, *block) + EPS

    def exact_method(self, block):
        """The method of least penalty sum over the block (the exact one when `exact(block)`)."""
        return int(np.argmin(self._box(self.sums, *block)))

    def method(self, block, leaf_rule):
        """The method of one block (leaf()'s first, without the votes where the penalty rule needs none)."""
        if leaf_rule == "penalty" and self._box(self.weights, *block) > EPS:
            return int(np.argmin(self._box(self.sums, *block)))
        return self.leaf(block, leaf_rule)[0]

    def methods(self, blocks, leaf_rule):
        """method(block, leaf_rule) of many blocks ((r0, r1, c0, c1) arrays): the penalty rule's weighed blocks
        in one array operation, the others one by one."""
        r0, r1, c0, c1 = (np.asarray(b, dtype=np.int64) for b in blocks)
        out = np.empty(r0.size, dtype=np.int64)
        one = np.ones(r0.size, dtype=bool)
        if leaf_rule == "penalty":
            weighed = self._box(self.weights, r0, r1, c0, c1) > EPS
            out[weighed] = np.argmin(self._box(self.sums, r0[weighed], r1[weighed], c0[weighed], c1[weighed]),
                                     axis=1)
            one = ~weighed
        for i in np.flatnonzero(one).tolist():
            out[i] = self.method((int(r0[i]), int(r1[i]), int(c0[i]), int(c1[i])), leaf_rule)
        return out

    def leaf(self, block, leaf_rule):
        """(method, penalty sum of that method, majority share) of one block."""
        r0, r1, c0, c1 = block
        totals = self._box(self.sums, r0, r1, c0, c1)
        votes = self._box(self.votes, r0, r1, c0, c1)
        if votes.sum() <= EPS:
            votes = self._box(self.plain, r0, r1, c0, c1)
        top = np.flatnonzero(votes >= votes.max() - EPS)
        if leaf_rule == "penalty" and self._box(self.weights, r0, r1, c0, c1) > EPS:
            method = int(np.argmin(totals))
        else:
            method = int(top[np.argmin(totals[top])])       # majority; ties to the least penalty
        return method, float(totals[method]), float(votes.max() / max(votes.sum(), EPS))


def _min(array):
    return array.min(axis=-1)


def split_table(costs, block, four_way=True):
    """Every split of a block at once: (comm cuts, msg cuts, penalty left after it, children), in the order
    comm cut (-1 first) then msg cut (-1 first), the split with neither cut left out. four_way=False: the
    four-way splits are left inf (not computed: a budget with no room for them)."""
    r0, r1, c0, c1 = block
    after = split_after(costs, block, four_way)
    nr, nc = after.shape[0] - 1, after.shape[1] - 1
    comm = np.arange(r0, r1)
    comm[0] = -1
    msg = np.arange(c0, c1)
    msg[0] = -1
    cc = np.repeat(comm, nc + 1)[1:]
    mm = np.empty((nr + 1, nc + 1), dtype=msg.dtype)
    mm[:] = msg
    mm = mm.ravel()[1:]
    n = np.full((nr + 1, nc + 1), 4)
    n[0, :] = n[:, 0] = 2
    return cc, mm, after.ravel()[1:], n.ravel()[1:]


def two_way_after(costs, block):
    """(penalty left after every message-axis cut, after every communicator-axis cut) of a block: the two-way
    splits only, O((rows + cols) x methods). Each half is a band's sums up to the cut less the block's edge
    (lookahead._two_way_gains' arithmetic, to the last bit; split_after's own two-way row may differ from it in
    the last bits)."""
    r0, r1, c0, c1 = block
    S = costs.by_method
    d00, d01, d10, d11 = (S[:, r, c, None] for r, c in ((r0, c0), (r0, c1), (r1, c0), (r1, c1)))
    band = S[:, r1, c0 + 1:c1] - S[:, r0, c0 + 1:c1]                # rows r0..r1, columns up to each cut
    along_msg = (band - (d10 - d00)).min(axis=0) + ((d11 - d01) - band).min(axis=0)
    band = S[:, r0 + 1:r1, c1] - S[:, r0 + 1:r1, c0]                # columns c0..c1, rows up to each cut
    along_comm = (band - (d01 - d00)).min(axis=0) + ((d11 - d10) - band).min(axis=0)
    return along_msg, along_comm


CHUNK = 1 << 17     # elements of one (cuts x methods) temporary of split_after: small enough to stay in cache


def split_after(costs, block, four_way=True):
    """(rows, cols) penalty left after every split of a block: [i, j] cuts the communicator axis at r0 + i and
    the message axis at c0 + j (0: no cut on that axis; [0, 0] = inf, not a split).

    Each child's penalty sum is read from the 2-D prefix sums by the same four-term formula as
    BlockCosts.cost, over slices of the method-major table (the least over the methods is then a reduction
    over the first axis), in chunks of rows computed in place."""
    r0, r1, c0, c1 = block
    S = costs.by_method                                         # (K, rows + 1, cols + 1)
    nr, nc = r1 - r0 - 1, c1 - c0 - 1
    top, bottom = S[:, r0, c0 + 1:c1], S[:, r1, c0 + 1:c1]      # (K, nc) at the message cuts
    left, right = S[:, r0 + 1:r1, c0], S[:, r0 + 1:r1, c1]      # (K, nr) at the communicator cuts
    d00, d01, d10, d11 = (S[:, r, c, None] for r, c in ((r0, c0), (r0, c1), (r1, c0), (r1, c1)))
    after = np.empty((nr + 1, nc + 1))
    after[0, 0] = np.inf
    after[0, 1:] = (bottom - top - d10 + d00).min(axis=0) + (d11 - d01 - bottom + top).min(axis=0)     # west + east
    after[1:, 0] = (right - d01 - left + d00).min(axis=0) + (d11 - right - d10 + left).min(axis=0)     # north + south
    if nr == 0 or nc == 0 or not four_way:
        after[1:, 1:] = np.inf
        return after
    k = S.shape[0]
    step = max(1, CHUNK // (nc * k))                            # rows per chunk
    work = np.empty((k, min(step, nr), nc))
    top, bottom = top[:, None, :], bottom[:, None, :]
    d00, d01, d10, d11 = d00[:, None], d01[:, None], d10[:, None], d11[:, None]
    for i in range(0, nr, step):
        a = S[:, r0 + 1 + i:min(r1, r0 + 1 + i + step), c0 + 1:c1]   # (K, rows, nc) corner at both cuts
        lf, rt = left[:, i:i + step, None], right[:, i:i + step, None]
        w = work[:, :a.shape[1]]
        np.subtract(a, top, out=w)                              # NW: a - top - lf + d00, as BlockCosts.cost
        np.subtract(w, lf, out=w)
        np.add(w, d00, out=w)
        quarters = w.min(axis=0)
        np.subtract(rt, d01, out=w)                             # NE: rt - d01 - a + top
        np.subtract(w, a, out=w)
        np.add(w, top, out=w)
        quarters += w.min(axis=0)
        np.subtract(bottom, a, out=w)                           # SW: bottom - a - d10 + lf
        np.subtract(w, d10, out=w)
        np.add(w, lf, out=w)
        quarters += w.min(axis=0)
        np.subtract(d11, rt, out=w)                             # SE: d11 - rt - bottom + a
        np.subtract(w, bottom, out=w)
        np.add(w, a, out=w)
        quarters += w.min(axis=0)
        after[1 + i:1 + i + step, 1:] = quarters
    return after


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


def grow_exact(grid, leaf_rule="penalty", max_depth=None, accuracy_threshold=1.0, costs=None):
    """Cut every block at its best split until it is a leaf (no penalty left, one cell, the depth limit or
    a majority share >= accuracy_threshold). costs: the grid's BlockCosts, when already made."""
    costs, builder = costs or BlockCosts(grid), TreeBuilder()
    pending = {}                                       # parent -> its children in NW..SE order, as they come
    order = []
    for block, depth, parent, slot, exact, leaf, cuts in _exact_walk(costs, grid.shape, leaf_rule, max_depth,
                                                                     accuracy_threshold):
        method = costs.exact_method(block) if exact else leaf[0] if leaf else costs.method(block, leaf_rule)
        node = builder.node(method, depth)
        if parent is not None:
            pending[parent][slot] = node
        if cuts is not None:
            pending[node] = [None] * len(_children(block, *cuts))
            order.append((node, *cuts))
    for node, comm_cut, msg_cut in order:
        builder.split(node, comm_cut, msg_cut, pending[node])
    return builder.tree()


def _exact_walk(costs, shape, leaf_rule, max_depth, accuracy_threshold):
    """grow_exact's nodes, depth-first with the children in NW..SE order (as recursion): (block, depth, parent
    node, slot among its children, exact?, BlockCosts.leaf where the threshold needed it or None, (comm cut, msg
    cut) or None for a leaf),
    a node numbered by its place in this order. A generator: a walk stopped early costs only what it saw."""
    rows, cols = shape
    stack = [((0, rows, 0, cols), 0, None, None)]      # (block, depth, parent, slot among its children)
    number = 0
    while stack:
        block, depth, parent, slot = stack.pop()
        exact = costs.exact(block)   # some method is as good as each cell's own best: that one, whatever the rule
        leaf = costs.leaf(block, leaf_rule) if not exact and accuracy_threshold < 1.0 else None
        single = block[1] - block[0] == 1 and block[3] - block[2] == 1
        limited = (max_depth is not None and depth >= max_depth) or (leaf is not None and leaf[2] >= accuracy_threshold)
        cuts = None
        if not (single or limited or exact):
            cuts = best_split(costs, block)[1:]
            kids = _children(block, *cuts)
            stack.extend((kid, depth + 1, number, i) for i, kid in reversed(list(enumerate(kids))))
        yield block, depth, parent, slot, exact, leaf, cuts
        number += 1


class ExactLeaves:
    """The leaf count of grow_exact's tree, walked only as far as asked: `more_than(n)`."""

    def __init__(self, grid, leaf_rule="penalty", max_depth=None, accuracy_threshold=1.0, costs=None):
        self._walk = _exact_walk(costs or BlockCosts(grid), grid.shape, leaf_rule, max_depth, accuracy_threshold)
        self.counted, self.done = 0, False

    def more_than(self, n):
        """True when the exact tree has more than `n` leaves."""
        while self.counted <= n and not self.done:
            node = next(self._walk, None)
            if node is None:
                self.done = True
            elif node[-1] is None:
                self.counted += 1
        return self.counted > n
