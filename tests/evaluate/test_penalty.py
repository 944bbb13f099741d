import numpy as np
import pytest

from quadsel.decision.decision_function import build_decision_function
from quadsel.decision.decision_map import build_decision_map
from quadsel.evaluate.penalty import default_penalty_grid, penalty_grid, summarize

from helpers import random_table, table_from_cube


def test_penalty_is_relative_to_the_best_measured_method():
    cost = np.array([[[1.0, 2.0], [4.0, 3.0]]])
    default = np.array([[1.5, 2.4]])
    dmap = build_decision_map(table_from_cube(cost, [2], [8, 64], [("1", 0), ("2", 0)], default=default))
    grid = penalty_grid(dmap, np.array([[1, 0]]))          # the worse method at both points
    assert grid.tolist() == [[100.0, pytest.approx(100 / 3)]]
    assert default_penalty_grid(dmap).tolist() == [[50.0, pytest.approx(-20.0)]]   # default can beat the set
    s = summarize(grid, dmap)
    assert (s.min, s.max, s.points, s.unscored) == (pytest.approx(100 / 3), 100.0, 2, 0)
    assert s.median == pytest.approx((100 + 100 / 3) / 2)
    assert s.over_5 == 2 and s.to_json()["points_over_5"] == 2
    assert summarize(penalty_grid(dmap, np.array([[0, 1]])), dmap).over_5 == 0


def test_filled_points_are_never_scored():
    nan = np.nan
    cost = np.array([[[1.0, 2.0], [nan, nan], [1.0, 2.0]], [[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]])
    dmap = build_decision_map(table_from_cube(cost, [2, 4], [1, 2, 4], [("1", 0), ("2", 0)]))
    grid = penalty_grid(dmap, np.ones((2, 3), dtype=int))
    assert np.isnan(grid[0, 1])
    assert summarize(grid, dmap).points == 5


@pytest.mark.parametrize("seed", range(5))
def test_exact_tree_has_zero_penalty_and_restricted_trees_do_not(seed):
    rows, _, _ = random_table(np.random.default_rng(seed), 7, 9, 4)
    dmap = build_decision_map(rows)
    exact = summarize(penalty_grid(dmap, build_decision_function(dmap).choice_grid()), dmap)
    assert (exact.max, exact.mean) == (0.0, 0.0)
    one_leaf = summarize(penalty_grid(dmap, build_decision_function(dmap, max_depth=0).choice_grid()), dmap)
    assert one_leaf.max > 0 and one_leaf.min >= 0
