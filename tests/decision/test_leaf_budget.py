"""Issue 31: a leaf budget bounds the deployed tree (the leaves that hand the sizes outside the measured range back
to the library included), and one count of leaves is printed everywhere: build, the tree file, report, the C."""

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from quadsel.cli import main
from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_function import DecisionFunction
from quadsel.decision.size_tree import leaf_count
from quadsel.decision.decision_map import build_decision_map
from quadsel.decision.grid import Axis, outside_leaves
from quadsel.decision.library_default import hand_back_outside
from quadsel.decision.quadtree import TreeBuilder
from quadsel.errors import OptionError
from quadsel.evaluate.comparators import QuadtreeSelector
from quadsel.evaluate.report import selector_row
from quadsel.targets import emit

from helpers import REPO, table_from_cube


def _map(seed, n_comm, n_msg, n_methods, default, zero_msg):
    rng = np.random.default_rng(seed)
    comm = np.sort(rng.choice(np.arange(2, 300), size=n_comm, replace=False))
    msg = np.sort(rng.choice(np.arange(1, 1 << 21), size=n_msg, replace=False))
    if zero_msg:
        msg[0] = 0                      # no cell below the smallest message size: fewer outside leaves
    cost = rng.uniform(1.0, 100.0, size=(n_comm, n_msg, n_methods))
    base = rng.uniform(1.0, 100.0, size=(n_comm, n_msg)) if default else None
    return build_decision_map(table_from_cube(cost, comm, msg, [(str(k + 1), 0) for k in range(n_methods)],
                                              default=base))


def _c_leaves(fn):
    return int(re.search(r"(\d+) leaves", emit("c", [fn])).group(1))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 5), st.integers(1, 7), st.integers(1, 4), st.integers(1, 40),
       st.booleans(), st.booleans(), st.sampled_from(["default", "extrapolate"]))
def test_the_deployed_tree_keeps_the_leaf_budget_and_every_count_agrees(seed, n_comm, n_msg, n_methods, budget,
                                                                        default, zero_msg, outside):
    dmap = _map(seed, n_comm, n_msg, n_methods, default, zero_msg)
    frame = outside_leaves(dmap.comm_sizes, dmap.msg_sizes) if outside == "default" else 0
    options = dict(split="measured", between="least-bad", leaf_rule="penalty", tolerance="ci", outside=outside,
                   keep_default=default)
    if budget < frame + 1:
        with pytest.raises(OptionError, match="cannot hold"):
            build_size_tree(dmap, max_leaves=budget, **options)
        return
    fn = build_size_tree(dmap, max_leaves=budget, **options)
    leaves = leaf_count(fn)
    assert leaves <= budget and leaves == fn.tree.n_leaves
    assert json.loads(fn.dumps())["stats"]["leaves"] == leaves                  # the tree file
    assert DecisionFunction.from_json(json.loads(fn.dumps())).size_tree.stats()["leaves"] == leaves
    row = selector_row(QuadtreeSelector.of(fn), dmap)                           # report
    assert row["size"] == row["leaves"] == leaves
    assert _c_leaves(fn) == leaves                                              # the C's header
    auto = build_size_tree(dmap, max_leaves="auto", **options)          # the budget the folds chose
    assert auto.options.max_leaves is None or leaf_count(auto) <= auto.options.max_leaves


def test_outside_leaves_are_those_hand_back_adds():
    one = TreeBuilder()
    one.node(0, 0)
    for comm, msg in (([2, 4], [1, 8]), ([2, 4], [0, 8]), ([0, 4], [0, 8]), ([3], [5])):
        tree = hand_back_outside(one.tree(), Axis.of(comm, "floor", True), Axis.of(msg, "floor", True), 1)
        assert tree.n_leaves - 1 == outside_leaves(comm, msg)


def test_build_prints_the_leaves_the_tree_file_report_and_c_count(tmp_path):
    """`build --max-leaves 16` on the example: at most 16 leaves, and build, the tree file, report and the C say
    the same number (it said 22 leaves: the 6 outside the measured range came on top of the budget)."""
    runner = CliRunner()
    example = str(REPO / "examples" / "ompi5-reduce.csv")
    for budget in ("16", "auto"):
        tree, c = tmp_path / f"t{budget}.qt.json", tmp_path / f"t{budget}.c"
        result = runner.invoke(main, ["build", example, "--max-leaves", budget, "-o", str(tree)])
        assert result.exit_code == 0, result.output
        printed = int(re.search(r"tree: (\d+) leaves", result.output).group(1))
        doc = json.loads(tree.read_text())
        assert doc["stats"]["leaves"] == printed and printed <= doc["builder"]["max_leaves"]
        assert budget == "auto" or printed <= 16
        assert runner.invoke(main, ["codegen", str(tree), "-o", str(c)]).exit_code == 0
        assert int(re.search(r"(\d+) leaves", c.read_text()).group(1)) == printed
        report = runner.invoke(main, ["report", example, "--tree", str(tree), "--format", "json"])
        assert report.exit_code == 0, report.output
        rows = json.loads(report.stdout)["rows"]
        assert [r["leaves"] for r in rows if r["method"] == "tree"] == [printed]
        if budget == "auto":     # the report's default build is the tree build deploys
            assert [r["leaves"] for r in rows if r["constraint"].startswith("max_leaves=auto")] == [printed]
    # a budget too small for every side handed back: the folds decide the sides at that budget (here: none)
    small = runner.invoke(main, ["build", example, "--max-leaves", "4", "-o", str(tmp_path / "s.qt.json")])
    assert small.exit_code == 0, small.output
    assert json.loads((tmp_path / "s.qt.json").read_text())["stats"]["leaves"] <= 4


def test_a_budget_that_cannot_hold_the_sides_the_folds_hand_back_is_refused_naming_them():
    """The library default best at every end of both axes, a method best inside: the folds hand every side back,
    whose 6 leaves a budget of 4 cannot hold; the refusal names them and the budget that holds them."""
    comm, msg = [2, 4, 8, 16, 32, 64], [8, 64, 512, 4096, 32768, 262144]
    edge = np.zeros((6, 6), dtype=bool)
    edge[[0, 1, 4, 5], :] = edge[:, [0, 1, 4, 5]] = True
    one = np.where(edge, 50.0, 1.0)
    default = np.where(edge, 1.0, 10.0)
    rows = table_from_cube(np.stack([one, np.full((6, 6), 80.0)], axis=2), comm, msg, [("1", 0), ("2", 0)],
                           default=default)
    dmap = build_decision_map(rows)
    options = dict(split="measured", between="least-bad", leaf_rule="penalty", tolerance="ci", keep_default=True,
                   outside="auto")
    with pytest.raises(OptionError, match="cannot hold the 6 leaves .* give --max-leaves 7 or more"):
        build_size_tree(dmap, max_leaves=4, **options)
    assert leaf_count(build_size_tree(dmap, max_leaves=7, **options)) <= 7
