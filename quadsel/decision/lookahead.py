"""The look-ahead of the leaf-budget growth (decision/best_first.py): each split scored with its children's
best splits, cached.

A split is scored by its own gain per added leaf and by its gain together with its children's best splits:
one level of look-ahead, which crosses the plateaus where no single split helps (a lone column or row, a
checkerboard). Two depths of it, by the size of the grid (docs/methodology.md, "Two depths of look-ahead"):

  full      (grids of up to FULL_CELLS cells) each child's best split of any kind, scored on its area (rows x
            columns): 16 candidates cost 16 times the block's cells per node;
  two-way   (larger grids) each child's best two-way split, scored on its edges (rows + columns) -- half a
            level, enough for a lone column or row -- a chunk of candidates at a time in array operations.
            The full look-ahead was most of the build's time on large sweeps; on the synthetic sweeps' true
            times its trees are 0.01-0.03 points better.

On a plateau (no split gains on its own) the look-ahead starts from the two-way splits only, rows + columns of
them, not from the rows x columns four-way ones: a four-way split's own partition is a two-way split and the same
cut in both its children, which that look-ahead already scores (each child free to cut where it gains most).
Starting from every four-way split made a map that one method wins everywhere -- a plateau at nearly every
node, the noise flipping a few points -- the build's slowest case (points^1.5-1.9: benchmarks/flat_maps.py);
the trees of every data set of benchmarks/selection_cart.py were the same either way.

The same child block comes back as a child of other candidates and of the node's own children, so each
block's best split is computed once per grid.
"""

import numpy as np

from .split import EPS, _children, split_after, split_table, two_way_after

FULL_CELLS = 4096   # grids of up to this many cells get the full look-ahead
LOOKAHEAD = 16      # single splits looked ahead from (on a plateau: every two-way split)
CHUNK = 64          # candidates looked ahead from at once (two-way; a plateau has all of a block's two-way splits)
PRUNE_FROM = 4096   # cells x methods from which a block's methods are pruned anew (BlockCosts.undominated)
NO_ROOM = EPS / 4   # a block this close to its cells' own least penalty: no split of it can gain more than EPS


class LookAhead:
    """The best split of any block of one grid, each block scored once: `best(block)` -> (gain per added leaf,
    comm cut or -1, msg cut or -1, added leaves), None for a single cell; `two_way(block)` the same among the
    two-way splits; `cost(block)` its least penalty and room; `gains` the unbudgeted best split of each block
    grown (gain_per_leaf). `full`: the full look-ahead (default: by the grid's size). `roomy`: a budget this
    large holds back no split nor look-ahead -- 3 leaves for the split, 3 (full) or 1 (two-way) for each of
    its 4 children's."""

    def __init__(self, costs, full=None):
        self.costs = costs
        rows, cols = costs.floor.shape
        self.full = (rows - 1) * (cols - 1) <= FULL_CELLS if full is None else bool(full)
        self.roomy = 15 if self.full else 7
        self._best, self._two_way, self._cost, self.gains = {}, {}, {}, {}
        self._methods, self.within = {}, {}     # block -> its undominated methods; child block -> its parent's
        self.two_way_known = {}                 # block -> its best two-way gain, where a look-ahead saw it

    def bound(self, block):
        """A bound of every score of the block (gain_per_leaf, with or without a budget): its best single split
        gains at most its best two-way split or a third of its room (a four-way split adds three leaves), a
        look-ahead at most half its room (two more leaves at least); its room alone where the best two-way
        split is not known yet."""
        room = self.cost(block)[1]
        two = self.two_way_known.get(block)
        bound = room if two is None else max(two, room / 2)
        return bound * (1 + 1e-9) + 1e-9            # sums of many terms: the bound holds up to rounding

    def methods(self, block):
        """The methods not dominated in the block (BlockCosts.undominated), among those of the block it was cut
        from (`within`, when known)."""
        if block not in self._methods:
            among = self._methods.get(self.within.get(block))
            if among is not None and (block[1] - block[0]) * (block[3] - block[2]) * among.size < PRUNE_FROM:
                self._methods[block] = among     # a small block: pruning again costs more than it saves
            else:
                self._methods[block] = self.costs.undominated(block, among)
        return self._methods[block]

    def cost(self, block):
        """(least penalty sum of one method over the block, that minus its cells' own least: the most any
        split of it can remove)."""
        if block not in self._cost:
            here = self.costs.cost(*block)
            self._cost[block] = (here, here - self.costs._box(self.costs.floor, *block))
        return self._cost[block]

    def best(self, block):
        if block not in self._best:
            self._score(block)
        return self._best[block]

    def _score(self, block):
        if block[1] - block[0] == 1 and block[3] - block[2] == 1:
            self._best[block] = self._two_way[block] = None
            return
        after = split_after(self.costs, block)                  # [0, 0]: no split (inf), never the best
        one_axis = np.zeros(after.shape, dtype=bool)
        one_axis[0, :] = one_axis[:, 0] = True
        ratio = (self.cost(block)[0] - after) / np.where(one_axis, 1, 3)
        for table, score in ((self._best, ratio), (self._two_way, np.where(one_axis, ratio, -np.inf))):
            row, col = divmod(int(np.argmax(score)), after.shape[1])    # the first of equals, as split_table's order
            table[block] = (float(score[row, col]), block[0] + row if row else -1, block[2] + col if col else -1,
                            1 if row == 0 or col == 0 else 3)

    def two_way(self, block):
        if block not in self._two_way:
            self._two_way[block] = self._score_two_way(block)
        return self._two_way[block]

    def _score_two_way(self, block):
        """The first of the best two-way splits in split_table's order: message cuts, then communicator cuts."""
        if block[1] - block[0] == 1 and block[3] - block[2] == 1:
            return None
        along_msg, along_comm = two_way_after(self.costs, block)
        score = self.cost(block)[0] - np.concatenate([along_msg, along_comm])
        i = int(np.argmax(score))
        if i < along_msg.size:
            return (float(score[i]), -1, block[2] + 1 + i, 1)
        return (float(score[i]), block[0] + 1 + i - along_msg.size, -1, 1)


def gain_per_leaf(costs, ahead, block, budget_left=None):
    """The most useful split of a block, (gain per added leaf, comm cut, msg cut, added leaves), None when
    nothing fits `budget_left` (None: no budget). Each split is scored by the better of its own gain per added
    leaf and its gain per added leaf together with its children's best splits (two-way only, unless the
    look-ahead is full and the budget leaves room), so that a plateau
    -- where no single split helps but two do -- is crossed; with a budget, the children's splits must fit
    what is left of it too. A candidate whose two-level gain cannot beat the best found so far is not looked
    ahead, nor a child that no split can improve: the result is the same, found sooner. The bounds: each
    child's split removes at most its room (its penalty above its cells' own least) for at least one more
    leaf, so the two-level gain is at most the best of (own gain + the largest m rooms) / (own leaves + m),
    and at most the block's room over one more leaf."""
    if budget_left is None or budget_left >= ahead.roomy:      # the same with any such budget: scored once
        if block not in ahead.gains:
            ahead.gains[block] = _gain_per_leaf(costs, ahead, block, None)
        return ahead.gains[block]
    key = (block, budget_left)
    if key not in ahead.gains:
        ahead.gains[key] = _gain_per_leaf(costs, ahead, block, budget_left)
    return ahead.gains[key]


def _gain_per_leaf(costs, ahead, block, budget_left, batch=True):
    """gain_per_leaf, not cached; batch=False: the two-way look-ahead candidate by candidate (the reference
    the batched one is held to)."""
    here, room = ahead.cost(block)
    if room <= NO_ROOM:
        return None
    if not batch or ahead.full:
        return _scored(costs, ahead, block, here, room, budget_left, batch)
    part = _Part(costs, block, ahead.methods(block))     # over the methods that can be least there, locally
    found = _scored(part, ahead, (0, block[1] - block[0], 0, block[3] - block[2]), here, room, budget_left, True)
    return found and (found[0], found[1] + block[0] if found[1] >= 0 else -1,
                      found[2] + block[2] if found[2] >= 0 else -1, found[3])


def _scored(costs, ahead, block, here, room, budget_left, batch):
    """The body of _gain_per_leaf: `costs` the grid's BlockCosts or a block's _Part (then `block` is in its
    coordinates), `here` and `room` the block's LookAhead.cost."""
    cc, mm, after, n = split_table(costs, block, budget_left is None or budget_left >= 3)
    added = n - 1
    fits = np.arange(added.size) if budget_left is None else np.flatnonzero(added <= budget_left)
    if fits.size == 0:
        return None
    one = (here - after[fits]) / added[fits]
    room = max(room, 0.0) * (1 + 1e-9) + 1e-9
    top = int(np.argmax(one))
    if one[top] > room / 2 + 1e-9:   # no look-ahead can beat it (at most the room over two leaves): it wins
        j = fits[top]
        return (float(one[top]), int(cc[j]), int(mm[j]), int(added[j]))
    if one[top] > EPS:           # look ahead from the most promising single splits only (the rest rarely win)
        fits = fits[np.argsort(-one, kind="stable")[:LOOKAHEAD]]
    else:                        # a plateau: from the two-way splits only (module docstring)
        fits = fits[added[fits] == 1]
    best = None
    if batch and not ahead.full:      # the loop below, a chunk of candidates at once
        for start in range(0, fits.size, CHUNK):
            part = fits[start:start + CHUNK]
            if best is not None:
                part = part[np.maximum((here - after[part]) / added[part], room / (added[part] + 1)) > best[0] + EPS]
            if part.size:
                best = _looked_ahead(costs, block, here, cc[part], mm[part], after[part], added[part], best,
                                     budget_left, ahead.two_way_known if isinstance(costs, _Part) else None)
        return best
    for j in fits.tolist():
        gain = (here - after[j]) / added[j]
        if best is not None and max(gain, room / (added[j] + 1)) <= best[0] + EPS:
            continue
        children = _children(block, int(cc[j]), int(mm[j]))
        known = [ahead.cost(child) for child in children]
        if best is not None and max(gain, _mediant(here - after[j], int(added[j]), [r for _, r in known])) <= \
                best[0] + EPS:
            continue
        total_added, left = int(added[j]), 0.0
        for child, (child_cost, child_room) in zip(children, known):
            left_over = None if budget_left is None else budget_left - total_added
            if child_room <= NO_ROOM or (left_over is not None and left_over < 1):
                inner = None
            elif ahead.full and (left_over is None or left_over >= 3):
                inner = ahead.best(child)
            else:
                inner = ahead.two_way(child)
            if inner is not None and inner[0] > EPS:
                total_added += inner[3]
                left += child_cost - inner[0] * inner[3]
            else:
                left += child_cost
        gain = max(gain, (here - left) / total_added)
        if best is None or gain > best[0] + EPS:
            best = (float(gain), int(cc[j]), int(mm[j]), int(added[j]))
    return best


class _Part:
    """The prefix sums of one block's cells over the methods not dominated there (BlockCosts.undominated), in
    the block's own coordinates: each block's least penalty within it is the same, from a smaller table."""

    def __init__(self, costs, block, methods):
        a, b, c, d = block
        self.origin = (a, c)
        self.by_method = costs.by_method[methods, a:b + 1, c:d + 1]      # a copy, method-major
        self.floor = costs.floor[a:b + 1, c:d + 1]


_SOUTH, _EAST = np.array([False, False, True, True]), np.array([False, True, False, True])    # NW, NE, SW, SE


def _looked_ahead(costs, block, here, cc, mm, after, added, best=None, budget_left=None, known=None):
    """What the loop of _gain_per_leaf finds among some candidate splits (two-way look-ahead), all at once: every
    child of every candidate with its cost, room and best two-way split in a few array operations, each
    candidate's penalty left summed over its children in their order (the same arithmetic, so the same
    numbers), then the candidates in their order, the first clearly better than `best` (the best so far) kept.
    `known`: a dict that learns the best two-way gain of the children of a split chosen here (LookAhead.bound)."""
    r0, r1, c0, c1 = block
    rows, cols = cc[:, None] >= 0, mm[:, None] >= 0
    # the quadrants NW, NE, SW, SE of each candidate (as _children), those that exist
    a = np.where(_SOUTH, cc[:, None], r0)
    b = np.where(_SOUTH, r1, np.where(rows, cc[:, None], r1))
    c = np.where(_EAST, mm[:, None], c0)
    d = np.where(_EAST, c1, np.where(cols, mm[:, None], c1))
    exists = (rows | ~_SOUTH) & (cols | ~_EAST)
    child_cost = np.zeros(exists.shape)
    inner = np.full(exists.shape, -np.inf)
    ca, cb, cc_, cd = a[exists], b[exists], c[exists], d[exists]
    cost, room, gains = _child_gains(costs, ca, cb, cc_, cd)
    child_cost[exists] = cost
    gains[room <= NO_ROOM] = -np.inf
    inner[exists] = gains
    if budget_left is None:          # every child with a gainful split splits; its penalty left, in order
        split = inner > EPS
        total_added = added + split.sum(axis=1)
        left = np.where(split, child_cost - inner, child_cost).sum(axis=1)    # 4 terms: added in order
    else:
        total_added, left = added.astype(np.int64), np.zeros(cc.size)
        for k in range(4):           # the children in order: a split of each while the budget leaves room
            split = (inner[:, k] > EPS) & (budget_left - total_added >= 1)
            total_added = total_added + split
            left = left + np.where(split, child_cost[:, k] - inner[:, k], child_cost[:, k])
    gain = np.maximum((here - after) / added, (here - left) / total_added)
    chosen = None
    for j, g in enumerate(gain.tolist()):
        if best is None or g > best[0] + EPS:
            best, chosen = (g, int(cc[j]), int(mm[j]), int(added[j])), j
    if known is not None and chosen is not None:     # the best two-way gain of the chosen split's children
        r, c_ = costs.origin
        for k in np.flatnonzero(exists[chosen]).tolist():
            known[(int(a[chosen, k]) + r, int(b[chosen, k]) + r, int(c[chosen, k]) + c_, int(d[chosen, k]) + c_)] = \
                float(inner[chosen, k])
    return best


def _box_costs(costs, a, b, c, d):
    """(least penalty sum of one method, that minus the cells' own least) of blocks given as arrays, as
    LookAhead.cost computes them one by one."""
    S, F = costs.by_method, costs.floor
    here = (S[:, b, d] - S[:, a, d] - S[:, b, c] + S[:, a, c]).min(axis=0)
    return here, here - (F[b, d] - F[a, d] - F[b, c] + F[a, c])


def _child_gains(costs, a, b, c, d):
    """(_box_costs, the gain of the best two-way split of each block, -inf for a single cell) of blocks given as
    arrays: each half a band's sums up to the cut less the block's edge, as split.two_way_after (the same numbers to
    the last bit). One pass over every cut of every block, message cuts then communicator cuts, each block's
    corners gathered once from the flat method-major table (the least over the methods a reduction over the first
    axis: few methods, many cuts)."""
    S = costs.by_method
    width = S.shape[2]
    flat = S.reshape(S.shape[0], -1)
    n = a.size
    corners = np.take(flat, np.concatenate([a * width + c, a * width + d, b * width + c, b * width + d]), axis=1)
    c00, c01, c10, c11 = corners[:, :n], corners[:, n:2 * n], corners[:, 2 * n:3 * n], corners[:, 3 * n:]
    here = (c11 - c01 - c10 + c00).min(axis=0)
    F = costs.floor
    room = here - (F[b, d] - F[a, d] - F[b, c] + F[a, c])
    best = np.full(n, -np.inf)
    count = np.maximum(_pairs(d - c - 1, b - a - 1), 0)     # 2i: block i's message cuts, 2i + 1: its communicator
    total = int(count.sum())                                 # cuts
    if total == 0:
        return here, room, best
    # the bands, one per cut: a message cut j the block's rows up to column j (S[b, j] - S[a, j]), a communicator
    # cut r its columns up to row r (S[r, d] - S[r, c]); each less the block's near and far edge
    first = np.cumsum(count) - count                  # each segment's first cut in the flat arrays
    offset = (np.arange(total) - np.repeat(first, count)) * np.repeat(_pairs(1, width, n), count)
    upper = _pairs(b * width + c + 1, (a + 1) * width + d)
    lower = _pairs(a * width + c + 1, (a + 1) * width + c)
    band = np.take(flat, np.repeat(upper, count) + offset, axis=1) - np.take(flat, np.repeat(lower, count) + offset,
                                                                             axis=1)
    near = np.repeat(_pairs(c10 - c00, c01 - c00), count, axis=1)
    far = np.repeat(_pairs(c11 - c01, c11 - c10), count, axis=1)
    halves = (band - near).min(axis=0) + (far - band).min(axis=0)
    cuts = count[0::2] + count[1::2]
    gains = np.repeat(here, cuts) - halves
    some = cuts > 0
    best[some] = np.maximum.reduceat(gains, first[0::2][some])
    return here, room, best


def _pairs(even, odd, n=None):
    """`even` and `odd` interleaved along the last axis (n pairs of scalars when `n` is given)."""
    even, odd = np.asarray(even), np.asarray(odd)
    shape = (n,) if n is not None else even.shape
    out = np.empty(shape[:-1] + (2 * shape[-1],), dtype=np.result_type(even, odd))
    out[..., 0::2] = even
    out[..., 1::2] = odd
    return out


def _mediant(gain, added, rooms):
    """The most (gain + the m largest rooms) / (added + m) can be, with room for rounding."""
    bound, total = gain / added, gain
    for m, child_room in enumerate(sorted(rooms, reverse=True), 1):
        total += max(child_room, 0.0)
        bound = max(bound, total / (added + m))
    return bound * (1 + 1e-9) + 1e-9
