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
"""

import numpy as np

from .padding import first_copy, pad, pad_index, padded_size
from .quadtree import LEAF, TreeBuilder


def build_padded(grid, pad_mode="spread", max_depth=None, accuracy_threshold=1.0, leaf_rule="majority"):
    """The paper's padded tree of a DecisionGrid: dict of arrays (children, method, depth, row, col, size)
    plus the padding maps."""
    side = padded_size(*grid.shape)
    row_map, col_map = pad_index(grid.shape[0], side, pad_mode), pad_index(grid.shape[1], side, pad_mode)
    cells = pad(grid.best, row_map, col_map)
    penalty = grid.penalty[np.ix_(row_map, col_map)]
    copies = np.outer(np.bincount(row_map)[row_map], np.bincount(col_map)[col_map])
    weight = pad(grid.weight, row_map, col_map) / copies
    n_methods = penalty.shape[2]
    nodes = {key: [] for key in ("children", "method", "depth", "row", "col", "size")}

    def least_penalty(candidates, r, c, s):
        block = np.nan_to_num(penalty[r:r + s, c:c + s][:, :, candidates].reshape(-1, len(candidates)))
        w = weight[r:r + s, c:c + s].reshape(-1, 1)
        if w.sum() <= 0:
            return None
        return int(candidates[int(np.argmin((block * w).sum(axis=0)))])

    def leaf_method(r, c, s):
        counts = np.bincount(cells[r:r + s, c:c + s].ravel(), minlength=n_methods)
        share = counts.max() / (s * s)
        top = np.flatnonzero(counts == counts.max())
        if leaf_rule == "penalty":
            chosen = least_penalty(np.arange(n_methods), r, c, s)
            return (int(top[0]) if chosen is None else chosen), share
        if len(top) > 1:
            chosen = least_penalty(top, r, c, s)
            return (int(top[0]) if chosen is None else chosen), share
        return int(top[0]), share

    def grow(r, c, s, d):
        node = len(nodes["method"])
        winner, share = leaf_method(r, c, s)
        for key, value in zip(nodes, ([LEAF] * 4, winner, d, r, c, s)):
            nodes[key].append(value)
        if s == 1 or share >= accuracy_threshold or (max_depth is not None and d >= max_depth):
            return node
        h = s // 2
        nodes["children"][node] = [grow(r, c, h, d + 1), grow(r, c + h, h, d + 1), grow(r + h, c, h, d + 1),
                                   grow(r + h, c + h, h, d + 1)]
        return node

    grow(0, 0, side, 0)
    out = {key: np.asarray(values, dtype=np.int64) for key, values in nodes.items()}
    out["children"] = out["children"].reshape(-1, 4)
    out["row_map"], out["col_map"] = row_map, col_map
    return out


def paper_stats(padded):
    """Table 1/2 statistics of the padded tree as the paper counts them (padding-only quadrants included)."""
    leaves = padded["children"][:, 0] == LEAF
    depths = padded["depth"][leaves]
    return {"depth_min": int(depths.min()), "depth_max": int(depths.max()), "depth_mean": float(depths.mean()),
            "leaves": int(leaves.sum()), "nodes": int(len(leaves))}


def region_tree(padded, n_rows, n_cols):
    """The padded tree as a Quadtree over the grid's cells (reachable quadrants only)."""
    first_row = first_copy(padded["row_map"], n_rows)
    first_col = first_copy(padded["col_map"], n_cols)
    builder = TreeBuilder()

    def convert(node, depth):
        r, c, s = padded["row"][node], padded["col"][node], padded["size"][node]
        kids = padded["children"][node]
        if kids[0] != LEAF:
            h = s // 2
            (a, m, b), (e, n, f) = (np.searchsorted(first_row, [r, r + h, r + s]),
                                    np.searchsorted(first_col, [c, c + h, c + s]))
            comm_cut = int(m) if a < m < b else -1
            msg_cut = int(n) if e < n < f else -1
            reachable = [int(k) for q, k in enumerate(kids)
                         if (m > a if q < 2 else b > m) and (n > e if q % 2 == 0 else f > n)]
            if len(reachable) == 1:
                return convert(reachable[0], depth)
            out = builder.node(padded["method"][node], depth)
            builder.split(out, comm_cut, msg_cut, [convert(k, depth + 1) for k in reachable])
            return out
        return builder.node(padded["method"][node], depth)

    convert(0, 0)
    return builder.tree()
