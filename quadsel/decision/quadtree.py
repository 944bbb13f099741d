"""§3.1: the quadtree decision structure, stored as flat arrays (in the manner of scikit-learn's `Tree`).

Node 0 is the root (depth 0) and covers every cell of the decision grid (quadsel.decision.grid). An
internal node cuts its block once on each axis: rows (communicator cells) from `comm_cut` on are south,
columns (message cells) from `msg_cut` on are east; its children are NW, NE, SW, SE (north = smaller
communicator sizes, west = smaller message sizes). A node that cuts one axis only (the other cut is -1)
has two children, in slots NW and SW (a communicator cut) or NW and NE (a message cut); the absent slots
hold -1. A leaf has no children and carries its method index. Every builder (decision/midpoint.py, the
paper's; decision/split.py, cuts at measured sizes) returns this structure, and every target reads it.
"""

from dataclasses import dataclass

import numpy as np

LEAF = -1
QUADRANTS = ("NW", "NE", "SW", "SE")
LEAF_RULES = ("majority", "penalty")
ARRAYS = ("children", "comm_cut", "msg_cut", "method", "depth")
MAX_DEPTH = 1000        # deeper trees are refused by the loader (the C emitters recurse by depth)


@dataclass
class Quadtree:
    children: np.ndarray   # (N, 4) int64: NW, NE, SW, SE node index, -1 where absent (all -1: a leaf)
    comm_cut: np.ndarray   # (N,) first communicator cell of the south half, -1 = no cut on this axis
    msg_cut: np.ndarray    # (N,) first message cell of the east half, -1 = no cut on this axis
    method: np.ndarray     # (N,) method index (of an internal node: its block's leaf-rule method, informative)
    depth: np.ndarray      # (N,) root = 0

    @property
    def n_nodes(self):
        return len(self.method)

    @property
    def is_leaf(self):
        return self.children[:, 0] == LEAF

    @property
    def n_leaves(self):
        return int(self.is_leaf.sum())

    def leaves_of(self, rows, cols):
        """Leaf node of every (row cell, column cell) pair (equally shaped integer arrays): the 2-D binary search."""
        rows, cols = np.asarray(rows), np.asarray(cols)
        node = np.zeros(rows.shape, dtype=np.int64)
        while True:
            inner = self.children[node, 0] != LEAF
            if not inner.any():
                return node
            n = node[inner]
            south = (self.comm_cut[n] >= 0) & (rows[inner] >= self.comm_cut[n])
            east = (self.msg_cut[n] >= 0) & (cols[inner] >= self.msg_cut[n])
            # a one-axis cut keeps its second child in slot SW (communicator) or NE (message)
            node[inner] = self.children[n, 2 * south + east]

    def paint(self, n_rows, n_cols):
        """The (rows, cols) method index of every cell."""
        rows, cols = np.meshgrid(np.arange(n_rows), np.arange(n_cols), indexing="ij")
        return self.method[self.leaves_of(rows, cols)]

    def blocks(self, n_rows, n_cols):
        """Per node its block of cells: (row_lo, row_hi, col_lo, col_hi) arrays, half-open."""
        n = self.n_nodes
        r0, r1, c0, c1 = (np.zeros(n, np.int64) for _ in range(4))
        r1[0], c1[0] = n_rows, n_cols
        for node in range(n):                 # children always come after their parent
            for quadrant, child in enumerate(self.children[node]):
                if child == LEAF:
                    continue
                south, east = quadrant >= 2, quadrant % 2 == 1
                rc, mc = self.comm_cut[node], self.msg_cut[node]
                r0[child], r1[child] = (rc, r1[node]) if south else (r0[node], rc if rc >= 0 else r1[node])
                c0[child], c1[child] = (mc, c1[node]) if east else (c0[node], mc if mc >= 0 else c1[node])
        return r0, r1, c0, c1

    def stats(self):
        """Table 1/2 statistics: depth min/max/mean over leaves (unweighted, as in the paper), leaves, nodes."""
        leaf_depths = self.depth[self.is_leaf]
        return {"depth_min": int(leaf_depths.min()), "depth_max": int(leaf_depths.max()),
                "depth_mean": float(leaf_depths.mean()), "leaves": self.n_leaves, "nodes": self.n_nodes}

    def to_json(self):
        return {name: getattr(self, name).tolist() for name in ARRAYS}

    @classmethod
    def from_json(cls, data):
        arrays = {name: np.asarray(data[name], dtype=np.int64) for name in ARRAYS}
        arrays["children"] = arrays["children"].reshape(-1, 4)
        return cls(**arrays)

    def validate(self, n_rows, n_cols, n_methods):
        """Raise ValueError unless this is a well-formed tree over an (n_rows, n_cols) grid (the loader's check)."""
        n = self.n_nodes
        if n == 0 or any(len(getattr(self, a)) != n for a in ARRAYS):
            raise ValueError("tree arrays are empty or of unequal length")
        kids = self.children
        if np.any((kids < LEAF) | (kids >= n)):
            raise ValueError("a child index is outside the node table")
        inner = kids[:, 0] != LEAF
        present = kids != LEAF
        if np.any(present & (kids <= np.arange(n)[:, None])):
            raise ValueError("children must come after their parent")
        seen = np.bincount(kids[present], minlength=n)
        if seen[0] or np.any(seen[1:] != 1):
            raise ValueError("every node but the root must be the child of exactly one node")
        if np.any((self.method < 0) | (self.method >= n_methods)):
            raise ValueError("a node refers to a method outside the method table")
        if self.depth[0] != 0:
            raise ValueError("the root must have depth 0")
        r0, r1, c0, c1 = self.blocks(n_rows, n_cols)
        for node in np.flatnonzero(inner):
            rc, mc = int(self.comm_cut[node]), int(self.msg_cut[node])
            shape = (rc >= 0, mc >= 0)
            slots = {(True, True): (0, 1, 2, 3), (True, False): (0, 2), (False, True): (0, 1)}.get(shape)
            if slots is None or sorted(np.flatnonzero(present[node]).tolist()) != list(slots):
                raise ValueError(f"node {node}: its cuts and its children do not match")
            if (rc >= 0 and not r0[node] < rc < r1[node]) or (mc >= 0 and not c0[node] < mc < c1[node]):
                raise ValueError(f"node {node}: a cut lies outside its block")
            if np.any(self.depth[kids[node][present[node]]] != self.depth[node] + 1):
                raise ValueError(f"node {node}: a child's depth is not its parent's + 1")
        if np.any(self.comm_cut[~inner] != -1) or np.any(self.msg_cut[~inner] != -1):
            raise ValueError("a leaf has a cut")
        if np.any(present[~inner]):
            raise ValueError("a leaf has children")
        if self.depth.max() > MAX_DEPTH:
            raise ValueError(f"the tree is deeper than {MAX_DEPTH} levels")


class TreeBuilder:
    """Collects nodes in the order a builder creates them (parents first); `tree()` returns the Quadtree."""

    def __init__(self):
        self.rows = []

    def node(self, method, depth):
        self.rows.append([[LEAF] * 4, -1, -1, int(method), int(depth)])
        return len(self.rows) - 1

    def split(self, node, comm_cut, msg_cut, children):
        """Make `node` internal: `children` in NW, NE, SW, SE order of the quadrants that exist."""
        slots = (0, 1, 2, 3) if comm_cut >= 0 and msg_cut >= 0 else (0, 2) if comm_cut >= 0 else (0, 1)
        row = self.rows[node]
        row[0] = [LEAF] * 4
        for slot, child in zip(slots, children):
            row[0][slot] = int(child)
        row[1], row[2] = int(comm_cut), int(msg_cut)

    def tree(self):
        columns = list(zip(*self.rows)) if self.rows else [[]] * 5
        arrays = [np.asarray(c, dtype=np.int64) for c in columns]
        arrays[0] = arrays[0].reshape(-1, 4)
        return Quadtree(*arrays)
