"""The paper's quadtree (§3, §3.1): pad the grid to 2^k × 2^k, split every block at its midpoint.

The decision grid is padded by replicating rows and columns (decision/padding.py); a block becomes a leaf
when one method covers at least `accuracy_threshold` of its cells (1.0: the exact tree), at `max_depth`
(root = depth 0), or when it is one cell. Its method (`leaf_rule`):
  majority — the paper's: the most frequent method over the block's padded cells; ties go to the method
             with the least weighted penalty, then to the lowest index;
  penalty  — the method with the least penalty over the block, each grid cell weighing its weight in total
             however many padded copies it has; a block with no weight takes the majority.
A query reads each cell at its first padded copy. The padded tree is then written as the quadtree of
decision/quadtree.py over the grid's own cells: a node's cut is where its midpoint falls among the first
copies, quadrants that hold only padding copies are dropped, and a node left with one child is replaced
by it. The paper's own statistics of the padded tree (its leaves, nodes and depths, Tables 1-2) are
returned beside it.

The builds grow the exact tree a level at a time (`exact_padded`) and cut the constrained tree from it
(`constrained`): the midpoints do not depend on the constraints, so a sweep of constraints (`quadsel report`)
grows it once. `build_padded` grows one tree block by block, as the paper describes it: the reference the
tests hold the other two to.
"""

import numpy as np

from .padding import first_copy, pad, pad_index, padded_size
from .quadtree import LEAF, Quadtree

KEYS = ("children", "method", "depth", "row", "col", "size", "share")


class _Padding:
    """The padded grid: its best method per cell, each cell's weight shared among its copies, and the leaf rule."""

    def __init__(self, grid, pad_mode, leaf_rule):
        self.grid, self.leaf_rule, self.side = grid, leaf_rule, padded_size(*grid.shape)
        self.row_map, self.col_map = pad_index(grid.shape[0], self.side, pad_mode), pad_index(grid.shape[1],
                                                                                            self.side, pad_mode)
        self.cells = pad(grid.best, self.row_map, self.col_map)
        copies = np.outer(np.bincount(self.row_map)[self.row_map], np.bincount(self.col_map)[self.col_map])
        self.weight = pad(grid.weight, self.row_map, self.col_map) / copies
        self.n_methods = grid.penalty.shape[2]

    def least_penalty(self, candidates, r, c, s):
        """The candidate with the least weighted penalty over the block; None when the block has no weight."""
        rows, cols = self.row_map[r:r + s], self.col_map[c:c + s]
        # the block, then its candidates: the layout (and so the sums' rounding) of indexing a padded copy
        block = np.nan_to_num(self.grid.penalty[np.ix_(rows, cols)][:, :, candidates].reshape(-1, len(candidates)))
        w = self.weight[r:r + s, c:c + s].reshape(-1, 1)
        if w.sum() <= 0:
            return None
        return int(candidates[int(np.argmin((block * w).sum(axis=0)))])

    def method(self, top, r, c, s):
        """The leaf method of a block whose most frequent methods are `top` (ties, penalty rule: least_penalty)."""
        if self.leaf_rule == "penalty":
            chosen = self.least_penalty(np.arange(self.n_methods), r, c, s)
        elif len(top) > 1:
            chosen = self.least_penalty(top, r, c, s)
        else:
            return int(top[0])
        return int(top[0]) if chosen is None else chosen

    def counts(self, rows, cols, s):
        """(blocks, methods) method counts of the s x s blocks at (rows, cols), in chunks of about 1M cells."""
        out = np.empty((len(rows), self.n_methods), dtype=np.int32)
        step = max(1, (1 << 20) // (s * s + self.n_methods))
        for lo in range(0, len(rows), step):
            r, c = rows[lo:lo + step, None] + np.arange(s), cols[lo:lo + step, None] + np.arange(s)
            ids = self.cells[r[:, :, None], c[:, None, :]] + np.arange(len(r))[:, None, None] * self.n_methods
            out[lo:lo + len(r)] = np.bincount(ids.ravel(), minlength=len(r) * self.n_methods).reshape(len(r), -1)
        return out


def build_padded(grid, pad_mode="spread", max_depth=None, accuracy_threshold=1.0, leaf_rule="majority"):
    """The paper's padded tree of a DecisionGrid: dict of arrays (children, method, depth, row, col, size, and
    share: the majority method's share of the block) plus the padding maps. Nodes are numbered in preorder."""
    padding = _Padding(grid, pad_mode, leaf_rule)
    nodes = {key: [] for key in KEYS}

    def grow(r, c, s, d):
        node = len(nodes["method"])
        counts = np.bincount(padding.cells[r:r + s, c:c + s].ravel(), minlength=padding.n_methods)
        share = counts.max() / (s * s)
        winner = padding.method(np.flatnonzero(counts == counts.max()), r, c, s)
        for key, value in zip(KEYS, ([LEAF] * 4, winner, d, r, c, s, share)):
            nodes[key].append(value)
        if s == 1 or share >= accuracy_threshold or (max_depth is not None and d >= max_depth):
            return node
        h = s // 2
        nodes["children"][node] = [grow(r, c, h, d + 1), grow(r, c + h, h, d + 1), grow(r + h, c, h, d + 1),
                                   grow(r + h, c + h, h, d + 1)]
        return node

    grow(0, 0, padding.side, 0)
    out = {key: np.asarray(values, dtype=np.float64 if key == "share" else np.int64) for key, values in nodes.items()}
    out["children"] = out["children"].reshape(-1, 4)
    out["row_map"], out["col_map"] = padding.row_map, padding.col_map
    return out


def exact_padded(grid, pad_mode="spread", leaf_rule="majority"):
    """`build_padded(grid, pad_mode, leaf_rule=leaf_rule)` (the exact tree), grown a level at a time: every block
    of a level counted at once; only ties (and the penalty rule) look at a block's penalties one by one."""
    padding = _Padding(grid, pad_mode, leaf_rule)
    rows, cols, s = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), padding.side
    levels = []                # per level: rows, cols, size, methods, shares, which blocks split
    while len(rows):
        if s == 1:                         # one cell: its own method, alone
            method, share, tops = padding.cells[rows, cols], np.ones(len(rows)), None
        else:
            counts = padding.counts(rows, cols, s)
            share = counts.max(axis=1) / (s * s)
            method, tops = np.argmax(counts, axis=1), counts == counts.max(axis=1)[:, None]
        looked = np.arange(len(rows)) if leaf_rule == "penalty" else \
            np.flatnonzero(tops.sum(axis=1) > 1) if tops is not None else []
        for i in looked:
            top = method[i:i + 1] if tops is None else np.flatnonzero(tops[i])
            method[i] = padding.method(top, rows[i], cols[i], s)
        split = (share < 1.0) & (s > 1)
        levels.append((rows, cols, s, method, share, split))
        h = s // 2
        rows = (rows[split, None] + np.array([0, 0, h, h])).ravel()
        cols = (cols[split, None] + np.array([0, h, 0, h])).ravel()
        s = h
    starts = np.cumsum([0] + [len(level[0]) for level in levels])     # level-order numbering
    children = np.full((starts[-1], 4), LEAF, dtype=np.int64)
    for d, (_, _, _, _, _, split) in enumerate(levels[:-1]):
        children[starts[d] + np.flatnonzero(split)] = np.arange(starts[d + 1], starts[d + 2]).reshape(-1, 4)
    order = _preorder(children, 0)
    out = {"children": np.where(children[order] == LEAF, LEAF, np.argsort(order)[np.maximum(children[order], 0)]),
           "method": np.concatenate([level[3] for level in levels])[order],
           "depth": np.repeat(np.arange(len(levels)), np.diff(starts))[order],
           "row": np.concatenate([level[0] for level in levels])[order],
           "col": np.concatenate([level[1] for level in levels])[order],
           "size": np.repeat([level[2] for level in levels], np.diff(starts))[order],
           "share": np.concatenate([level[4] for level in levels])[order]}
    out["row_map"], out["col_map"] = padding.row_map, padding.col_map
    return out


def cut_tree(exact, shape, max_depth=None, accuracy_threshold=1.0):
    """(the cell Quadtree, the paper's statistics) of the padded tree cut from `exact` under the constraints:
    what `build --paper` deploys, and each paper row of `report` (decision/paper_sweep.py)."""
    padded = constrained(exact, max_depth, accuracy_threshold)
    return region_tree(padded, *shape), paper_stats(padded)


def constrained(exact, max_depth=None, accuracy_threshold=1.0):
    """The padded tree `build_padded` grows under `max_depth` and `accuracy_threshold`, cut from the exact tree.

    §3.1: the midpoints do not depend on the constraints and a node's leaf method is that of its block, so a
    constrained tree is the exact one with everything below its first stopping nodes removed (the exact tree's
    inner nodes keep their methods and shares); the preorder numbering stays that of the direct build."""
    kids, depth = exact["children"], exact["depth"]
    stop = (exact["size"] == 1) | (exact["share"] >= accuracy_threshold)
    if max_depth is not None:
        stop |= depth >= max_depth
    parent = np.full(len(depth), -1, dtype=np.int64)
    inner = np.flatnonzero(kids[:, 0] != LEAF)
    parent[kids[inner].ravel()] = np.repeat(inner, 4)
    kept = np.zeros(len(depth), dtype=bool)
    kept[0] = True
    for level in range(1, int(depth.max()) + 1):       # a node stays when its parent stays and goes on splitting
        at = np.flatnonzero(depth == level)
        kept[at] = kept[parent[at]] & ~stop[parent[at]]
    out = {key: value[kept] for key, value in exact.items() if key not in ("row_map", "col_map")}
    renumbered = np.cumsum(kept) - 1
    out["children"] = np.where(stop[kept][:, None], LEAF, renumbered[np.maximum(out["children"], 0)])
    out["row_map"], out["col_map"] = exact["row_map"], exact["col_map"]
    return out


def paper_stats(padded):
    """Table 1/2 statistics of the padded tree as the paper counts them (padding-only quadrants included)."""
    leaves = padded["children"][:, 0] == LEAF
    depths = padded["depth"][leaves]
    return {"depth_min": int(depths.min()), "depth_max": int(depths.max()), "depth_mean": float(depths.mean()),
            "leaves": int(leaves.sum()), "nodes": int(len(leaves))}


def region_tree(padded, n_rows, n_cols):
    """The padded tree as a Quadtree over the grid's cells (reachable quadrants only), numbered in preorder."""
    kids, r, c, s = padded["children"], padded["row"], padded["col"], padded["size"]
    first_row = first_copy(padded["row_map"], n_rows)
    first_col = first_copy(padded["col_map"], n_cols)
    h = s // 2
    a, m, b = (np.searchsorted(first_row, x) for x in (r, r + h, r + s))
    e, n, f = (np.searchsorted(first_col, x) for x in (c, c + h, c + s))
    inner = kids[:, 0] != LEAF
    comm, msg = inner & (a < m) & (m < b), inner & (e < n) & (n < f)     # a cut: both halves hold cells
    north, south, west, east = m > a, b > m, n > e, f > n        # the quadrant holds a cell of the grid
    reach = np.stack([north & west, north & east, south & west, south & east], axis=1) & inner[:, None]
    # a node left with one reachable quadrant is replaced by it (deepest first, so chains resolve)
    target = np.arange(len(kids))
    single = inner & ~comm & ~msg
    for nodes in reversed(_levels(kids, 0)):
        nodes = nodes[single[nodes]]
        target[nodes] = target[kids[nodes, np.argmax(reach[nodes], axis=1)]]
    slot = 2 * (np.arange(4) // 2) * comm[:, None] + (np.arange(4) % 2) * msg[:, None]
    out = np.full(kids.shape, LEAF, dtype=np.int64)
    split = np.flatnonzero(comm | msg)
    at = reach[split]
    out[np.repeat(split, at.sum(axis=1)), slot[split][at]] = target[kids[split][at]]
    order = _preorder(out, int(target[0]))
    number = np.full(len(kids), LEAF, dtype=np.int64)
    number[order] = np.arange(len(order))
    depth = np.zeros(len(kids), dtype=np.int64)
    for d, nodes in enumerate(_levels(out, int(target[0]))):
        depth[nodes] = d
    return Quadtree(np.where(out[order] == LEAF, LEAF, number[np.maximum(out[order], 0)]),
                    np.where(comm[order], m[order], -1), np.where(msg[order], n[order], -1),
                    padded["method"][order].astype(np.int64), depth[order])


def _levels(children, root):
    """The nodes under `root` level by level, each level in its parents' order and then NW, NE, SW, SE."""
    levels = [np.array([root], dtype=np.int64)]
    while True:
        below = children[levels[-1]]
        below = below[below != LEAF]
        if not len(below):
            return levels
        levels.append(below)


def _preorder(children, root):
    """The nodes under `root` in preorder (each node, then its children's subtrees in slot order)."""
    levels = _levels(children, root)
    size = np.ones(len(children), dtype=np.int64)
    for nodes in reversed(levels):
        kids = children[nodes]
        size[nodes] += np.where(kids != LEAF, size[np.maximum(kids, 0)], 0).sum(axis=1)
    position = np.zeros(len(children), dtype=np.int64)
    for nodes in levels:
        kids = children[nodes]
        sizes = np.where(kids != LEAF, size[np.maximum(kids, 0)], 0)
        after = position[nodes, None] + 1 + np.cumsum(sizes, axis=1) - sizes
        position[kids[kids != LEAF]] = after[kids != LEAF]
    order = np.concatenate(levels)
    return order[np.argsort(position[order], kind="stable")]
