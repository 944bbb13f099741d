"""The tree-file loader refuses every damaged or hostile file with one line naming it (exit 2), before any use."""

import json
import os

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from quadsel.cli import main
from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_function import DecisionFunction
from quadsel.decision.decision_map import build_decision_map
from quadsel.errors import InputError

from helpers import random_table


def good_tree():
    rows, _, _ = random_table(np.random.default_rng(5), 4, 6, 3)
    return build_size_tree(build_decision_map(rows), split="measured", between="least-bad",
                                   leaf_rule="penalty", max_leaves=6).to_json()


def edit(path_in_doc, value):
    def change(doc):
        target = doc
        for key in path_in_doc[:-1]:
            target = target[key]
        target[path_in_doc[-1]] = value(target[path_in_doc[-1]]) if callable(value) else value
        return doc
    return change


CASES = {
    "bool axis value": edit(("axes", "comm_sizes", 0), True),
    "zero comm size": edit(("axes", "comm_sizes", 0), 0),
    "comm size beyond int": edit(("axes", "comm_sizes", -1), 2 ** 31),
    "msg size beyond 2^63": edit(("axes", "msg_sizes", -1), 2 ** 63),
    "a thousand-digit size": edit(("axes", "msg_sizes", -1), 10 ** 1000),
    "unsorted axis": edit(("axes", "msg_sizes"), lambda v: v[::-1]),
    "float axis value": edit(("axes", "msg_sizes", 0), 1.5),
    "empty methods": edit(("methods",), []),
    "duplicate method": edit(("methods",), lambda v: v + [v[0]]),
    "segsize beyond int": edit(("methods", 0, "segsize"), 2 ** 31),
    "nameless method": edit(("methods", 0, "algorithm"), ""),
    "unknown builder key": edit(("builder",), lambda b: {**b, "surprise": 1}),
    "unknown split": edit(("builder", "split"), "sideways"),
    "NaN-free but text threshold": edit(("builder", "accuracy_threshold"), "high"),
    "unequal tree arrays": edit(("tree", "method"), lambda v: v[:-1]),
    "child outside the table": edit(("tree", "children", 0, 0), 999),
    "child pointing back": edit(("tree", "children", 1), [0, -1, -1, -1]),
    "cut outside its block": edit(("tree", "comm_cut", 0), 10 ** 6),
    "method outside the table": edit(("tree", "method", -1), 99),
    "negative depth": edit(("tree", "depth", 0), -1),
    "children not a list of 4": edit(("tree", "children", 0), [1, 2]),
    "version 3": edit(("version",), 3),
    "collective not a name": edit(("collective",), 7),
    "sources not a list": edit(("provenance", "sources"), 5),
    "library not a name": edit(("provenance", "library"), ["openmpi"]),
    "a leaf with children": lambda d: _leaf_with_children(d),
    "a grid of 4M+ cells": edit(("axes",), {"comm_sizes": list(range(1, 2100)), "msg_sizes": list(range(0, 2100))}),
}


def _leaf_with_children(doc):
    leaf = next(i for i, kids in enumerate(doc["tree"]["children"]) if kids == [-1, -1, -1, -1])
    inner = next(i for i, kids in enumerate(doc["tree"]["children"]) if kids[1] >= 0)
    doc["tree"]["children"][leaf] = [-1] + doc["tree"]["children"][inner][1:2] + [-1, -1]
    doc["tree"]["children"][inner][1] = -1
    return doc


@pytest.mark.parametrize("name", sorted(CASES))
def test_damaged_tree_files_fail_with_one_line(tmp_path, name):
    doc = CASES[name](good_tree())
    path = tmp_path / "bad.qt.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="bad.qt.json"):
        DecisionFunction.load(path)
    result = CliRunner().invoke(main, ["query", str(path), "--comm", "4", "--msg", "64"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1 and "bad.qt.json" in result.output


@pytest.mark.parametrize("content, words", [
    (b"\xff\xfe{}", "UTF-8"),
    (b"[" * 100000 + b"]" * 100000, "nested too deeply"),
    (b'{"format": "quadsel-quadtree", "version": 2, "x": NaN}', "not valid JSON"),
    (b'{"format": "quadsel-quadtree", "version": 2, "x": Infinity}', "not valid JSON"),
    (b"", "not valid JSON"),
])
def test_hostile_bytes_fail_with_one_line(tmp_path, content, words):
    path = tmp_path / "bad.qt.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match=words):
        DecisionFunction.load(path)


def test_non_regular_and_oversized_files_are_refused(tmp_path):
    fifo = tmp_path / "pipe.qt.json"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        DecisionFunction.load(fifo)        # opened non-blocking by nobody else: must not hang
    big = tmp_path / "big.qt.json"
    with open(big, "wb") as handle:
        handle.truncate((64 << 20) + 10)
    with pytest.raises(InputError, match="64 MiB"):
        DecisionFunction.load(big)
    with pytest.raises(InputError, match="not found"):
        DecisionFunction.load(tmp_path / "missing.qt.json")


@given(st.binary(max_size=400))
@settings(max_examples=300, deadline=None)
def test_random_bytes_never_escape_as_anything_but_input_error(data):
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".qt.json") as handle:
        handle.write(data)
        handle.flush()
        try:
            DecisionFunction.load(handle.name)
        except InputError:
            pass


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_random_edits_of_a_good_tree_either_load_and_validate_or_fail_cleanly(data):
    """Mutate one integer of the tree arrays: the file loads (and then answers from a valid tree) or fails
    with InputError -- never an IndexError or a wrong-but-accepted tree."""
    import tempfile
    doc = good_tree()
    key = data.draw(st.sampled_from(["children", "comm_cut", "msg_cut", "method", "depth"]))
    flat = doc["tree"][key]
    i = data.draw(st.integers(0, len(flat) - 1))
    value = data.draw(st.integers(-3, 40))
    if key == "children":
        flat[i][data.draw(st.integers(0, 3))] = value
    else:
        flat[i] = value
    with tempfile.NamedTemporaryFile("w", suffix=".qt.json") as handle:
        json.dump(doc, handle)
        handle.flush()
        try:
            fn = DecisionFunction.load(handle.name).size_tree
        except InputError:
            return
    fn.tree.validate(len(fn.comm_axis), len(fn.msg_axis), len(fn.methods))
    assert all(0 <= m < len(fn.methods) for m in fn.cell_methods().ravel())


def test_paper_statistics_are_checked_and_a_too_deep_tree_is_refused(tmp_path):
    from quadsel.decision.quadtree import MAX_DEPTH, TreeBuilder
    rows, _, _ = random_table(np.random.default_rng(6), 4, 6, 3)
    doc = build_size_tree(build_decision_map(rows), max_depth=2).to_json()     # the paper's (midpoint)
    doc["stats"]["paper"]["leaves"] = "x"
    path = tmp_path / "p.qt.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="stats.leaves"):
        DecisionFunction.load(path)
    legacy = build_size_tree(build_decision_map(rows), max_depth=2)    # files before `stats.paper`
    doc = legacy.to_json()
    doc["stats"] = doc["stats"]["paper"]
    path.write_text(json.dumps(doc))
    assert DecisionFunction.load(path).size_tree.paper_stats == legacy.paper_stats
    builder = TreeBuilder()                     # a chain of one-axis cuts deeper than the loader accepts
    parent = builder.node(0, 0)
    for depth in range(1, MAX_DEPTH + 2):
        left, right = builder.node(0, depth), builder.node(0, depth)
        builder.split(parent, -1, depth, [left, right])
        parent = right
    tree = builder.tree()
    with pytest.raises(ValueError, match="deeper than"):
        tree.validate(1, MAX_DEPTH + 3, 1)
