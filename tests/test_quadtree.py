import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from quadsel.quadtree import LEAF, build_quadtree


def maps(max_k=4, max_methods=4):
    return st.integers(0, max_k).flatmap(
        lambda k: arrays(np.int64, (1 << k, 1 << k), elements=st.integers(0, max_methods - 1)))


@given(maps())
def test_exact_tree_reproduces_the_map(grid):
    tree = build_quadtree(grid)
    assert np.array_equal(tree.paint(), grid)
    for r in range(grid.shape[0]):
        for c in range(grid.shape[1]):
            assert tree.method[tree.leaf_at(r, c)] == grid[r, c]


@given(maps(), st.integers(0, 5), st.floats(0.05, 1.0))
@settings(max_examples=200)
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
