import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings, strategies as st

from quadsel.evaluate import report
from quadsel.cli import main
from quadsel.decision.builder import DEFAULT_BUILD, build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.evaluate.comparators import OutsideRuleSelector, choice_on
from quadsel.evaluate.penalty import penalty_grid, summarize
from quadsel.errors import QuadselError
from quadsel.evaluate.holdout import Holdout, parse_holdout, split, training_map

from helpers import random_table, table_from_cube


def _dmap(seed, n_comm=6, n_msg=9, n_methods=3):
    rows, _, _ = random_table(np.random.default_rng(seed), n_comm, n_msg, n_methods)
    return build_decision_map(rows)


@given(st.integers(0, 10**6), st.integers(2, 9), st.integers(2, 12),
       st.sampled_from(["msg", "comm", "random:0.25", "random:0.5:3"]))
@settings(max_examples=40, deadline=None)
def test_splits_are_disjoint_and_cover_the_measured_points(seed, n_comm, n_msg, spec):
    dmap = _dmap(seed, n_comm, n_msg)
    test = split(dmap, parse_holdout(spec))
    train = dmap.measured & ~test
    assert not (test & train).any() and np.array_equal(test | train, dmap.measured)
    assert test.any() and train.any()
    built = training_map(dmap, test)
    assert int(built.measured.sum()) == int(train.sum())
    # every training point keeps its costs; no held-out point is measured in the training map
    for c, comm in enumerate(dmap.comm_sizes):
        for m, msg in enumerate(dmap.msg_sizes):
            if comm in built.comm_sizes and msg in built.msg_sizes:
                cb, mb = np.searchsorted(built.comm_sizes, comm), np.searchsorted(built.msg_sizes, msg)
                assert built.measured[cb, mb] == train[c, m]


def test_msg_and_comm_splits_leave_out_every_other_size_and_shrink_the_axes():
    dmap = _dmap(1, 5, 8)
    msg = split(dmap, Holdout("msg"))
    assert msg[:, 1::2].all() and not msg[:, ::2].any()
    assert training_map(dmap, msg).msg_sizes.tolist() == dmap.msg_sizes[::2].tolist()
    comm = split(dmap, Holdout("comm"))
    assert comm[1::2].all() and not comm[::2].any()
    assert training_map(dmap, comm).comm_sizes.tolist() == dmap.comm_sizes[::2].tolist()


def test_random_split_is_seeded_and_sized():
    dmap = _dmap(2, 6, 10)
    a, b = split(dmap, parse_holdout("random:0.25")), split(dmap, parse_holdout("random:0.25"))
    assert np.array_equal(a, b) and a.sum() == 15
    assert not np.array_equal(a, split(dmap, parse_holdout("random:0.25:1")))


def test_points_without_a_measurement_are_never_held_out():
    nan = np.nan
    cost = np.array([[[1.0, 2.0], [nan, nan], [1.0, 2.0], [2.0, 1.0]], [[1.0, 2.0]] * 4])
    dmap = build_decision_map(table_from_cube(cost, [2, 4], [1, 2, 4, 8], [("1", 0), ("2", 0)]))
    # issue 39: every other size of each communicator size's own measured sizes (row 0: 1, 4, 8 -> 4 held out);
    # before, every other column of the grid held out 8 only there
    assert split(dmap, Holdout("msg")).tolist() == [[False, False, True, False], [False, True, False, True]]


@given(st.integers(0, 10**6), st.integers(3, 8), st.integers(3, 12), st.sampled_from(["msg-edge", "comm-edge"]))
@example(seed=2540, n_comm=3, n_msg=3, spec="msg-edge")    # 2026-11-28: the holes took the middle size of every row
@settings(max_examples=40, deadline=None)
def test_edge_splits_hold_out_the_ends_so_every_held_out_size_lies_outside_the_training_range(seed, n_comm, n_msg,
                                                                                              spec):
    """issue 39: the outside question. msg-edge holds out each communicator size's smallest and largest measured
    message size (a ragged row by its own sizes), comm-edge the smallest and largest communicator size; every
    held-out point is then beyond the training map's range on that axis, and the two parts cover the measured."""
    dmap = _dmap(seed, n_comm, n_msg)
    measured = dmap.measured.copy()
    rng = np.random.default_rng(seed)
    holes = rng.random(measured.shape) < 0.2          # a ragged grid: each row measured at its own sizes
    holes[:, [0, -1]] = False
    dmap = build_decision_map([r for r in _rows(seed, n_comm, n_msg)
                               if not holes[list(dmap.comm_sizes).index(r.comm_size),
                                            list(dmap.msg_sizes).index(r.msg_size)]])
    if spec == "msg-edge" and (dmap.measured.sum(axis=1) < 3).all():   # no row with 3 sizes: refused in one line
        with pytest.raises(QuadselError, match=r"--holdout msg-edge: nothing to hold out on a \d+x\d+ map"):
            split(dmap, parse_holdout(spec))
        return
    test = split(dmap, parse_holdout(spec))
    train = dmap.measured & ~test
    assert np.array_equal(test | train, dmap.measured) and not (test & train).any()
    if spec == "msg-edge":
        for row in range(dmap.shape[0]):
            cols = np.flatnonzero(dmap.measured[row])
            expected = [cols[0], cols[-1]] if cols.size >= 3 else []
            assert np.flatnonzero(test[row]).tolist() == sorted(expected)
            inside = np.flatnonzero(train[row])
            assert all(c < inside.min() or c > inside.max() for c in np.flatnonzero(test[row]))
    else:
        rows = np.flatnonzero(test.any(axis=1)).tolist()
        assert rows == [0, dmap.shape[0] - 1] and test[rows].sum() == dmap.measured[rows].sum()
        built = training_map(dmap, test)
        assert built.comm_sizes[0] > dmap.comm_sizes[0] and built.comm_sizes[-1] < dmap.comm_sizes[-1]


def _rows(seed, n_comm, n_msg, n_methods=3):
    rows, _, _ = random_table(np.random.default_rng(seed), n_comm, n_msg, n_methods)
    return rows


def test_edge_splits_need_three_sizes():
    with pytest.raises(QuadselError, match="nothing to hold out"):
        split(_dmap(0, 2, 5), Holdout("comm-edge"))
    with pytest.raises(QuadselError, match="nothing to hold out"):
        split(_dmap(0, 4, 2), Holdout("msg-edge"))


def _with_default(seed, n_comm, n_msg):
    """A random map of 3 methods with the library default measured (20-200 us) at every point."""
    rng = np.random.default_rng(seed)
    rows, comm_sizes, msg_sizes = random_table(rng, n_comm, n_msg, 3)
    default = rng.uniform(20.0, 200.0, size=(n_comm, n_msg, 1))
    return build_decision_map(list(rows) + list(table_from_cube(default, comm_sizes, msg_sizes, [("default", 0)])))


def _scored(dmap, fn, test):
    """The mean penalty of the tree `fn` at the points `test` of `dmap`, as the report scores a row."""
    return summarize(penalty_grid(dmap, choice_on(OutsideRuleSelector(list(fn.methods), fn), dmap)), dmap, test).mean


def test_held_out_rows_show_what_each_outside_rule_costs_beside_the_default_build():
    """issue 39: with a measured library default, each held-out split has the default build with every side handed
    back and with every side extrapolated beside the build's own choice per side; each row is that build, scored
    on the held-out points; without a default there are no such rows (there is no evidence and nothing to choose)."""
    dmap = _with_default(11, 6, 9)
    result = report.build_report(dmap, holdouts=[Holdout("msg-edge"), Holdout("comm-edge")], comparators=("quadsel",))
    for holdout, test, train, held in result.holdouts:
        named = [r for r in result.rows if r["holdout"] == holdout.name]
        assert [r["constraint"].split(", ")[-1] for r in named[1:3]] == ["outside handed back", "outside extrapolated"]
        for selector, outside in zip(held[1:3], ("default", "extrapolate")):
            assert isinstance(selector, OutsideRuleSelector)
            fn = build_size_tree(train, **dict(DEFAULT_BUILD, outside=outside))
            assert fn.options.outside == outside
            row = next(r for r in named if r["constraint"] == selector.constraint)
            assert row["penalty_mean"] == pytest.approx(_scored(dmap, fn, test))
    plain = report.build_report(_dmap(4, 6, 10), holdouts=[Holdout("msg-edge")], comparators=("quadsel",))
    assert not any("outside" in r["constraint"] for r in plain.rows)


def test_far_splits_hold_out_two_sizes_at_each_end():
    dmap = _dmap(3, 8, 10)
    msg, comm = split(dmap, Holdout("msg-far")), split(dmap, Holdout("comm-far"))
    assert all(np.flatnonzero(msg[row]).tolist() == [0, 1, 8, 9] for row in range(8))
    assert np.flatnonzero(comm.any(axis=1)).tolist() == [0, 1, 6, 7] and comm[[0, 1, 6, 7]].all()
    assert parse_holdout("MSG-FAR") == Holdout("msg-far")
    with pytest.raises(QuadselError, match="nothing to hold out"):
        split(_dmap(0, 7, 7), Holdout("comm-far"))
    with pytest.raises(QuadselError, match="nothing to hold out"):
        split(_dmap(0, 7, 7), Holdout("msg-far"))


def test_far_splits_also_show_the_bounded_build():
    """Two steps past the range `build --bound-extrapolation` answers otherwise than extrapolating: its row is
    that build scored at the held-out points; the nearer splits do not have it (it answers as the build there)."""
    dmap = _with_default(5, 4, 12)
    result = report.build_report(dmap, holdouts=[Holdout("msg-far"), Holdout("msg-edge")], comparators=("quadsel",))
    (_, test, train, held), (_, _, _, near) = result.holdouts
    assert [s.constraint.split(", ")[-1] for s in held[1:4]] == [
        "outside handed back", "outside extrapolated", "outside bounded (--bound-extrapolation)"]
    assert not any("bounded" in getattr(s, "rule", "") for s in near)
    fn = build_size_tree(train, **dict(DEFAULT_BUILD, outside="auto", bound_outside=True))
    row = next(r for r in result.rows if r["holdout"] == "msg-far" and r["constraint"] == held[3].constraint)
    assert row["penalty_mean"] == pytest.approx(_scored(dmap, fn, test))


@pytest.mark.parametrize("text", ["rand", "random:1.5", "random:0", "msg:2", "", "edge", "msg-edges"])
def test_bad_holdout_specs(text):
    with pytest.raises(QuadselError, match="--holdout"):
        parse_holdout(text)


def test_single_size_axis_cannot_be_held_out():
    with pytest.raises(QuadselError, match="nothing to hold out"):
        split(_dmap(0, 1, 5), Holdout("comm"))


def test_report_scores_held_out_rows_on_the_held_out_points_only():
    dmap = _dmap(4, 6, 10, 4)
    result = report.build_report(dmap, holdouts=[Holdout("msg")],
                                 comparators=("quadsel", "single", "runlength", "model"))
    held = [r for r in result.rows if r["holdout"] == "msg"]
    assert held and all(r["points"] + r["unscored"] == 30 for r in held)
    kinds = {r["method"] for r in held}
    assert kinds == {"quadsel", "quadtree", "single", "runlength", "model"}
    full = [r for r in result.rows if r["holdout"] is None]
    assert next(r for r in full if r["method"] == "runlength")["penalty_max"] == 0.0


def test_cli_holdout_rows_in_json(tmp_path):
    rng = np.random.default_rng(5)
    rows, _, _ = random_table(rng, 5, 8, 3)
    path = tmp_path / "m.csv"
    path.write_text("collective,algorithm,segsize,comm_size,msg_size,time_us\n" + "".join(
        f"{r.collective},{r.algorithm},{r.segsize},{r.comm_size},{r.msg_size},{r.time}\n" for r in rows))
    result = CliRunner().invoke(main, ["report", str(path), "--holdout", "msg", "--holdout", "random:0.3",
                                       "--format", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert {r["holdout"] for r in payload["rows"]} == {None, "msg", "random:0.3"}
    assert {"method", "size", "holdout"} <= set(payload["rows"][0])
    assert [h["holdout"] for h in payload["holdouts"]] == ["msg", "random:0.3"]
    bad = CliRunner().invoke(main, ["report", str(path), "--holdout", "half"])
    assert bad.exit_code == 2 and "--holdout" in bad.output


def test_report_skips_a_split_that_cannot_be_made_and_says_so():
    dmap = _dmap(6, 1, 8)
    result = report.build_report(dmap, holdouts=[Holdout("comm"), Holdout("msg")], comparators=("single",))
    assert {r["holdout"] for r in result.rows} == {None, "msg"}
    assert any("--holdout comm" in note and "skipped" in note for note in result.notes)
