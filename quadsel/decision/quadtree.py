"""§3.1: the quadtree decision structure, stored as flat arrays (in the manner of scikit-learn's Tree).

Node 0 is the root (depth 0) and covers the whole padded 2^k×2^k map. An internal node has four
children in the order NW, NE, SW, SE (north = smaller communicator sizes = lower row indices,
west = smaller message sizes = lower column indices); a leaf has children -1 and carries a method index.
"""

from dataclasses import dataclass

import numpy as np

LEAF = -1
QUADRANTS = ("NW", "NE", "SW", "SE")


@dataclass
class Quadtree:
    children: np.ndarray   # (N, 4) int64, LEAF for leaves
    method: np.ndarray     # (N,) method index (for internal nodes: the block's majority method)
    depth: np.ndarray      # (N,)
    row: np.ndarray        # (N,) first padded row of the node's block
    col: np.ndarray        # (N,) first padded column of the node's block
    size: np.ndarray       # (N,) side of the block

    @property
    def n_nodes(self):
        return len(self.method)

    @property
    def is_leaf(self):
        return self.children[:, 0] == LEAF

    @property
    def n_leaves(self):
        return int(self.is_leaf.sum())

    def leaf_at(self, r, c):
        """Index of the leaf whose block holds padded cell (r, c): a recursive binary search in 2-D."""
        node = 0
        while self.children[node, 0] != LEAF:
            half = self.size[node] // 2
            quadrant = 2 * int(r >= self.row[node] + half) + int(c >= self.col[node] + half)
            node = self.children[node, quadrant]
        return node

    def paint(self):
        """The padded decision map this tree encodes (each leaf's method over its block)."""
        side = int(self.size[0])
        out = np.empty((side, side), dtype=np.int64)
        for n in np.flatnonzero(self.is_leaf):
            r, c, s = self.row[n], self.col[n], self.size[n]
            out[r:r + s, c:c + s] = self.method[n]
        return out

    def stats(self):
        """Table 1/2 statistics: depth min/max/mean over leaves (unweighted, as in the paper), leaves, nodes."""
        leaf_depths = self.depth[self.is_leaf]
        return {
            "depth_min": int(leaf_depths.min()),
            "depth_max": int(leaf_depths.max()),
            "depth_mean": float(leaf_depths.mean()),
            "leaves": self.n_leaves,
            "nodes": self.n_nodes,
        }

    def to_json(self):
        return {name: getattr(self, name).tolist() for name in ("children", "method", "depth", "row", "col", "size")}

    @classmethod
    def from_json(cls, data):
        arrays = {name: np.asarray(data[name], dtype=np.int64) for name in ("children", "method", "depth", "row", "col", "size")}
        arrays["children"] = arrays["children"].reshape(-1, 4)
        return cls(**arrays)


LEAF_RULES = ("majority", "penalty")


def build_quadtree(padded_map, max_depth=None, accuracy_threshold=1.0, penalty=None, leaf_rule="majority",
                   weight=None):
    """Build the quadtree of a padded 2^k×2^k decision map under the paper's constraints (§3.1).

    A block becomes a leaf when one method covers at least `accuracy_threshold` of its cells (1.0 = the
    exact tree), when it is at `max_depth` (root = depth 0), or when it is a single cell.
    The leaf's method (`leaf_rule`):
      majority — the paper's: the block's most frequent method; ties go to the method with the lowest mean
                 relative penalty over the block (`penalty`: padded (side, side, K) array), then the lowest index;
      penalty  — the method with the lowest weighted mean relative penalty over the block, each cell weighted
                 by `weight` (padded (side, side); 1/copies makes every measured point count once).
    A uniform block is a leaf of its method under both rules, so the exact tree is the same.
    """
    grid = np.asarray(padded_map, dtype=np.int64)
    side = grid.shape[0]
    if grid.ndim != 2 or grid.shape[1] != side or side & (side - 1):
        raise ValueError("the decision map must be padded to 2^k x 2^k before building the quadtree")
    if not 0.0 < accuracy_threshold <= 1.0:
        raise ValueError("the accuracy threshold must be in (0, 1]")
    if max_depth is not None and max_depth < 0:
        raise ValueError("max depth must be >= 0")
    if leaf_rule not in LEAF_RULES:
        raise ValueError(f"unknown leaf rule {leaf_rule!r} (choose from {', '.join(LEAF_RULES)})")
    if leaf_rule == "penalty" and penalty is None:
        raise ValueError("the penalty leaf rule needs the penalty array")
    n_methods = int(grid.max()) + 1 if penalty is None else penalty.shape[2]
    cell_weight = np.ones(grid.shape) if weight is None else np.asarray(weight, dtype=float)

    children, method, depth, row, col, size = [], [], [], [], [], []

    def lowest_penalty(candidates, r, c, s):
        block_penalty = penalty[r:r + s, c:c + s][:, :, candidates].reshape(-1, len(candidates))
        w = cell_weight[r:r + s, c:c + s].reshape(-1, 1) * ~np.isnan(block_penalty)
        total, mass = (np.nan_to_num(block_penalty) * w).sum(axis=0), w.sum(axis=0)
        mean_penalty = np.where(mass > 0, total / np.where(mass > 0, mass, 1), np.inf)
        return int(candidates[int(np.argmin(mean_penalty))])

    def leaf_method(block, r, c, s):
        counts = np.bincount(block.ravel(), minlength=n_methods)
        share = counts.max() / block.size
        if leaf_rule == "penalty":
            return lowest_penalty(np.arange(n_methods), r, c, s), share
        top = np.flatnonzero(counts == counts.max())
        if len(top) > 1 and penalty is not None:
            return lowest_penalty(top, r, c, s), share
        return int(top[0]), share

    def grow(r, c, s, d):
        node = len(method)
        block = grid[r:r + s, c:c + s]
        winner, share = leaf_method(block, r, c, s)
        children.append([LEAF] * 4)
        method.append(winner)
        depth.append(d)
        row.append(r)
        col.append(c)
        size.append(s)
        if s == 1 or share >= accuracy_threshold or (max_depth is not None and d >= max_depth):
            return node
        h = s // 2
        kids = [grow(r, c, h, d + 1), grow(r, c + h, h, d + 1), grow(r + h, c, h, d + 1), grow(r + h, c + h, h, d + 1)]
        children[node] = kids
        return node

    grow(0, 0, side, 0)
    as_array = lambda values: np.asarray(values, dtype=np.int64)  # noqa: E731
    return Quadtree(as_array(children).reshape(-1, 4), as_array(method), as_array(depth),
                    as_array(row), as_array(col), as_array(size))
