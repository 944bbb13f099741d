"""What makes the leaf-budget growth cheap without changing its trees: nodes scored only when they reach the top
of the heap under an upper bound (LookAhead.bound), a block's dominated methods left out of its look-ahead
(BlockCosts.undominated), the exact tree's leaf count walked only as far as the budget ladder climbs
(split.ExactLeaves, size.Ladder), and no four-way sums where a budget has no room for them."""

import heapq
import itertools
from unittest import mock

import numpy as np
from hypothesis import given, settings, strategies as st

from quadsel.decision import best_first, size
from quadsel.decision.best_first import budget_trees, grow_best_first
from quadsel.decision.lookahead import LookAhead, gain_per_leaf
from quadsel.decision.split import BlockCosts, ExactLeaves, grow_exact, split_table

from test_split import random_grid

SAME = ("children", "comm_cut", "msg_cut", "method", "depth")


def _blocks(rng, rows, cols, n):
    for _ in range(n):
        r0, c0 = int(rng.integers(0, rows)), int(rng.integers(0, cols))
        yield r0, int(rng.integers(r0 + 1, rows + 1)), c0, int(rng.integers(c0 + 1, cols + 1))


@given(st.integers(0, 10**6), st.integers(1, 8), st.integers(1, 10), st.integers(1, 6), st.integers(1, 40),
       st.booleans())
@settings(max_examples=60, deadline=None)
def test_scoring_every_node_when_queued_grows_the_same_tree(seed, rows, cols, k, budget, full):
    """The lazy heap (a node queued under its bound, scored at the top) against the eager one (every node
    scored when queued: its bound is its score): the same splits in the same order, with or without budgets."""
    grid = random_grid(seed, rows, cols, k, gaps=0.3)
    lazy = grow_best_first(grid, budget, ahead=LookAhead(BlockCosts(grid), full))
    with mock.patch.object(best_first._Growth, "push", _push_scored):
        eager = grow_best_first(grid, budget, ahead=LookAhead(BlockCosts(grid), full))
        ladder = list(budget_trees(grid, [1, 2, 4, 8, 16, 32], ahead=LookAhead(BlockCosts(grid), full)))
    for name in SAME:
        assert np.array_equal(getattr(lazy, name), getattr(eager, name))
    for b, tree in zip([1, 2, 4, 8, 16, 32], ladder):
        alone = grow_best_first(grid, b, ahead=LookAhead(BlockCosts(grid), full))
        for name in SAME:
            assert np.array_equal(getattr(tree, name), getattr(alone, name))


def _push_scored(growth, node, budget_left=None):
    """The growth before the lazy heap: every node scored within its budget left when queued."""
    block = growth.blocks[node]
    if (growth.max_depth is not None and growth.depth[node] >= growth.max_depth) or \
            (block[1] - block[0] == 1 and block[3] - block[2] == 1):
        return
    found = gain_per_leaf(growth.ahead.costs, growth.ahead, block, budget_left)
    if found is not None and found[0] > 1e-9:
        heapq.heappush(growth.heap, (-found[0], node, found, budget_left))


@given(st.integers(0, 10**6), st.integers(2, 9), st.integers(2, 12), st.integers(1, 6))
@settings(max_examples=60, deadline=None)
def test_a_blocks_bound_is_never_below_its_score(seed, rows, cols, k):
    """After a growth has filled the look-ahead's knowledge of two-way gains, every block's bound is at least
    its score with any budget, and what it knows is the block's best two-way gain."""
    grid = random_grid(seed, rows, cols, k, gaps=0.3)
    ahead = LookAhead(BlockCosts(grid), full=False)
    grow_best_first(grid, rows * cols, ahead=ahead)
    rng = np.random.default_rng(seed)
    blocks = list(ahead.two_way_known) + list(_blocks(rng, rows, cols, 20))
    for block in blocks:
        if block[1] - block[0] == 1 and block[3] - block[2] == 1:
            continue
        bound = ahead.bound(block)
        for budget in (None, 1, 2, 3, 5, 8):
            found = gain_per_leaf(ahead.costs, ahead, block, budget)
            assert found is None or found[0] <= bound
        if block in ahead.two_way_known and ahead.cost(block)[1] > 1e-9:
            two = ahead.two_way(block)
            assert abs(ahead.two_way_known[block] - two[0]) <= 1e-9 * max(1.0, abs(two[0]))


@given(st.integers(0, 10**6), st.integers(1, 8), st.integers(1, 10), st.integers(1, 8))
@settings(max_examples=80, deadline=None)
def test_the_least_over_the_undominated_methods_is_the_least_over_all(seed, rows, cols, k):
    """For any part of a block, the least penalty sum over the block's undominated methods is the least over
    every method (dominated: no better than another method at any cell of the block)."""
    grid = random_grid(seed, rows, cols, k, gaps=0.3)
    rng = np.random.default_rng(seed)
    if rng.uniform() < 0.5:           # methods that copy or worsen another everywhere: dominated on purpose
        worse = rng.integers(0, k, size=k)
        grid.penalty[:] = np.maximum(grid.penalty, grid.penalty[:, :, worse] * rng.integers(0, 2, size=k))
    costs = BlockCosts(grid)
    for block in _blocks(rng, rows, cols, 5):
        keep = costs.undominated(block)
        assert keep.size >= 1 and np.all(np.diff(keep) > 0)
        for part in _blocks(rng, block[1] - block[0], block[3] - block[2], 5):
            r0, r1, c0, c1 = part[0] + block[0], part[1] + block[0], part[2] + block[2], part[3] + block[2]
            sums = costs.sums[r1, c1] - costs.sums[r0, c1] - costs.sums[r1, c0] + costs.sums[r0, c0]
            assert np.isclose(sums[keep].min(), sums.min(), rtol=1e-12, atol=1e-9)
        inner = costs.undominated(next(_blocks(rng, block[1] - block[0], block[3] - block[2], 1)), keep)
        assert set(inner.tolist()) <= set(keep.tolist())


@given(st.integers(0, 10**6), st.integers(1, 9), st.integers(1, 12), st.integers(1, 4), st.integers(0, 2),
       st.sampled_from([1.0, 0.6]), st.sampled_from(["penalty", "majority"]))
@settings(max_examples=80, deadline=None)
def test_the_exact_leaf_count_is_walked_only_as_far_as_asked(seed, rows, cols, k, depth, threshold, rule):
    """ExactLeaves.more_than(n) answers as the exact (or depth-, threshold-limited) tree's leaf count does, for
    every n, asked in any order."""
    grid = random_grid(seed, rows, cols, k)
    max_depth = None if depth == 0 else depth
    leaves = grow_exact(grid, rule, max_depth, threshold).n_leaves
    count = ExactLeaves(grid, rule, max_depth, threshold)
    for n in (3, 1, 0, leaves - 1, leaves, leaves + 5, 2):
        assert count.more_than(n) == (leaves > n)
    assert count.counted <= leaves


def test_the_ladder_asks_only_as_far_as_it_is_read():
    asked = []

    def more_than(n):
        asked.append(n)
        return n < 100

    ladder = size.Ladder(more_than)
    assert list(itertools.islice(ladder, 3)) == [1, 2, 4] and asked == [1, 2, 4]
    assert list(ladder) == [1, 2, 4, 8, 16, 32, 64, None]
    assert list(ladder) == list(ladder) and asked == [1, 2, 4, 8, 16, 32, 64, 128]
    assert list(size.Ladder(lambda n: False)) == [None]


@given(st.integers(0, 10**6), st.integers(1, 8), st.integers(1, 10), st.integers(1, 5))
@settings(max_examples=60, deadline=None)
def test_the_two_way_splits_alone_are_those_of_the_whole_table(seed, rows, cols, k):
    grid = random_grid(seed, rows, cols, k, gaps=0.3)
    costs = BlockCosts(grid)
    block = (0, rows, 0, cols)
    if rows * cols == 1:
        return
    cc, mm, after, n = split_table(costs, block)
    cc2, mm2, after2, n2 = split_table(costs, block, four_way=False)
    assert np.array_equal(cc, cc2) and np.array_equal(mm, mm2) and np.array_equal(n, n2)
    assert np.array_equal(after[n == 2], after2[n == 2]) and np.all(np.isinf(after2[n == 4]))
