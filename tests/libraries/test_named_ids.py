"""Issue 31: wherever a person reads an Open MPI algorithm id, its name is beside it ("6" is binomial for bcast,
in-order_binary for reduce); machine-read fields keep the ids (the names come in fields of their own)."""

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from quadsel.cli import main
from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.libraries import algorithm_name, named_label, openmpi
from quadsel.targets import emit
from quadsel.targets.ompi_rules import read
from quadsel.verify import command

from helpers import table_from_cube

COMMS, MSGS = [2, 4, 8], [8, 1024, 65536]


def six_everywhere(collective, tmp_path):
    """A tree file of `collective` (Open MPI) choosing algorithm 6 everywhere."""
    cost = np.stack([np.full((3, 3), 10.0), np.full((3, 3), 1.0)], axis=2)
    rows = table_from_cube(cost, COMMS, MSGS, [("1", 0), ("6", 0)], collective=collective)
    dmap = build_decision_map(rows)
    dmap.library = "openmpi"
    fn = build_size_tree(dmap, split="measured", provenance={"library": "openmpi"})
    path = tmp_path / f"{collective}.qt.json"
    fn.save(path)
    return fn, path


def test_six_is_another_algorithm_for_each_collective():
    assert named_label("openmpi", "bcast", "6") == "6 binomial"
    assert named_label("openmpi", "reduce", "6") == f"6 {openmpi.ALGORITHMS['reduce'][6]}" != "6 binomial"
    assert named_label("openmpi", "bcast", "3/seg8192") == "3 pipeline/seg8192"
    assert named_label("openmpi", "bcast", "default") == "default"
    assert named_label("mpich", "bcast", "binomial") == "binomial" and algorithm_name("mpich", "bcast", "1") is None
    assert named_label("somelib", "bcast", "6") == "6"            # a library quadsel has no tables for: no guess


@pytest.mark.parametrize("collective", ["bcast", "reduce"])
def test_query_names_the_id_and_json_keeps_it(collective, tmp_path):
    _, path = six_everywhere(collective, tmp_path)
    name = openmpi.ALGORITHMS[collective][6]
    runner = CliRunner()
    text = runner.invoke(main, ["query", str(path), "--comm", "4", "--msg", "1024"])
    assert text.exit_code == 0 and text.stdout.split() == ["6", "0", name]
    grid = runner.invoke(main, ["query", str(path), "--comm-sizes", "2,4", "--msg-sizes", "8"])
    assert [line.split() for line in grid.stdout.splitlines()] == [["2", "8", "6", "0", name], ["4", "8", "6", "0", name]]
    doc = json.loads(runner.invoke(main, ["query", str(path), "--comm", "4", "--msg", "1024", "--json"]).stdout)
    assert doc["algorithm"] == "6" and doc["algorithm_name"] == name and doc["segsize"] == 0


@pytest.mark.parametrize("collective", ["bcast", "reduce"])
def test_rules_file_and_c_comments_name_the_id(collective, tmp_path):
    fn, _ = six_everywhere(collective, tmp_path)
    name = openmpi.ALGORITHMS[collective][6]
    rules = emit("ompi-rules", [fn])
    assert re.search(rf"^\d+ 6 \d+ 0 # 6 {re.escape(name)}$", rules, re.M), rules
    _, by_collective, _, _ = read(rules, "rules")           # the library reads the ids, comments left out
    assert {r.alg for comms in by_collective.values() for c in comms for r in c.rules} <= {0, 6}
    assert f"/* 6 {name} */" in emit("c", [fn])


def test_verify_table_names_the_ids():
    rows = [{"collective": "reduce", "comm_size": 4, "msg_size": 8, "default_us": 5.0, "quadsel_us": 4.0,
             "best_us": 3.0, "speedup": 1.25, "vs_best": 0.33, "quadsel": "6", "best": "5/seg1024"}]
    summaries = {"reduce": {"points": 1, "faster_than_default": 1.0, "within_10pct_of_best": 0.0,
                            "worst_vs_best": {"comm_size": 4, "msg_size": 8, "vs_best": 0.33, "best": "5/seg1024"},
                            "lowest_speedup": {"speedup": 1.25, "comm_size": 4, "msg_size": 8}}}
    text = command.format_table(rows, summaries, None, library="openmpi")
    reduce = openmpi.ALGORITHMS["reduce"]
    assert f"| 6 {reduce[6]} | 5 {reduce[5]}/seg1024 |" in text
    assert f"vs best 5 {reduce[5]}/seg1024" in text
