import json

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_function import DecisionFunction
from quadsel.decision.decision_map import build_decision_map
from quadsel.errors import InputError

from helpers import random_table


def _dmap(seed, n_comm, n_msg, n_methods):
    rows, _, _ = random_table(np.random.default_rng(seed), n_comm, n_msg, n_methods)
    return build_decision_map(rows)


@given(st.integers(0, 10**6), st.integers(1, 12), st.integers(1, 12), st.integers(1, 5), st.sampled_from(["spread", "edge"]))
@settings(max_examples=60, deadline=None)
def test_exact_tree_answers_the_best_method_at_every_measured_point(seed, n_comm, n_msg, n_methods, pad_mode):
    dmap = _dmap(seed, n_comm, n_msg, n_methods)
    fn = build_size_tree(dmap, pad_mode=pad_mode)
    assert np.array_equal(fn.choice_grid(), dmap.best)
    for ci, comm in enumerate(dmap.comm_sizes):
        for mi, msg in enumerate(dmap.msg_sizes):
            assert fn.query(int(comm), int(msg)) == dmap.methods[dmap.best[ci, mi]]


@given(st.integers(0, 10**6), st.integers(0, 4), st.sampled_from(["spread", "edge"]))
@settings(max_examples=40, deadline=None)
def test_query_reads_the_measured_point_below_and_expands_the_boundaries(seed, max_depth, pad_mode):
    dmap = _dmap(seed, 5, 7, 3)
    fn = build_size_tree(dmap, max_depth=max_depth, pad_mode=pad_mode)
    choice = fn.choice_grid()
    comm, msg = dmap.comm_sizes, dmap.msg_sizes
    assert fn.query(1, 0) == dmap.methods[choice[0, 0]]
    assert fn.query(10**6, 2**40) == dmap.methods[choice[-1, -1]]
    for ci in range(len(comm)):
        for mi in range(len(msg)):
            upper_c = comm[ci + 1] - 1 if ci + 1 < len(comm) else comm[ci] + 1000
            upper_m = msg[mi + 1] - 1 if mi + 1 < len(msg) else msg[mi] * 2 + 1
            assert fn.query(int(upper_c), int(upper_m)) == dmap.methods[choice[ci, mi]]


def test_json_round_trip_keeps_every_answer(tmp_path):
    dmap = _dmap(7, 6, 9, 4)
    fn = build_size_tree(dmap, max_depth=2, provenance={"sources": ["a.csv"]})
    path = tmp_path / "t.qt.json"
    fn.save(path)
    again = DecisionFunction.load(path).size_tree
    assert again.constraint == "max_depth=2"
    assert np.array_equal(again.choice_grid(), fn.choice_grid())
    data = json.loads(path.read_text())
    assert data["format"] == "quadsel-quadtree" and data["version"] == 2
    assert data["provenance"]["sources"] == ["a.csv"]
    assert set(data) >= {"axes", "methods", "builder", "tree", "stats"}


@pytest.mark.parametrize("text, message", [
    ("{", "not valid JSON"),
    ("[]", "top level"),
    ('{"format": "other"}', "not a quadsel tree file"),
    ('{"format": "quadsel-quadtree", "version": 99}', "unsupported tree file version"),
    ('{"format": "quadsel-quadtree", "version": 1}', "collective"),
    ('{"format": "quadsel-quadtree", "version": 2, "collective": "bcast"}', "axes"),
])
def test_bad_tree_files_name_the_file(tmp_path, text, message):
    path = tmp_path / "bad.qt.json"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        DecisionFunction.load(path)
    assert "bad.qt.json" in str(info.value)


def test_a_tampered_tree_is_rejected(tmp_path):
    fn = build_size_tree(_dmap(3, 4, 4, 3))
    data = fn.to_json()
    data["tree"]["method"][-1] = 99
    path = tmp_path / "t.qt.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="tree.method"):
        DecisionFunction.load(path)


@given(st.integers(0, 10**6), st.integers(1, 9), st.integers(1, 12), st.integers(1, 5),
       st.sampled_from(["floor", "least-bad"]), st.sampled_from([None, 1, 4, 9]))
@settings(max_examples=60, deadline=None)
def test_measured_split_exact_and_budgeted_trees_answer_from_their_cells(seed, n_comm, n_msg, n_methods, between,
                                                                        budget):
    dmap = _dmap(seed, n_comm, n_msg, n_methods)
    fn = build_size_tree(dmap, split="measured", between=between, leaf_rule="penalty", max_leaves=budget)
    if budget is None:
        assert np.array_equal(fn.choice_grid(), dmap.best)
    else:
        assert fn.tree.n_leaves <= budget
    painted = fn.cell_methods()
    comm_lo, msg_lo = fn.comm_axis.lo, fn.msg_axis.lo
    for r in range(len(comm_lo)):         # every cell answers for its whole range of sizes
        for c in range(len(msg_lo)):
            for comm in {int(comm_lo[r]), int(comm_lo[r + 1]) - 1 if r + 1 < len(comm_lo) else 10**6}:
                for msg in {int(msg_lo[c]), int(msg_lo[c + 1]) - 1 if c + 1 < len(msg_lo) else 2**40}:
                    assert fn.query(max(comm, 1), msg) == fn.methods[painted[r, c]]


def test_between_rule_gives_a_gap_the_method_least_bad_at_both_neighbours():
    from helpers import table_from_cube
    # at 1 KiB method 0 wins by 1 %, at 4 KiB method 1 wins by 1 %; method 2 is 0.5 % off at both
    cost = np.array([[[100.0, 101.0, 100.5], [101.0, 100.0, 100.5]]])
    rows = table_from_cube(cost, [4], [1024, 4096], [("1", 0), ("2", 0), ("3", 0)])
    dmap = build_decision_map(rows)
    fn = build_size_tree(dmap, split="measured", between="least-bad", leaf_rule="penalty")
    assert [fn.query(4, m).algorithm for m in (1024, 1025, 4095, 4096)] == ["1", "3", "3", "2"]
    floor = build_size_tree(dmap, split="measured", leaf_rule="penalty")
    assert [floor.query(4, m).algorithm for m in (1024, 1025, 4095, 4096)] == ["1", "1", "1", "2"]


def test_version_1_tree_files_still_load_and_answer_as_before():
    from pathlib import Path
    from quadsel.ingest import read_measurements
    here = Path(__file__).resolve().parents[1]
    old = DecisionFunction.load(here / "data" / "trees" / "ompi5-bcast.d3.v1.qt.json").size_tree
    dmap = build_decision_map(read_measurements([here.parent / "examples" / "ompi5-bcast.csv"]))
    new = build_size_tree(dmap, max_depth=3)
    assert old.constraint == "max_depth=3" and old.stats() == new.stats()
    for comm in range(1, 12):
        for msg in [0, 1, 3, 700, 1024, 5000, 2**20, 2**22]:
            assert old.query(comm, msg) == new.query(comm, msg)


@given(st.integers(0, 10**6), st.integers(2, 8), st.integers(3, 10), st.integers(2, 4),
       st.sampled_from([("midpoint", "floor"), ("measured", "floor"), ("measured", "least-bad")]))
@settings(max_examples=60, deadline=None)
def test_points_where_nothing_was_measured_get_the_interpolated_decision(seed, n_comm, n_msg, n_methods, builder):
    """Issue 11 bug: with penalty leaves, a block of interpolated points got method 0. Exact trees of every
    builder now answer the interpolated map's best method there too."""
    rng = np.random.default_rng(seed)
    rows, _, _ = random_table(rng, n_comm, n_msg, n_methods)
    holes = {(int(c), int(m)) for c, m in zip(rng.integers(0, n_comm, 4), rng.integers(1, n_msg - 1, 4))}
    comm_sizes = sorted({r.comm_size for r in rows})
    msg_sizes = sorted({r.msg_size for r in rows})
    rows = [r for r in rows if (comm_sizes.index(r.comm_size), msg_sizes.index(r.msg_size)) not in holes]
    dmap = build_decision_map(rows)
    split, between = builder
    fn = build_size_tree(dmap, split=split, between=between, leaf_rule="penalty", tolerance=0.0)
    assume(dmap.filled.any())
    assert np.array_equal(fn.choice_grid()[dmap.filled], dmap.best[dmap.filled])


def test_shared_work_gives_the_same_trees_and_builds_the_exact_tree_once():
    """report builds the default, every budget and the exact tree of one map sharing one grid, look-ahead
    cache and exact tree (decision_function.SharedWork): the trees are those of separate builds."""
    from quadsel.decision.builder import DEFAULT_BUILD, SharedWork, budget_functions
    from quadsel.decision.decision_map import build_decision_map
    from quadsel.ingest import read_measurements
    from helpers import REPO
    dmap = build_decision_map(read_measurements([str(REPO / "examples" / "ompi5-bcast.csv")]))
    options = dict({k: v for k, v in DEFAULT_BUILD.items() if k != "max_leaves"}, keep_default=False)
    shared = SharedWork()
    together = [build_size_tree(dmap, shared=shared, **DEFAULT_BUILD),
                build_size_tree(dmap, shared=shared, **options)] + \
        budget_functions(dmap, [2, 4, None], shared=shared, **options)
    alone = [build_size_tree(dmap, **DEFAULT_BUILD), build_size_tree(dmap, **options)] + \
        budget_functions(dmap, [2, 4, None], **options)
    for a, b in zip(together, alone):
        for name in ("children", "comm_cut", "msg_cut", "method", "depth"):
            assert np.array_equal(getattr(a.tree, name), getattr(b.tree, name))
    assert together[1].tree is together[-1].tree        # the exact tree, grown once
