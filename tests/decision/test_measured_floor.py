"""Small grids keep their measured structure (decision/measured_floor.py, issue 31), and build says when its tree
loses a lot at a measured point."""

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from quadsel.cli import main
from quadsel.decision import measured_floor
from quadsel.decision.builder import DEFAULT_BUILD, build_size_tree
from quadsel.decision.decision_map import Method, build_decision_map, map_from_cube

from helpers import random_table

MSG = np.array([1, 4, 16, 64, 256])


def two_methods(b, comm=(2,)):
    """A 1 x 5 sweep (an allreduce at 2 ranks): method 1 takes 10 µs everywhere, method 2 the times `b`."""
    cost = np.stack([np.full(MSG.size, 10.0), np.asarray(b, float)], axis=1)[None].repeat(len(comm), axis=0)
    return map_from_cube("allreduce", np.array(comm), MSG, [Method("1", 0), Method("2", 0)], cost)


def test_a_small_grid_the_folds_cannot_judge_keeps_its_structure():
    # method 2 is 20 % faster up to 16 B, 10 % at 64 B, and 20 % slower at 256 B. Both folds score one leaf and
    # the exact tree alike (3.33 %), so `min` (the rule before issue 31) built one leaf: method 2 everywhere,
    # 20 % worse than the best at 256 B.
    dmap = two_methods([8, 8, 8, 9, 12])
    before = build_size_tree(dmap, **dict(DEFAULT_BUILD, budget_rule="min"))
    assert before.options.max_leaves == 1 and {before.query(2, int(m)).algorithm for m in MSG} == {"2"}
    fn = build_size_tree(dmap, **DEFAULT_BUILD)
    assert [fn.query(2, int(m)).algorithm for m in MSG] == ["2", "2", "2", "2", "1"]
    floor = fn.provenance["size"]["measured_floor"]
    assert floor["folds_chose"] == 1 and floor["built"] is None and dict(floor["measured_penalty"])[1] == 4.0


def test_a_budget_the_folds_can_tell_is_worse_is_not_taken():
    # the same with three communicator sizes: the folds see that the larger tree does better, nothing to floor;
    # and per-fold penalties far apart are not "cannot tell apart"
    fn = build_size_tree(two_methods([8, 8, 8, 9, 12], comm=(2, 4, 8)), **DEFAULT_BUILD)
    assert "measured_floor" not in fn.provenance["size"]
    assert measured_floor.untold({1: [1.0, 1.1, 0.9, 1.0], 2: [5.0, 5.2, 4.8, 5.1]}, 1, 2.0) == [1]


@settings(deadline=None, max_examples=60)
@given(st.dictionaries(st.sampled_from([1, 2, 4, 8, 16, None]), st.lists(st.floats(0, 100), min_size=2, max_size=2),
                       min_size=1), st.floats(0, 100), st.data())
def test_the_floor_never_builds_a_smaller_tree_and_stays_within_its_points(per_fold, spread, data):
    order = sorted((b for b in per_fold if b is not None)) + ([None] if None in per_fold else [])
    per_fold = {b: per_fold[b] for b in order}
    chosen = data.draw(st.sampled_from(order))
    candidates = measured_floor.untold(per_fold, chosen, measured_floor.FLOOR_SE)
    assert candidates[0] == chosen and all(order.index(b) >= order.index(chosen) for b in candidates)
    measured = {b: data.draw(st.floats(0, spread)) for b in candidates}
    built = measured_floor.floor_budget(candidates, measured, measured_floor.FLOOR_POINTS)
    assert measured[built] <= min(measured.values()) + measured_floor.FLOOR_POINTS + 1e-9
    assert all(measured[b] > min(measured.values()) + measured_floor.FLOOR_POINTS for b in candidates[:candidates.index(built)])


@settings(deadline=None, max_examples=12)
@given(st.integers(0, 10 ** 6), st.integers(8, 10), st.integers(8, 12), st.integers(2, 4))
def test_on_grids_large_enough_the_default_builds_what_min_built(seed, n_comm, n_msg, n_methods):
    # 64 measured points and more: the folds' choice stands, tree for tree (docs/methodology.md, "Small grids")
    rows, _, _ = random_table(np.random.default_rng(seed), n_comm, n_msg, n_methods)
    dmap = build_decision_map(rows)
    assert not measured_floor.is_small(dmap)
    before = build_size_tree(dmap, **dict(DEFAULT_BUILD, budget_rule="min"))
    after = build_size_tree(dmap, **DEFAULT_BUILD)
    assert after.options.max_leaves == before.options.max_leaves
    assert np.array_equal(after.cell_methods(), before.cell_methods())
    assert after.methods == before.methods


def _csv(path, b):
    lines = ["collective,algorithm,segsize,comm_size,msg_size,time_us"]
    for m, t in zip(MSG, b):
        lines += [f"allreduce,1,0,2,{m},10.0", f"allreduce,2,0,2,{m},{t}"]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_build_says_in_one_line_when_its_tree_loses_a_lot_at_a_measured_point(tmp_path):
    # one leaf, method 2 everywhere: 50 % worse than method 1 at 256 B
    src = _csv(tmp_path / "allreduce.csv", [8, 8, 8, 9, 15])
    # (one leaf in all: --extrapolate, a budget counts the leaves handing back the sizes outside the range too)
    out = CliRunner().invoke(main, ["build", src, "--max-leaves", "1", "--extrapolate", "-o", str(tmp_path / "t.qt.json")])
    assert out.exit_code == 0, out.output
    warnings = [line for line in out.output.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "loses 50.0 % at 2 ranks, 256 B" in warnings[0] and "runs 2" in warnings[0]
    # the default build keeps the structure: nothing to say
    quiet = CliRunner().invoke(main, ["build", src, "-o", str(tmp_path / "d.qt.json")])
    assert quiet.exit_code == 0 and "warning:" not in quiet.output
    # a loss of at most WARN_PERCENT is not "a lot"
    src = _csv(tmp_path / "small.csv", [8, 8, 8, 9, 12])
    fine = CliRunner().invoke(main, ["build", src, "--max-leaves", "1", "--extrapolate", "-o",
                                     str(tmp_path / "s.qt.json")])
    assert fine.exit_code == 0 and "warning:" not in fine.output


def test_the_warning_names_the_default_when_it_is_the_fastest_and_gives_advice_that_applies():
    """Issue 39: "it runs m02, the fastest measured is m02" named the fastest forced method where the library
    default was faster, and advised --max-leaves none to an exact tree."""
    cost = np.stack([np.full(MSG.size, 10.0), np.full(MSG.size, 12.0)], axis=1)[None]
    default = np.array([[25.0, 25.0, 25.0, 25.0, 2.0]])        # the default is 5 x faster at 256 B, slow elsewhere
    dmap = map_from_cube("allreduce", np.array([2]), MSG, [Method("1", 0), Method("2", 0)], cost, default_cost=default)
    paper = build_size_tree(dmap, leaf_rule="majority")     # the paper's exact tree: algorithms only
    line = measured_floor.loss_warning(dmap, paper, _penalty(dmap, paper))
    assert "loses 400.0 % at 2 ranks, 256 B: it runs 1, the fastest measured is default" in line
    assert "cannot choose the library default" in line and "--max-leaves" not in line
    exact = build_size_tree(dmap, **dict(DEFAULT_BUILD, max_leaves=None, keep_default="auto"))
    assert measured_floor.loss_warning(dmap, exact, _penalty(dmap, exact)) is None       # it runs the default there
    one = build_size_tree(dmap, **dict(DEFAULT_BUILD, max_leaves=1, keep_default="auto"))
    line = measured_floor.loss_warning(dmap, one, _penalty(dmap, one))
    assert "the fastest measured is default" in line and "a larger tree" in line


def _penalty(dmap, fn):
    from quadsel.evaluate.comparators import QuadtreeSelector, choice_on
    from quadsel.evaluate.penalty import penalty_grid
    return penalty_grid(dmap, choice_on(QuadtreeSelector.of(fn), dmap))


@pytest.mark.parametrize("limit, says, not_says", [
    (dict(max_depth=0, max_leaves=None), "a --max-depth above 0", "--max-leaves"),
    (dict(accuracy_threshold=0.5, max_leaves=None), "a --threshold above 0.5", "--max-leaves"),
    (dict(max_leaves=1), "--max-leaves N or none", "--max-depth"),
])
def test_the_advice_names_the_limit_the_tree_was_built_with(limit, says, not_says):
    """A `--max-depth 0` tree was told to try "--max-leaves N or none", which leaves it at depth 0."""
    cost = np.stack([np.full(MSG.size, 10.0), np.full(MSG.size, 12.0)], axis=1)[None]
    cost[0, -1] = [13.0, 10.0]                       # method 2 is 30 % faster at 256 B, 20 % slower elsewhere
    dmap = map_from_cube("allreduce", np.array([2]), MSG, [Method("1", 0), Method("2", 0)], cost)
    tree = build_size_tree(dmap, **dict(DEFAULT_BUILD, **limit))
    line = measured_floor.loss_warning(dmap, tree, _penalty(dmap, tree))
    assert line is not None and "loses 30.0 % at 2 ranks, 256 B: it runs 1, the fastest measured is 2" in line, line
    assert says in line and not_says not in line, line
