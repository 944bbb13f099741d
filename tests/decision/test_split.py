"""Cuts at measured sizes (decision/split.py): exact trees, constraints, leaf budgets."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from quadsel.decision.grid import Axis, DecisionGrid
from quadsel.decision.split import BlockCosts, grow_exact


def random_grid(seed, rows, cols, k, gaps=0.0):
    rng = np.random.default_rng(seed)
    penalty = rng.uniform(0.0, 50.0, size=(rows, cols, k))
    best = rng.integers(0, k, size=(rows, cols))
    np.put_along_axis(penalty, best[:, :, None], 0.0, axis=2)
    weight = np.where(rng.uniform(size=(rows, cols)) < gaps, 0.5, 1.0)
    return DecisionGrid(Axis.of(np.arange(1, rows + 1)), Axis.of(np.arange(1, cols + 1)), penalty, weight, best)


def tree_penalty(grid, tree):
    chosen = np.take_along_axis(grid.penalty, tree.paint(*grid.shape)[:, :, None], axis=2)[:, :, 0]
    return float((chosen * grid.weight).sum())


@given(st.integers(0, 10**6), st.integers(1, 9), st.integers(1, 12), st.integers(1, 4))
@settings(max_examples=80, deadline=None)
def test_exact_tree_picks_a_best_method_in_every_cell(seed, rows, cols, k):
    grid = random_grid(seed, rows, cols, k)
    tree = grow_exact(grid)
    tree.validate(rows, cols, k)
    assert tree_penalty(grid, tree) == 0.0


@given(st.integers(0, 10**6), st.integers(1, 8), st.integers(1, 10), st.integers(0, 3))
@settings(max_examples=60, deadline=None)
def test_depth_limit_holds(seed, rows, cols, depth):
    grid = random_grid(seed, rows, cols, 3)
    tree = grow_exact(grid, max_depth=depth)
    assert tree.depth.max() <= depth
    tree.validate(rows, cols, 3)


def test_a_change_along_one_axis_is_one_two_way_cut():
    best = np.array([[0, 0, 1, 1, 1]] * 4)
    grid = random_grid(0, 4, 5, 2)
    grid.best = best
    grid.penalty = np.stack([best * 10.0, (1 - best) * 10.0], axis=2)
    tree = grow_exact(grid)
    assert tree.n_leaves == 2 and tree.comm_cut[0] == -1 and tree.msg_cut[0] == 2


def test_an_exact_tree_with_majority_leaves_and_a_tolerance_is_exact_within_it():
    """Review finding: the leaf of a block where one method is exact takes that method, whatever the leaf rule."""
    from quadsel.decision.builder import build_size_tree
    from quadsel.decision.decision_map import build_decision_map, penalty_cube
    from quadsel.ingest import read_measurements
    from helpers import REPO
    dmap = build_decision_map(read_measurements([str(REPO / "examples" / "ompi5-bcast.csv")]))
    for leaf_rule in ("majority", "penalty"):
        fn = build_size_tree(dmap, split="measured", between="least-bad", leaf_rule=leaf_rule, tolerance=5.0)
        chosen = np.take_along_axis(penalty_cube(dmap), fn.choice_grid()[:, :, None], axis=2)[:, :, 0]
        assert np.nanmax(chosen) <= 5.0 + 1e-9, leaf_rule


@given(st.integers(0, 10**6), st.integers(2, 6), st.integers(2, 8), st.integers(2, 4),
       st.sampled_from([("measured", "floor"), ("measured", "least-bad"), ("midpoint", "floor")]))
@settings(max_examples=60, deadline=None)
def test_exact_trees_never_deploy_a_method_where_it_was_not_measured(seed, n_comm, n_msg, k, builder):
    """Review finding: with methods missing at some points, an exact tree picks a measured best method at every
    measured point (an unmeasured method was free where only one method had been measured)."""
    from quadsel.decision.builder import build_size_tree
    from quadsel.decision.decision_map import build_decision_map
    from helpers import table_from_cube
    rng = np.random.default_rng(seed)
    cost = rng.uniform(1.0, 10.0, size=(n_comm, n_msg, k))
    cost[rng.uniform(size=cost.shape) < 0.35] = np.nan
    cost[:, :, 0] = np.where(np.all(np.isnan(cost), axis=2), 5.0, cost[:, :, 0])    # every point measured
    dmap = build_decision_map(table_from_cube(cost, list(range(2, 2 + n_comm)), [2 ** i for i in range(n_msg)],
                                              [(str(i + 1), 0) for i in range(k)]))
    split, between = builder
    fn = build_size_tree(dmap, split=split, between=between, leaf_rule="penalty", tolerance=0.0)
    chosen = np.take_along_axis(dmap.cost, fn.choice_grid()[:, :, None], axis=2)[:, :, 0]
    assert np.allclose(chosen, np.nanmin(dmap.cost, axis=2))


def test_a_leaf_budget_and_a_threshold_do_not_combine():
    from quadsel.decision.builder import build_size_tree
    from quadsel.decision.decision_map import build_decision_map
    from quadsel.errors import OptionError
    from helpers import random_table
    rows, _, _ = random_table(np.random.default_rng(0), 3, 4, 2)
    with pytest.raises(OptionError, match="do not combine"):
        build_size_tree(build_decision_map(rows), split="measured", max_leaves=4, accuracy_threshold=0.5)


@given(st.integers(0, 10**6), st.integers(1, 8), st.integers(1, 10), st.integers(1, 4))
@settings(max_examples=60, deadline=None)
def test_every_split_of_a_block_is_scored_as_its_children_sum(seed, rows, cols, k):
    """split_table scores all cuts at once; each must be the sum of its children's least penalty sums."""
    from quadsel.decision.split import _children, split_table
    grid = random_grid(seed, rows, cols, k, gaps=0.3)
    costs = BlockCosts(grid)
    rng = np.random.default_rng(seed)
    r0, c0 = int(rng.integers(0, rows)), int(rng.integers(0, cols))
    block = (r0, int(rng.integers(r0 + 1, rows + 1)), c0, int(rng.integers(c0 + 1, cols + 1)))
    if block[1] - block[0] == 1 and block[3] - block[2] == 1:
        return
    cc, mm, after, n = split_table(costs, block)
    assert len(set(zip(cc.tolist(), mm.tolist()))) == cc.size
    for c, m, a, children in zip(cc.tolist(), mm.tolist(), after.tolist(), n.tolist()):
        kids = _children(block, c, m)
        assert children == len(kids)
        assert a == pytest.approx(sum(float(costs.cost(*kid)) for kid in kids), abs=1e-9)
