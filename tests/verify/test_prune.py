"""Prune from verification (quadsel/verify/prune.py, `codegen --verified`): the slower points go back to the
library default in the tree, and so in every target; nothing else changes."""

import json

import numpy as np
from click.testing import CliRunner

from quadsel.cli import main
from quadsel.decision.decision_map import DEFAULT_METHOD
from quadsel.verify.prune import prune, slower_points

from helpers import table_from_cube
from library_readers import OmpiClassicRules

COMMS, MSGS = [2, 4, 8], [8, 512, 65536]


def _tree():
    """A small exact tree with gap cells between the measured sizes (the between rule)."""
    from quadsel.decision.decision_function import build_decision_function
    from quadsel.decision.decision_map import build_decision_map
    choice = [[("6", 0), ("6", 0), ("3", 8192)], [("1", 0), ("6", 0), ("3", 8192)], [("1", 0), ("1", 0), ("6", 0)]]
    methods = sorted({m for row in choice for m in row})
    cost = np.full((3, 3, len(methods)), 10.0)
    for ci, row in enumerate(choice):
        for mi, method in enumerate(row):
            cost[ci, mi, methods.index(method)] = 1.0
    return build_decision_function(build_decision_map(table_from_cube(cost, COMMS, MSGS, methods)), split="measured",
                                   between="least-bad", leaf_rule="penalty")


def _result(tmp_path, slower):
    points = [{"collective": "bcast", "comm_size": c, "msg_size": m,
               "verdict": "slower" if (c, m) in slower else "faster"} for c in COMMS for m in MSGS]
    path = tmp_path / "verify.json"
    path.write_text(json.dumps({"points": points, "statistics": {"decision": "do not deploy"}}))
    return path


def test_slower_points_and_their_gaps_go_back_to_the_default_and_nothing_else(tmp_path):
    fn = _tree()
    pruned, cells = prune(fn, slower_points(_result(tmp_path, {(4, 512)}))["bcast"])
    assert cells >= 1 and pruned.provenance["pruned"] == [[4, 512]]
    for comm, msg in [(4, 512), (4, 100), (4, 5000), (3, 512), (5, 512), (3, 100), (7, 65535)]:
        assert pruned.query(comm, msg) == DEFAULT_METHOD, (comm, msg)
    probes = [(c, m) for c in range(1, 12) for m in (0, 8, 9, 511, 512, 513, 65535, 65536, 1 << 30)]
    inside = {(c, m) for c in range(3, 8) for m in range(9, 65536)}
    for c, m in probes:
        if (c, m) not in inside:
            assert pruned.query(c, m) == fn.query(c, m), (c, m)
    rules = OmpiClassicRules(__import__("quadsel.targets", fromlist=["emit"]).emit("ompi-rules", [pruned]))
    assert rules.lookup(7, 4, 512)[0] == 0 and rules.lookup(7, 4, 8)[0] == 1


def test_nothing_slower_changes_nothing(tmp_path):
    fn = _tree()
    assert slower_points(_result(tmp_path, set())) == {}
    same, cells = prune(fn, [])
    assert same is fn and cells == 0


def test_codegen_verified_writes_the_pruned_rules_file(tmp_path):
    tree = tmp_path / "bcast.qt.json"
    _tree().save(tree)
    out = tmp_path / "pruned.rules"
    result = CliRunner().invoke(main, ["codegen", str(tree), "-t", "ompi-rules", "--verified",
                                       str(_result(tmp_path, {(8, 65536)})), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "bcast: points slower than the default" in result.output and "comm 8 msg 65536" in result.output
    rules = OmpiClassicRules(out.read_text())
    assert rules.lookup(7, 8, 65536)[0] == 0 and rules.lookup(7, 8, 8)[0] == 1 and rules.lookup(7, 2, 65536)[0] == 3
    C = CliRunner().invoke(main, ["codegen", str(tree), "--verified", str(_result(tmp_path, {(2, 8)}))])
    assert C.exit_code == 0 and "0 = no decision" in C.output
    first = tmp_path / "first.json"
    _result(tmp_path, {(2, 8)}).rename(first)
    both = CliRunner().invoke(main, ["codegen", str(tree), "-t", "ompi-rules", "--verified", str(first), "--verified",
                                     str(_result(tmp_path, {(8, 65536)})), "-o", str(out)])
    assert both.exit_code == 0, both.output
    rules = OmpiClassicRules(out.read_text())      # the points either run found slower
    assert rules.lookup(7, 2, 8)[0] == 0 and rules.lookup(7, 8, 65536)[0] == 0 and rules.lookup(7, 8, 8)[0] == 1


def test_a_file_that_is_not_a_verify_result_is_refused_in_one_line(tmp_path):
    tree = tmp_path / "bcast.qt.json"
    _tree().save(tree)
    bad = tmp_path / "bad.json"
    bad.write_text("{\"points\": 3}")
    result = CliRunner().invoke(main, ["codegen", str(tree), "--verified", str(bad)])
    assert result.exit_code == 2 and "not the JSON of `quadsel verify --json`" in result.output
    bad.write_text("{")
    result = CliRunner().invoke(main, ["codegen", str(tree), "--verified", str(bad)])
    assert result.exit_code == 2 and "not JSON" in result.output
