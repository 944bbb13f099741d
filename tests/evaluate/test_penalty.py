import numpy as np
import pytest

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from hypothesis import given, settings, strategies as st

from quadsel.decision.decision_map import penalty_cube
from quadsel.evaluate.penalty import default_penalty_grid, penalty_grid, summarize

from helpers import random_table, table_from_cube


def test_penalty_is_relative_to_the_best_measured_method():
    cost = np.array([[[1.0, 2.0], [4.0, 3.0]]])
    default = np.array([[1.5, 2.4]])
    dmap = build_decision_map(table_from_cube(cost, [2], [8, 64], [("1", 0), ("2", 0)], default=default))
    grid = penalty_grid(dmap, np.array([[1, 0]]))          # the worse method at both points
    # the default beats both forced methods at 64 B: the penalty there is against it (2.4 µs), never negative
    assert grid.tolist() == [[100.0, pytest.approx((4.0 - 2.4) / 2.4 * 100)]]
    assert default_penalty_grid(dmap).tolist() == [[50.0, 0.0]]
    s = summarize(grid, dmap)
    assert (s.min, s.max, s.points, s.unscored) == (pytest.approx(200 / 3), 100.0, 2, 0)
    assert s.median == pytest.approx((100 + 200 / 3) / 2)
    assert s.over_5 == 2 and s.to_json()["points_over_5"] == 2
    assert summarize(penalty_grid(dmap, np.array([[0, -2]])), dmap).over_5 == 0     # the best choice at both


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
    exact = summarize(penalty_grid(dmap, build_size_tree(dmap).choice_grid()), dmap)
    assert (exact.max, exact.mean) == (0.0, 0.0)
    one_leaf = summarize(penalty_grid(dmap, build_size_tree(dmap, max_depth=0).choice_grid()), dmap)
    assert one_leaf.max > 0 and one_leaf.min >= 0


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.integers(1, 5), st.integers(1, 4), st.floats(0.0, 1.0))
def test_no_penalty_is_negative_even_where_the_default_beats_every_method(seed, n_comm, n_msg, n_methods, gaps):
    """A penalty is against the best measured choice, the library default included: every choice -- a method, the
    default (LIBRARY_DEFAULT), a method the map lacks (-1) -- at every scored point is >= 0, and the best is 0."""
    rng = np.random.default_rng(seed)
    cost = rng.uniform(1.0, 100.0, size=(n_comm, n_msg, n_methods))
    cost[rng.random(cost.shape) < gaps * 0.5] = np.nan
    default = rng.uniform(0.5, 100.0, size=(n_comm, n_msg))     # often faster than every forced method
    default[rng.random(default.shape) < 0.2] = np.nan
    methods = [(str(k + 1), 0) for k in range(n_methods)]
    rows = table_from_cube(cost, list(range(2, 2 + n_comm)), [2 ** k for k in range(n_msg)], methods)
    rows += [r for r in table_from_cube(default[:, :, None], list(range(2, 2 + n_comm)), [2 ** k for k in range(n_msg)],
                                        [("default", 0)])]
    if not any(r.algorithm != "default" for r in rows):
        return
    dmap = build_decision_map(rows)
    choice = rng.integers(-2, dmap.cost.shape[2], size=dmap.shape)
    grid = penalty_grid(dmap, choice)
    scored = grid[dmap.measured & ~np.isnan(grid)]
    assert (scored >= 0).all()
    summary = summarize(grid, dmap)
    assert summary.points == 0 or (summary.min >= 0 and summary.mean >= 0)
    if dmap.default_cost is not None:
        assert (default_penalty_grid(dmap)[~np.isnan(default_penalty_grid(dmap))] >= 0).all()
    cube = penalty_cube(dmap)
    assert (cube[dmap.measured] >= 0).all()
    # the best measured choice scores 0: a forced method, or the default where it is faster than all of them
    lowest = np.fmin(cube.min(axis=2), np.inf if dmap.default_cost is None else default_penalty_grid(dmap))
    assert np.allclose(lowest[dmap.measured], 0.0)


def test_build_and_report_print_no_negative_penalty_where_the_default_beats_every_method(tmp_path):
    """`build` on ORFEO's bcast printed `mean -11.74 %`: the default beat the incomplete forced set. Every penalty
    build and report print is >= 0 (the speed-up over the default is the figure with its own name)."""
    import json
    import re
    from click.testing import CliRunner
    from quadsel.cli import main
    rng = np.random.default_rng(3)
    cost = rng.uniform(10.0, 20.0, size=(4, 6, 2))
    default = rng.uniform(2.0, 30.0, size=(4, 6))              # 4x faster than every method at many points
    rows = table_from_cube(cost, [2, 4, 8, 16], [2 ** k for k in range(6)], [("1", 0), ("6", 0)], default=default)
    csv = tmp_path / "m.csv"
    csv.write_text("collective,algorithm,segsize,comm_size,msg_size,time_us\n" + "".join(
        f"{r.collective},{r.algorithm},{r.segsize},{r.comm_size},{r.msg_size},{r.time}\n" for r in rows))
    runner = CliRunner()
    for flags in ([], ["--keep-default"], ["--no-keep-default"], ["--paper"]):
        out = runner.invoke(main, ["build", str(csv), *flags, "-o", str(tmp_path / "t.qt.json")])
        assert out.exit_code == 0, out.output
        mean, worst = map(float, re.search(r"mean (-?[\d.]+) %, max (-?[\d.]+) %", out.output).groups())
        assert 0 <= mean <= worst
    report = runner.invoke(main, ["report", str(csv), "--format", "json", "--no-compare"])
    assert report.exit_code == 0, report.output
    for row in json.loads(report.stdout)["rows"]:
        assert all(row[k] >= 0 for k in ("penalty_min", "penalty_mean", "penalty_median", "penalty_max")), row
