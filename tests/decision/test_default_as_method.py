"""Issue 39: the measured library default is a method of every build; an exact tree is exact; the sides outside the
measured range are handed back or extrapolated by evidence; ragged grids are folded per communicator size."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from quadsel.decision import size
from quadsel.decision.builder import DEFAULT_BUILD, build_size_tree
from quadsel.decision.decision_map import DEFAULT_METHOD, Method, map_from_cube
from quadsel.decision.grid import Axis, outside_leaves
from quadsel.decision.library_default import best_hand_back, hand_back_outside
from quadsel.decision.quadtree import TreeBuilder
from quadsel.evaluate.comparators import QuadtreeSelector, choice_on
from quadsel.evaluate.penalty import penalty_grid


def random_map(seed, n_comm, n_msg, n_methods, spread=False, ragged=False):
    rng = np.random.default_rng(seed)
    comm = np.sort(rng.choice(np.arange(2, 300), size=n_comm, replace=False))
    msg = np.sort(rng.choice(np.arange(1, 1 << 21), size=n_msg, replace=False))
    cost = rng.uniform(1.0, 100.0, size=(n_comm, n_msg, n_methods))
    default = rng.uniform(1.0, 100.0, size=(n_comm, n_msg))
    if ragged:          # each communicator size measured at every other message size, alternating
        hole = (np.arange(n_msg)[None, :] + np.arange(n_comm)[:, None]) % 2 == 1
        cost[hole], default[hole] = np.nan, np.nan
    se = 0.05 * cost if spread else None
    return map_from_cube("bcast", comm, msg, [Method(str(k + 1), 0) for k in range(n_methods)], cost, se, default,
                         default_se=None if se is None else 0.05 * default)


def measured_penalty(dmap, fn):
    grid = penalty_grid(dmap, choice_on(QuadtreeSelector.of(fn), dmap))
    return grid[dmap.measured]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10 ** 6), n_comm=st.integers(1, 6), n_msg=st.integers(1, 8), n_methods=st.integers(1, 4),
       spread=st.booleans(), ragged=st.booleans(), outside=st.sampled_from(["auto", "default", "extrapolate"]))
def test_the_exact_tree_with_the_default_as_a_method_scores_zero_on_the_measured_points(
        seed, n_comm, n_msg, n_methods, spread, ragged, outside):
    """`quadsel build --max-leaves none` (ties within the noise do not apply to it): 0 % at every measured point,
    the library default included wherever it is the fastest measured (the C returns 0 there)."""
    dmap = random_map(seed, n_comm, n_msg, n_methods, spread, ragged and n_msg > 1)
    fn = build_size_tree(dmap, **dict(DEFAULT_BUILD, max_leaves=None, keep_default="auto", outside=outside))
    assert fn.options.keep_default and fn.options.tolerance == 0.0
    assert np.allclose(measured_penalty(dmap, fn), 0.0)


@pytest.mark.parametrize("options", [dict(max_leaves=8), dict(max_leaves=None, max_depth=2),
                                     dict(max_leaves=None, accuracy_threshold=0.6, tolerance=0.0),
                                     dict(split="midpoint", between="floor", leaf_rule="majority", tolerance=0.0,
                                          max_leaves=None)])
def test_every_builder_keeps_the_measured_default(options):
    """Budgeted, depth-limited, threshold-limited and midpoint trees alike can choose the default (issue 39)."""
    dmap = random_map(3, 5, 7, 3)
    fn = build_size_tree(dmap, **dict(DEFAULT_BUILD, keep_default="auto", **options))
    assert fn.options.keep_default and DEFAULT_METHOD in fn.methods


def test_a_map_whose_default_is_faster_everywhere_gets_one_default_leaf_inside():
    comm, msg = np.array([2, 4, 8]), np.array([8, 64, 512, 4096])
    cost = np.full((3, 4, 2), 10.0)
    dmap = map_from_cube("bcast", comm, msg, [Method("1", 0), Method("6", 0)], cost, None, np.full((3, 4), 5.0))
    fn = build_size_tree(dmap, **dict(DEFAULT_BUILD, keep_default="auto", outside="extrapolate"))
    assert fn.tree.n_leaves == 1 and fn.query(3, 100) == DEFAULT_METHOD


def test_hand_back_outside_one_side_only_extrapolates_the_others():
    comm, msg = np.array([4, 8]), np.array([16, 64])
    ca, ma = Axis.of(comm, "floor", True), Axis.of(msg, "floor", True)
    builder = TreeBuilder()
    builder.node(0, 0)                                   # one leaf inside: method 0
    tree = hand_back_outside(builder.tree(), ca, ma, 1, sides=["comm_above"])
    assert tree.n_leaves - 1 == outside_leaves(comm, msg, sides=["comm_above"]) == 1
    rows, cols = ca.cells(np.array([2, 6, 9, 6, 6])), ma.cells(np.array([32, 1, 32, 100, 32]))
    # below the smallest comm size, below the smallest message, above the largest message: extrapolated (0)
    assert tree.method[tree.leaves_of(rows, cols)].tolist() == [0, 0, 1, 0, 0]


def test_best_hand_back_takes_the_cheaper_of_the_default_and_the_extrapolation_per_side():
    # fold 1: two points beyond the largest comm size (tree 50 %, default 5 %); fold 2: one beyond the smallest
    # message (tree 1 %, default 30 %) and one inside (tree 2 %)
    beyond1 = np.zeros((4, 2), dtype=bool)
    beyond1[1] = True
    beyond2 = np.zeros((4, 2), dtype=bool)
    beyond2[2, 0] = True
    records = [(np.array([50.0, 50.0]), np.array([5.0, 5.0]), beyond1),
               (np.array([1.0, 2.0]), np.array([30.0, 30.0]), beyond2)]
    sides, per_fold = best_hand_back(records, ("comm_below", "comm_above", "msg_below", "msg_above"))
    assert set(sides) == {"comm_below", "comm_above", "msg_above"}     # no evidence: handed back; msg_below extrapolated
    assert per_fold == [5.0, 1.5]


def test_outside_auto_follows_the_evidence_of_the_folds():
    """The default is poor beyond the measured message sizes and the neighbouring method holds: extrapolate there;
    the sizes beyond the communicator sizes turn to another regime where the default is best: hand them back."""
    comm, msg = np.array([2, 4, 8, 16, 32]), 2 ** np.arange(3, 15)
    c, m = np.meshgrid(np.log2(comm), np.log2(msg), indexing="ij")
    one = 10 + m                                      # method 1: best at every size
    default = np.where(c >= 4, 5 + m, 30 + 2 * m)     # the default: best only from 16 ranks on
    dmap = map_from_cube("bcast", comm, msg, [Method("1", 0), Method("2", 0)], np.stack([one, one * 1.5], axis=2),
                         None, default)
    fn = build_size_tree(dmap, **dict(DEFAULT_BUILD, keep_default="auto", outside="auto"))
    record = fn.provenance["outside"]
    assert "comm_above" in record["handed_back"] and "msg_above" in record["extrapolated"]
    assert fn.query(64, 128) == DEFAULT_METHOD and fn.query(2, 1 << 20).algorithm == "1"


def test_message_folds_hold_out_every_other_size_of_each_communicator_size():
    dmap = random_map(1, 2, 8, 2, ragged=True)          # row 0 measured at sizes 0, 2, 4, 6; row 1 at 1, 3, 5, 7
    masks = size.folds(dmap)
    assert len(masks) == 2                                 # two communicator sizes: that axis is not cut
    for mask in masks:
        assert mask[0].sum() == 2 and mask[1].sum() == 2   # half of each row's own sizes, never a whole row
    assert np.array_equal(masks[0] | masks[1], dmap.measured)
