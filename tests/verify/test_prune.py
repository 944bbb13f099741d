"""Prune from verification (quadsel/verify/prune.py, `codegen --verified`): the slower points go back to the
library default in the tree, and so in every target; nothing else changes."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from quadsel.cli import main
from quadsel.decision.decision_map import DEFAULT_METHOD
from quadsel.verify.prune import prune, slower_points

from helpers import table_from_cube
from library_readers import OmpiClassicRules

COMMS, MSGS = [2, 4, 8], [8, 512, 65536]


def _tree():
    """A small exact tree with gap cells between the measured sizes (the between rule)."""
    from quadsel.decision.builder import build_size_tree
    from quadsel.decision.decision_map import build_decision_map
    choice = [[("6", 0), ("6", 0), ("3", 8192)], [("1", 0), ("6", 0), ("3", 8192)], [("1", 0), ("1", 0), ("6", 0)]]
    methods = sorted({m for row in choice for m in row})
    cost = np.full((3, 3, len(methods)), 10.0)
    for ci, row in enumerate(choice):
        for mi, method in enumerate(row):
            cost[ci, mi, methods.index(method)] = 1.0
    return build_size_tree(build_decision_map(table_from_cube(cost, COMMS, MSGS, methods)), split="measured",
                                   between="least-bad", leaf_rule="penalty")


def _result(tmp_path, slower, library="openmpi", edit=None):
    """A verify result as `verify --json` writes it (the fields codegen --verified reads) for the tree of _tree():
    the method it timed at each point is the one the tree picks there; edit(points) changes it."""
    fn = _tree()
    points = [{"collective": "bcast", "comm_size": c, "msg_size": m, "quadsel": fn.query(c, m).label,
               "default_us": 10.0, "quadsel_us": 12.0 if (c, m) in slower else 8.0,
               "speedup": 10 / 12 if (c, m) in slower else 1.25,
               "verdict": "slower" if (c, m) in slower else "faster"} for c in COMMS for m in MSGS]
    if edit is not None:
        edit(points)
    path = tmp_path / "verify.json"
    path.write_text(json.dumps({"library": library, "library_version": "Open MPI v5.0.11", "np": 8,
                                "points": points, "statistics": {"decision": "do not deploy"}}))
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
    assert result.exit_code == 2 and "verify-result.schema.json" in result.output
    bad.write_text("{")
    result = CliRunner().invoke(main, ["codegen", str(tree), "--verified", str(bad)])
    assert result.exit_code == 2 and "not valid JSON" in result.output


def _set(index, **fields):
    def edit(points):
        points[index].update(fields)
    return edit


@pytest.mark.parametrize("text, words", [
    # issue 32: infinity gave a traceback; negative, zero, huge or boolean sizes pruned real cells
    ('"speedup": Infinity', "not valid JSON: Infinity is not a JSON value"),
    ('"speedup": 1e400', "not valid JSON: the number 1e400 is beyond a double"),
    ('"speedup": NaN', "not valid JSON: NaN is not a JSON value"),
])
def test_codegen_verified_refuses_numbers_json_does_not_have(tmp_path, text, words):
    tree = tmp_path / "bcast.qt.json"
    _tree().save(tree)
    path = _result(tmp_path, {(4, 512)})
    path.write_text(path.read_text().replace('"speedup": 0.8333333333333334', text, 1))
    result = CliRunner().invoke(main, ["codegen", str(tree), "--verified", str(path)])
    assert result.exit_code == 2 and words in result.output and str(path) in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output


@pytest.mark.parametrize("edit, words", [
    (_set(4, comm_size=-4), "points[4].comm_size: -4 is below the minimum 1"),
    (_set(4, comm_size=0), "points[4].comm_size: 0 is below the minimum 1"),
    (_set(4, comm_size=True), "points[4].comm_size: true is not an integer"),
    (_set(4, msg_size=-1), "points[4].msg_size: -1 is below the minimum 0"),
    (_set(4, msg_size=2 ** 64), "points[4].msg_size: 18446744073709551616 is beyond 9223372036854775807"),
    (_set(4, msg_size=512.0), "points[4].msg_size: 512.0 is not an integer"),
    (_set(4, comm_size=2 ** 31), "points[4].comm_size: 2147483648 is beyond 2147483647"),
    (_set(4, verdict="SLOWER"), "points[4].verdict: 'SLOWER' is not"),
    (_set(4, collective=7), "points[4].collective: 7 is not a string"),
    (_set(4, quadsel=None), "points[4].quadsel: null is not a string"),
    (lambda points: points[4].pop("verdict"), 'points[4]: "verdict" is missing'),
])
def test_codegen_verified_refuses_impossible_points_naming_file_and_line(tmp_path, edit, words):
    tree = tmp_path / "bcast.qt.json"
    _tree().save(tree)
    path = _result(tmp_path, {(4, 512)}, edit=edit)
    path.write_text(json.dumps(json.loads(path.read_text()), indent=1))       # one value per line
    result = CliRunner().invoke(main, ["codegen", str(tree), "-t", "ompi-rules", "--verified", str(path),
                                       "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and words in result.output, result.output
    line = int(result.output.split(str(path) + ":", 1)[1].split(":", 1)[0])
    assert "points" in path.read_text().splitlines()[0] or line > 1
    assert not (tmp_path / "out").exists()


def test_codegen_verified_refuses_a_result_of_another_library(tmp_path):
    tree = tmp_path / "bcast.qt.json"
    fn = _tree()
    fn.provenance["library"] = "openmpi"
    fn.save(tree)
    result = CliRunner().invoke(main, ["codegen", str(tree), "--verified",
                                       str(_result(tmp_path, {(4, 512)}, library="mpich"))])
    assert result.exit_code == 2 and "verified mpich and the bcast tree was built from openmpi" in result.output


def test_codegen_verified_refuses_a_stale_result(tmp_path):
    """A result whose slower point timed another method than the tree picks there is of another tree."""
    tree = tmp_path / "bcast.qt.json"
    _tree().save(tree)
    stale = _result(tmp_path, {(4, 512)}, edit=_set(4, quadsel="3/seg8192"))      # (4, 512): the tree picks 6
    result = CliRunner().invoke(main, ["codegen", str(tree), "--verified", str(stale)])
    assert result.exit_code == 2 and "the result is of another tree or an older build" in result.output, result.output


def test_codegen_verified_messages_never_carry_terminal_escapes(tmp_path):
    tree = tmp_path / "bcast.qt.json"
    _tree().save(tree)
    odd = _result(tmp_path, {(4, 512)}, edit=_set(0, collective="\x1b]0;pwned\x07bcast", verdict="slower"))
    named = tmp_path / "v\x1b[31m.json"
    odd.rename(named)
    result = CliRunner().invoke(main, ["codegen", str(tree), "--verified", str(named)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output


def test_a_slower_point_of_a_collective_matched_on_no_message_size_hands_back_its_whole_row(tmp_path):
    """Open MPI's scatter file holds one method per communicator cell (targets/written.py): a slower point there
    is the whole row's method, so the whole row goes back to the default, and the file then hands it back."""
    from helpers import tree_choosing
    from quadsel.decision.decision_function import DecisionFunction
    from quadsel.verify.prune import prune_all
    fn = DecisionFunction.of(tree_choosing("scatter", COMMS, MSGS, [[("1", 0)] * 3, [("2", 0)] * 3,
                                                                     [("3", 0)] * 3]))
    points = [{"collective": "scatter", "comm_size": c, "msg_size": m, "quadsel": fn.query(c, m).label,
               "verdict": "slower" if (c, m) == (4, 8) else "faster"} for c in COMMS for m in MSGS]
    path = tmp_path / "verify.json"
    path.write_text(json.dumps({"library": "openmpi", "points": points, "statistics": {}}))
    (pruned,) = prune_all([fn], str(path))
    assert [pruned.query(4, m) for m in (0, 8, 512, 65536, 1 << 30)] == [DEFAULT_METHOD] * 5
    assert pruned.query(2, 512) == fn.query(2, 512) and pruned.query(8, 8) == fn.query(8, 8)
