import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from quadsel.decision.grid import Axis, DecisionGrid
from quadsel.decision.midpoint import build_padded, constrained, exact_padded, region_tree
from quadsel.decision.padding import first_copy
from quadsel.decision.quadtree import LEAF, TreeBuilder


class Padded:
    """The padded tree of the paper's builder, with the old array names (children, method, depth, row, col, size)."""

    def __init__(self, arrays):
        self.__dict__.update(arrays)
        self.is_leaf = self.children[:, 0] == LEAF
        self.n_nodes, self.n_leaves = len(self.method), int(self.is_leaf.sum())

    def leaf_at(self, r, c):
        node = 0
        while self.children[node, 0] != LEAF:
            half = self.size[node] // 2
            node = self.children[node, 2 * int(r >= self.row[node] + half) + int(c >= self.col[node] + half)]
        return node

    def paint(self):
        side = int(self.size[0])
        out = np.empty((side, side), dtype=np.int64)
        for n in np.flatnonzero(self.is_leaf):
            r, c, s = self.row[n], self.col[n], self.size[n]
            out[r:r + s, c:c + s] = self.method[n]
        return out

    def stats(self):
        d = self.depth[self.is_leaf]
        return {"depth_min": int(d.min()), "depth_max": int(d.max()), "depth_mean": float(d.mean()),
                "leaves": self.n_leaves, "nodes": self.n_nodes}


def grid_of(best, penalty=None, weight=None):
    """A DecisionGrid over a given map (measured sizes 1..n on both axes)."""
    best = np.asarray(best, dtype=np.int64)
    rows, cols = best.shape
    k = int(best.max()) + 1 if penalty is None else penalty.shape[2]
    if penalty is None:
        penalty = np.ones((rows, cols, k))
        np.put_along_axis(penalty, best[:, :, None], 0.0, axis=2)
    weight = np.ones(best.shape) if weight is None else weight
    return DecisionGrid(Axis.of(np.arange(1, rows + 1)), Axis.of(np.arange(1, cols + 1)), penalty, weight, best)


def build_quadtree(grid, max_depth=None, accuracy_threshold=1.0, penalty=None, leaf_rule="majority", weight=None):
    if grid.ndim != 2 or grid.shape[0] != grid.shape[1] or grid.shape[0] & (grid.shape[0] - 1):
        raise ValueError("a padded map")
    if not 0 < accuracy_threshold <= 1:
        raise ValueError("threshold")
    return Padded(build_padded(grid_of(grid, penalty, weight), "edge", max_depth, accuracy_threshold, leaf_rule))


def maps(max_k=4, max_methods=4):
    return st.integers(0, max_k).flatmap(
        lambda k: arrays(np.int64, (1 << k, 1 << k), elements=st.integers(0, max_methods - 1)))


@given(maps())
def test_exact_tree_reproduces_the_map(grid):
    tree = build_quadtree(grid)
    assert np.array_equal(tree.paint(), grid)
    assert np.array_equal(region_tree(tree.__dict__, *grid.shape).paint(*grid.shape), grid)
    for r in range(grid.shape[0]):
        for c in range(grid.shape[1]):
            assert tree.method[tree.leaf_at(r, c)] == grid[r, c]


@given(maps(), st.integers(0, 5), st.floats(0.05, 1.0))
@settings(max_examples=200, deadline=None)
def test_constraints_and_shape_invariants(grid, max_depth, threshold):
    tree = build_quadtree(grid, max_depth=max_depth, accuracy_threshold=threshold)
    internal = int((~tree.is_leaf).sum())
    assert tree.n_nodes == 1 + 4 * internal            # a quadtree
    assert tree.n_leaves == 3 * internal + 1
    assert tree.depth[tree.is_leaf].max() <= max_depth
    for n in np.flatnonzero(~tree.is_leaf):             # a node was split only if no constraint stopped it
        block = grid[tree.row[n]:tree.row[n] + tree.size[n], tree.col[n]:tree.col[n] + tree.size[n]]
        share = np.bincount(block.ravel()).max() / block.size
        assert share < threshold and tree.depth[n] < max_depth and tree.size[n] > 1
    for n in np.flatnonzero(tree.is_leaf):              # a leaf carries its block's majority method
        block = grid[tree.row[n]:tree.row[n] + tree.size[n], tree.col[n]:tree.col[n] + tree.size[n]]
        counts = np.bincount(block.ravel())
        assert counts[tree.method[n]] == counts.max()


def test_max_depth_one_gives_four_leaves_and_five_nodes():
    grid = np.arange(64).reshape(8, 8) % 3
    tree = build_quadtree(grid, max_depth=1)
    assert (tree.n_leaves, tree.n_nodes) == (4, 5)
    assert tree.stats() == {"depth_min": 1, "depth_max": 1, "depth_mean": 1.0, "leaves": 4, "nodes": 5}


def test_uniform_map_is_one_leaf_and_children_are_nw_ne_sw_se():
    assert build_quadtree(np.zeros((4, 4), dtype=int)).n_nodes == 1
    grid = np.array([[0, 1], [2, 3]])
    tree = build_quadtree(grid)
    assert tree.children[0].tolist() == [1, 2, 3, 4]
    assert tree.method[1:].tolist() == [0, 1, 2, 3]
    assert np.all(tree.children[1:] == LEAF)


def test_threshold_makes_a_leaf_of_a_dominant_method():
    grid = np.zeros((4, 4), dtype=int)
    grid[0, 0] = 1                        # 15 of 16 cells are method 0
    assert build_quadtree(grid, accuracy_threshold=0.9).n_nodes == 1
    assert build_quadtree(grid, accuracy_threshold=0.95).n_nodes > 1


def test_ties_go_to_the_method_with_the_lower_penalty():
    grid = np.array([[0, 1], [1, 0]])
    penalty = np.zeros((2, 2, 2))
    penalty[:, :, 0] = [[0.0, 0.5], [0.5, 0.0]]   # method 0 is 50 % slower where it loses
    penalty[:, :, 1] = [[0.1, 0.0], [0.0, 0.1]]   # method 1 only 10 %
    assert build_quadtree(grid, max_depth=0, penalty=penalty).method[0] == 1
    assert build_quadtree(grid, max_depth=0).method[0] == 0


def test_rejects_unpadded_maps_and_bad_constraints():
    with pytest.raises(ValueError):
        build_quadtree(np.zeros((3, 3), dtype=int))
    with pytest.raises(ValueError):
        build_quadtree(np.zeros((2, 2), dtype=int), accuracy_threshold=0)


@given(maps(max_methods=3), st.integers(0, 4), st.floats(0.05, 1.0), st.integers(0, 10**6))
@settings(max_examples=100, deadline=None)
def test_penalty_leaf_rule_picks_the_least_penalty_and_keeps_the_exact_tree(grid, max_depth, threshold, seed):
    rng = np.random.default_rng(seed)
    side = grid.shape[0]
    penalty = rng.uniform(0.01, 2.0, size=(side, side, 3))
    penalty[np.arange(side)[:, None], np.arange(side)[None, :], grid] = 0.0     # the map's method is the best
    weight = rng.uniform(0.1, 1.0, size=(side, side))
    exact = build_quadtree(grid, penalty=penalty, leaf_rule="penalty", weight=weight)
    assert np.array_equal(exact.paint(), grid)
    tree = build_quadtree(grid, max_depth=max_depth, accuracy_threshold=threshold, penalty=penalty,
                          leaf_rule="penalty", weight=weight)
    majority = build_quadtree(grid, max_depth=max_depth, accuracy_threshold=threshold)
    assert np.array_equal(tree.children, majority.children)       # same shape: only leaf methods differ
    for n in np.flatnonzero(tree.is_leaf):
        r, c, s = tree.row[n], tree.col[n], tree.size[n]
        w = weight[r:r + s, c:c + s, None]
        mean = (penalty[r:r + s, c:c + s] * w).sum(axis=(0, 1)) / w.sum()
        assert mean[tree.method[n]] == pytest.approx(mean.min())


def test_penalty_leaf_rule_avoids_a_cheap_majority_trap():
    grid = np.array([[0, 0], [0, 1]])            # method 0 wins 3 cells by a hair, loses the 4th by 10x
    penalty = np.zeros((2, 2, 2))
    penalty[:, :, 1] = [[0.01, 0.01], [0.01, 0.0]]
    penalty[1, 1, 0] = 9.0
    assert build_quadtree(grid, max_depth=0, penalty=penalty).method[0] == 0
    assert build_quadtree(grid, max_depth=0, penalty=penalty, leaf_rule="penalty").method[0] == 1


@given(st.integers(1, 9), st.integers(1, 9), st.integers(0, 10**6), st.integers(0, 4),
       st.sampled_from(["spread", "edge"]))
@settings(max_examples=150, deadline=None)
def test_region_tree_answers_every_cell_as_the_padded_tree_reads_its_first_copy(rows, cols, seed, depth, pad):
    """The conversion to the grid's own cells changes no answer: cell (r, c) = padded cell (first copies)."""
    best = np.random.default_rng(seed).integers(0, 3, size=(rows, cols))
    padded = build_padded(grid_of(best), pad, max_depth=depth)
    first_row, first_col = first_copy(padded["row_map"], rows), first_copy(padded["col_map"], cols)
    painted = Padded(padded).paint()[np.ix_(first_row, first_col)]
    tree = region_tree(padded, rows, cols)
    tree.validate(rows, cols, 3)
    assert np.array_equal(tree.paint(rows, cols), painted)
    assert tree.n_leaves <= Padded(padded).n_leaves


def decision_grids(max_side=20, max_methods=4):
    """Grids of any shape (padded to 2^k by the builders), blocky or noisy, with penalties on a coarse lattice
    (ties between methods' block sums happen), unknown penalties (NaN) and cells of no weight."""
    @st.composite
    def build(draw):
        rows, cols = draw(st.integers(1, max_side)), draw(st.integers(1, max_side))
        k, seed = draw(st.integers(1, max_methods)), draw(st.integers(0, 10 ** 6))
        rng = np.random.default_rng(seed)
        block = draw(st.integers(1, 6))
        best = rng.integers(0, k, size=(rows // block + 1, cols // block + 1)).repeat(block, 0).repeat(block, 1)
        best = np.where(rng.uniform(size=best.shape) < draw(st.sampled_from([0.0, 0.1, 0.5])),
                        rng.integers(0, k, size=best.shape), best)[:rows, :cols]
        penalty = rng.integers(0, 3, size=(rows, cols, k)) / 2.0
        penalty[rng.uniform(size=penalty.shape) < 0.1] = np.nan
        weight = rng.integers(0, 3, size=(rows, cols)).astype(float)
        return grid_of(best, penalty, weight)
    return build()


THRESHOLDS = (0.05, 0.1, 0.2, 0.25, 0.3, 1 / 3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 15 / 16, 1.0)


@given(decision_grids(), st.sampled_from(["spread", "edge"]), st.sampled_from(["majority", "penalty"]))
@settings(max_examples=120, deadline=None)
def test_every_constrained_tree_is_the_direct_build_cut_from_the_exact_tree(grid, pad, leaf_rule):
    exact = exact_padded(grid, pad, leaf_rule)
    direct = build_padded(grid, pad, leaf_rule=leaf_rule)
    assert exact.keys() == direct.keys()
    for key in exact:
        assert np.array_equal(exact[key], direct[key]), key
    k = int(np.log2(exact["size"][0]))
    for max_depth in [None] + list(range(k + 2)):
        for threshold in THRESHOLDS + tuple(np.unique(exact["share"])):    # also exactly at a block's share
            cut = constrained(exact, max_depth, threshold)
            built = build_padded(grid, pad, max_depth, threshold, leaf_rule)
            for key in built:
                assert np.array_equal(cut[key], built[key]), (key, max_depth, threshold)


def region_tree_by_blocks(padded, n_rows, n_cols):
    """The conversion as first written, recursively block by block: the reference the array version must equal."""
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
            reachable = [int(k) for q, k in enumerate(kids)
                         if (m > a if q < 2 else b > m) and (n > e if q % 2 == 0 else f > n)]
            if len(reachable) == 1:
                return convert(reachable[0], depth)
            out = builder.node(padded["method"][node], depth)
            builder.split(out, int(m) if a < m < b else -1, int(n) if e < n < f else -1,
                          [convert(k, depth + 1) for k in reachable])
            return out
        return builder.node(padded["method"][node], depth)

    convert(0, 0)
    return builder.tree()


@given(decision_grids(max_side=24), st.sampled_from(["spread", "edge"]), st.integers(0, 6))
@settings(max_examples=150, deadline=None)
def test_region_tree_is_the_block_by_block_conversion_node_for_node(grid, pad, max_depth):
    for padded in (build_padded(grid, pad), build_padded(grid, pad, max_depth=max_depth)):
        tree, want = region_tree(padded, *grid.shape), region_tree_by_blocks(padded, *grid.shape)
        for name in ("children", "comm_cut", "msg_cut", "method", "depth"):
            assert np.array_equal(getattr(tree, name), getattr(want, name)), name
