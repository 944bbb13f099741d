"""Leaf-budget growth (decision/best_first.py) and its look-ahead (decision/lookahead.py)."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from quadsel.decision.best_first import budget_trees, grow_best_first
from quadsel.decision.grid import Axis, DecisionGrid
from quadsel.decision import lookahead
from quadsel.decision.lookahead import LookAhead, _gain_per_leaf
from quadsel.decision.split import BlockCosts, best_split, split_table

from test_split import random_grid, tree_penalty


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


@pytest.mark.parametrize("full", [True, False])
def test_plateau_does_not_stop_the_growth(full):
    """A lone column: every single two-way cut leaves the penalty as it is; two levels remove it."""
    best = np.array([[0, 1, 0]])
    penalty = np.stack([best * 10.0, (1 - best) * 10.0], axis=2)
    grid = DecisionGrid(Axis.of([1]), Axis.of([1, 2, 3]), penalty, np.ones((1, 3)), best)
    assert best_split(BlockCosts(grid), (0, 1, 0, 3))[0] == pytest.approx(10.0)   # no single cut helps
    tree = grow_best_first(grid, 3, ahead=LookAhead(BlockCosts(grid), full))
    assert tree.n_leaves == 3 and tree_penalty(grid, tree) == 0.0


@pytest.mark.parametrize("full", [True, False])
def test_a_plus_of_a_lone_row_and_a_lone_column_is_crossed(full):
    """A lone row and a lone column across a 9 x 9 map: no single split of the map gains (a plateau), and the
    look-ahead from the two-way splits alone crosses it -- both lone bands isolated, no penalty left."""
    best = np.zeros((9, 9), dtype=int)
    best[4, :] = best[:, 4] = 1
    penalty = np.stack([best * 10.0, (1 - best) * 10.0], axis=2)
    grid = DecisionGrid(Axis.of(np.arange(1, 10)), Axis.of(np.arange(1, 10)), penalty, np.ones((9, 9)), best)
    costs = BlockCosts(grid)
    cc, mm, after, n = split_table(costs, (0, 9, 0, 9))
    assert (costs.cost(0, 9, 0, 9) - after).max() <= 0        # no split of any kind gains on its own
    tree = grow_best_first(grid, 16, ahead=LookAhead(costs, full))
    assert tree_penalty(grid, tree) == 0.0


@pytest.mark.parametrize("full", [True, False])
def test_on_a_plateau_the_look_ahead_scores_the_two_way_splits_only(full):
    """Where no split gains on its own, the look-ahead starts from the rows + columns two-way splits, not the
    rows x columns four-way ones (docs/methodology.md, *Two depths of look-ahead*): what made a map one method
    wins everywhere the build's slowest case (benchmarks/flat_maps.py)."""
    rows, cols = 30, 40
    rng = np.random.default_rng(3)
    penalty = np.stack([np.zeros((rows, cols)), rng.uniform(5.0, 6.0, (rows, cols))], axis=2)
    penalty[:, 11] = [1.0, 0.0]                               # a lone column the other method wins
    best = np.argmin(penalty, axis=2)
    grid = DecisionGrid(Axis.of(np.arange(1, rows + 1)), Axis.of(np.arange(1, cols + 1)), penalty,
                        np.ones((rows, cols)), best)
    costs = BlockCosts(grid)
    seen = []
    real = lookahead.split_table

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        seen.append(out)
        return out
    ahead = LookAhead(costs, full)
    with mock.patch.object(lookahead, "_children", wraps=lookahead._children) as children, \
            mock.patch.object(lookahead, "_looked_ahead", wraps=lookahead._looked_ahead) as batched, \
            mock.patch.object(lookahead, "split_table", spy):
        found = _gain_per_leaf(costs, ahead, (0, rows, 0, cols), None, batch=False)
    assert (costs.cost(0, rows, 0, cols) - seen[0][2]).max() <= 0        # a plateau
    assert batched.call_count == 0 and 0 < children.call_count <= (rows - 1) + (cols - 1)
    assert all(-1 in call.args[1:] for call in children.call_args_list)     # two-way splits only
    assert found is not None and found[3] == 1 and found[0] > 0        # a two-way split, gainful two levels down
    with mock.patch.object(lookahead, "_looked_ahead", wraps=lookahead._looked_ahead) as batched:
        at_once = _gain_per_leaf(costs, LookAhead(costs, False), (0, rows, 0, cols), None)
    if not full:
        assert at_once == found
    candidates = [(call.args[3], call.args[4]) for call in batched.call_args_list]
    assert 0 < sum(cc.size for cc, _ in candidates) <= (rows - 1) + (cols - 1)
    assert all(((cc == -1) | (mm == -1)).all() for cc, mm in candidates)


@pytest.mark.parametrize("full", [True, False])
@given(st.integers(0, 10**6), st.integers(1, 12), st.integers(1, 14), st.integers(2, 5),
       st.lists(st.integers(1, 80), min_size=1, max_size=6, unique=True))
@settings(max_examples=60, deadline=None)
def test_one_growth_gives_the_tree_of_every_budget(full, seed, rows, cols, k, budgets):
    """The trees budget_trees reads from one growth are the trees grow_best_first grows for each budget
    (node for node), with either look-ahead."""
    grid = random_grid(seed, rows, cols, k, gaps=0.3)
    budgets = sorted(budgets)
    read = list(budget_trees(grid, budgets, ahead=LookAhead(BlockCosts(grid), full)))
    assert len(read) == len(budgets)
    for budget, tree in zip(budgets, read):
        direct = grow_best_first(grid, budget, ahead=LookAhead(BlockCosts(grid), full))
        assert tree.n_leaves <= budget
        for name in ("children", "comm_cut", "msg_cut", "method", "depth"):
            assert np.array_equal(getattr(tree, name), getattr(direct, name)), (budget, name)


def test_the_look_ahead_is_full_on_small_grids_only():
    assert LookAhead(BlockCosts(random_grid(0, 64, 64, 2))).full
    assert not LookAhead(BlockCosts(random_grid(0, 64, 65, 2))).full


def test_budgets_must_come_in_increasing_order():
    grid = random_grid(1, 4, 4, 3, gaps=0.0)
    with pytest.raises(ValueError, match="increasing"):
        list(budget_trees(grid, [32, 16]))


@given(st.integers(0, 10**6), st.integers(1, 8), st.integers(1, 10), st.integers(1, 4))
@settings(max_examples=60, deadline=None)
def test_the_look_ahead_gives_each_block_its_best_single_and_two_way_split(seed, rows, cols, k):
    grid = random_grid(seed, rows, cols, k, gaps=0.3)
    costs = BlockCosts(grid)
    ahead = LookAhead(costs)
    rng = np.random.default_rng(seed)
    r0, c0 = int(rng.integers(0, rows)), int(rng.integers(0, cols))
    block = (r0, int(rng.integers(r0 + 1, rows + 1)), c0, int(rng.integers(c0 + 1, cols + 1)))
    if block[1] - block[0] == 1 and block[3] - block[2] == 1:
        assert ahead.two_way(block) is None and ahead.best(block) is None
        return
    cc, mm, after, n = split_table(costs, block)
    gain = costs.cost(*block) - after
    # the two-way look-ahead sums each half as a band less an edge, split_table by four corners: the same up to
    # rounding, so one of the best two-way splits of the table (the first, unless rounding parts equals)
    top = gain[n == 2].max()
    tol = 1e-9 * max(1.0, abs(top))
    two = ahead.two_way(block)
    at = int(np.flatnonzero((cc == two[1]) & (mm == two[2]))[0])
    assert two[3] == 1 and n[at] == 2 and abs(two[0] - top) <= tol and gain[at] >= top - tol
    assert ahead.two_way(block) is two          # scored once
    per_leaf = gain / (n - 1)
    best = ahead.best(block)
    assert best[0] == per_leaf.max() and best[3] == n[int(np.argmax(per_leaf))] - 1
    assert (best[1], best[2]) == (cc[int(np.argmax(per_leaf))], mm[int(np.argmax(per_leaf))])
    assert ahead.best(block) is best


@pytest.mark.parametrize("chunk", [64, 3])
@given(st.integers(0, 10**6), st.integers(1, 7), st.integers(1, 8), st.integers(1, 5), st.sampled_from([0, 5, 25]))
@settings(max_examples=40, deadline=None)
def test_the_look_ahead_at_once_finds_what_the_loop_finds(chunk, seed, rows, cols, k, coarse):
    """The batched two-way look-ahead (all candidates' children in array operations) gives the loop's split and the
    same gain to the last bit, on every block of the grid, with and without a budget left, ties included (`coarse`: penalties rounded to
    multiples of it, so that many splits gain the same or nothing); `chunk` candidates at a time (3: the
    candidates that cannot beat the best of the chunks before are left out)."""
    grid = random_grid(seed, rows, cols, k, gaps=0.3)
    if coarse:
        grid.penalty[:] = np.round(grid.penalty / coarse) * coarse
    costs = BlockCosts(grid)
    for r0 in range(rows):
        for r1 in range(r0 + 1, rows + 1):
            for c0 in range(cols):
                for c1 in range(c0 + 1, cols + 1):
                    block = (r0, r1, c0, c1)
                    for budget_left in (None, 1, 2, 3, 4, 5, 6):
                        with mock.patch.object(lookahead, "CHUNK", chunk):
                            at_once = _gain_per_leaf(costs, LookAhead(costs, full=False), block, budget_left)
                        looped = _gain_per_leaf(costs, LookAhead(costs, full=False), block, budget_left, batch=False)
                        assert at_once == looped, (block, budget_left)
