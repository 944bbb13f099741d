"""Cuts at measured sizes (decision/split.py): exact trees, constraints, leaf budgets."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from quadsel.decision.grid import Axis, DecisionGrid
from quadsel.decision.split import BlockCosts, best_split, grow_best_first, grow_exact


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


@given(st.integers(0, 10**6), st.integers(1, 8), st.integers(1, 10), st.integers(2, 4), st.integers(1, 20))
@settings(max_examples=80, deadline=None)
def test_leaf_budget_is_kept_and_a_large_one_reaches_zero_penalty(seed, rows, cols, k, budget):
    grid = random_grid(seed, rows, cols, k, gaps=0.3)
    tree = grow_best_first(grid, budget)
    tree.validate(rows, cols, k)
    assert tree.n_leaves <= budget
    full = grow_best_first(grid, rows * cols)
    assert tree_penalty(grid, full) == 0.0
    assert tree_penalty(grid, full) <= tree_penalty(grid, tree)


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


def test_plateau_does_not_stop_the_growth():
    """A lone column: every single two-way cut leaves the penalty as it is; two levels remove it."""
    best = np.array([[0, 1, 0]])
    penalty = np.stack([best * 10.0, (1 - best) * 10.0], axis=2)
    grid = DecisionGrid(Axis.of([1]), Axis.of([1, 2, 3]), penalty, np.ones((1, 3)), best)
    assert best_split(BlockCosts(grid), (0, 1, 0, 3))[0] == pytest.approx(10.0)   # no single cut helps
    tree = grow_best_first(grid, 3)
    assert tree.n_leaves == 3 and tree_penalty(grid, tree) == 0.0
