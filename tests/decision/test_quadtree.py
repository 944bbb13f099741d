"""The quadtree as flat arrays: descent, painting, blocks and the loader's structural check."""

import numpy as np
import pytest

from quadsel.decision.quadtree import LEAF, Quadtree, TreeBuilder


def sample_tree():
    """Root cuts a 4 x 6 grid at row 2 and column 3; its SE child cuts column 5 only (a two-way split)."""
    b = TreeBuilder()
    root = b.node(0, 0)
    kids = [b.node(m, 1) for m in (0, 1, 2, 3)]
    b.split(root, 2, 3, kids)
    east = [b.node(3, 2), b.node(4, 2)]
    b.split(kids[3], -1, 5, east)
    return b.tree()


def test_descent_paint_and_blocks():
    tree = sample_tree()
    tree.validate(4, 6, 5)
    painted = tree.paint(4, 6)
    assert painted.tolist() == [[0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 1],
                                [2, 2, 2, 3, 3, 4], [2, 2, 2, 3, 3, 4]]
    r0, r1, c0, c1 = tree.blocks(4, 6)
    assert (r0[6], r1[6], c0[6], c1[6]) == (2, 4, 5, 6)
    assert tree.children[4].tolist() == [5, 6, LEAF, LEAF]
    assert tree.stats() == {"depth_min": 1, "depth_max": 2, "depth_mean": 1.4, "leaves": 5, "nodes": 7}


@pytest.mark.parametrize("change, message", [
    (lambda t: t.children.__setitem__((0, 1), 9), "outside the node table"),
    (lambda t: t.children.__setitem__((4, 0), 2), "after their parent"),
    (lambda t: t.children.__setitem__((0, 3), 1), "exactly one node"),
    (lambda t: t.comm_cut.__setitem__(0, 4), "outside its block"),
    (lambda t: t.msg_cut.__setitem__(4, 3), "outside its block"),
    (lambda t: t.msg_cut.__setitem__(4, -1), "cuts and its children"),
    (lambda t: t.comm_cut.__setitem__(1, 1), "a leaf has a cut"),
    (lambda t: t.method.__setitem__(6, 5), "method outside"),
    (lambda t: t.depth.__setitem__(6, 7), "depth"),
])
def test_validate_rejects_every_kind_of_damage(change, message):
    tree = sample_tree()
    change(tree)
    with pytest.raises(ValueError, match=message):
        tree.validate(4, 6, 5)


def test_validate_rejects_unequal_arrays():
    tree = sample_tree()
    broken = Quadtree(tree.children, tree.comm_cut[:-1], tree.msg_cut, tree.method, tree.depth)
    with pytest.raises(ValueError, match="unequal length"):
        broken.validate(4, 6, 5)


def test_json_round_trip():
    tree = sample_tree()
    again = Quadtree.from_json(tree.to_json())
    assert np.array_equal(again.paint(4, 6), tree.paint(4, 6))
