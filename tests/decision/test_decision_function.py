import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from quadsel.decision.decision_function import DecisionFunction, build_decision_function
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
    fn = build_decision_function(dmap, pad_mode=pad_mode)
    assert np.array_equal(fn.choice_grid(), dmap.best)
    for ci, comm in enumerate(dmap.comm_sizes):
        for mi, msg in enumerate(dmap.msg_sizes):
            assert fn.query(int(comm), int(msg)) == dmap.methods[dmap.best[ci, mi]]


@given(st.integers(0, 10**6), st.integers(0, 4), st.sampled_from(["spread", "edge"]))
@settings(max_examples=40, deadline=None)
def test_query_reads_the_measured_point_below_and_expands_the_boundaries(seed, max_depth, pad_mode):
    dmap = _dmap(seed, 5, 7, 3)
    fn = build_decision_function(dmap, max_depth=max_depth, pad_mode=pad_mode)
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
    fn = build_decision_function(dmap, max_depth=2, provenance={"sources": ["a.csv"]})
    path = tmp_path / "t.qt.json"
    fn.save(path)
    again = DecisionFunction.load(path)
    assert again.constraint == "max_depth=2"
    assert np.array_equal(again.choice_grid(), fn.choice_grid())
    data = json.loads(path.read_text())
    assert data["format"] == "quadsel-quadtree" and data["version"] == 1
    assert data["provenance"]["sources"] == ["a.csv"]
    assert set(data) >= {"axes", "methods", "padding", "constraints", "tree", "stats"}


@pytest.mark.parametrize("text, message", [
    ("{", "not valid JSON"),
    ("[]", "top level"),
    ('{"format": "other"}', "not a quadsel tree file"),
    ('{"format": "quadsel-quadtree", "version": 99}', "unsupported tree file version"),
    ('{"format": "quadsel-quadtree", "version": 1}', "missing key"),
])
def test_bad_tree_files_name_the_file(tmp_path, text, message):
    path = tmp_path / "bad.qt.json"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        DecisionFunction.load(path)
    assert "bad.qt.json" in str(info.value)


def test_a_tampered_tree_is_rejected(tmp_path):
    fn = build_decision_function(_dmap(3, 4, 4, 3))
    data = fn.to_json()
    data["tree"]["method"][-1] = 99
    path = tmp_path / "t.qt.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="method that is not in the method table"):
        DecisionFunction.load(path)
