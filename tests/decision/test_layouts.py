"""The layout key (decision/decision_function.py, layouts.py, forest_file.py): one size tree per ppn, its query rule,
its file."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_function import DecisionFunction, layer_index, query_ppn
from quadsel.decision.decision_map import build_decision_map
from quadsel.decision.layouts import layout_groups, merge_identical, same_decisions
from quadsel.errors import InputError, QuadselError

from helpers import REPO, random_table
from layout_helpers import forest_of, layout_rows


@given(st.lists(st.integers(1, 64), min_size=1, max_size=6, unique=True), st.integers(1, 200))
def test_ceiling_rule_is_the_first_bound_at_or_above_else_the_last(bounds, ppn):
    bounds = np.array(sorted(bounds))
    got = int(layer_index(bounds, [ppn])[0])
    above = [i for i, b in enumerate(bounds) if b >= ppn]
    assert got == (above[0] if above else len(bounds) - 1)
    lower = int(layer_index(bounds, [ppn], "lower")[0])
    assert lower == max([i for i, b in enumerate(bounds) if b <= ppn] or [0])


@given(st.integers(1, 10 ** 6), st.integers(1, 10 ** 4))
def test_nodes_give_the_ppn_mpich_tests(comm, nodes):
    p = query_ppn(comm, nodes=nodes)
    assert comm <= p * nodes and (p == 1 or comm > (p - 1) * nodes)      # the smallest P with comm <= P x nodes


@pytest.mark.parametrize("seed", range(4))
def test_each_member_is_the_2d_tree_of_its_ppn_rows(seed):
    rows = layout_rows(seed)
    forest = forest_of(rows, split="measured", between="least-bad", leaf_rule="penalty")
    for member in forest.layers:
        alone = build_size_tree(build_decision_map([m for m in rows if m.ppn in member.measured_ppn][
            :len(rows)] if len(member.measured_ppn) == 1 else [m for m in rows if m.ppn == member.measured_ppn[-1]]),
            split="measured", between="least-bad", leaf_rule="penalty")
        assert same_decisions(alone, member.tree)
        assert member.nodes == (1, 2, 4)
    for p in (1, 2, 3, 4, 5, 100):
        member = forest.layers[int(forest.layer_index(np.array([p]))[0])]
        for comm in (1, 4, 7, 16, 1000):
            for msg in (0, 5, 1 << 19, 1 << 40):
                assert forest.query(comm, msg, ppn=p) == member.tree.query(comm, msg)


def test_adjacent_members_that_decide_alike_merge():
    rows = [m for m in layout_rows(1)]
    for m in list(rows):                 # ppn 8: a copy of ppn 4's times at the same node counts x 2
        pass
    same = [m.__class__(**{**m.__dict__, "ppn": 8, "comm_size": m.comm_size * 2}) for m in rows if m.ppn == 4]
    forest = forest_of(rows + same, max_depth=0)     # one-leaf trees: alike when their methods are
    assert sum(len(m.measured_ppn) for m in forest.layers) == 4
    one_leaf = [m.tree.query(1, 1) for m in forest.layers]
    assert all(a != b for a, b in zip(one_leaf, one_leaf[1:]))       # neighbours left apart differ
    assert forest.stats()["leaves"] == sum(m.leaves for m in forest.layers)


def test_members_of_the_same_decisions_merge_into_the_higher_bound():
    rows = layout_rows(3)
    fns = forest_of(rows).layers
    twin = type(fns[0])(fns[0].ppn + 100, (fns[0].ppn + 100,), fns[0].nodes, fns[0].tree)
    merged = merge_identical([fns[-1], twin])
    assert len(merged) == 1 or not same_decisions(fns[-1].tree, fns[0].tree)


def test_a_file_without_layouts_has_no_groups():
    rows, _, _ = random_table(np.random.default_rng(0), 4, 5, 3)
    assert layout_groups(rows) is None


def test_forest_file_round_trip_answers_alike(tmp_path):
    forest = forest_of(layout_rows(5), split="measured", between="least-bad", leaf_rule="penalty")
    path = tmp_path / "f.qt.json"
    path.write_text(forest.dumps())
    back = DecisionFunction.load(str(path))
    assert back.has_layout and [m.ppn for m in back.layers] == [m.ppn for m in forest.layers]
    for p in (1, 2, 3, 9):
        for comm in (1, 3, 8, 17):
            for msg in (0, 100, 1 << 21):
                assert back.query(comm, msg, ppn=p) == forest.query(comm, msg, ppn=p)
    assert json.loads(path.read_text())["stats"]["leaves"] == sum(m.leaves for m in back.layers)
    assert back.dumps() == forest.dumps().replace(forest.provenance.get("quadsel_version", "@"), "@")


@pytest.mark.parametrize("change,words", [
    (lambda d: d["layouts"][1].__setitem__("ppn", 1), "layout 2: the layouts' ppn must be strictly increasing"),
    (lambda d: d["layouts"][1]["tree"]["tree"].__setitem__("method", [99]), "layout 2 (ppn 2): "),
    (lambda d: d["layouts"][2].__setitem__("nodes", [4, 1]), "layout 3: measured_ppn"),
    (lambda d: d.__setitem__("version", 7), "unsupported layout forest version 7"),
    (lambda d: d["layouts"][0]["tree"].__setitem__("collective", "reduce"), "layout 1: its tree is of 'reduce'"),
])
def test_a_damaged_forest_is_one_line_naming_file_and_member_line(tmp_path, change, words):
    forest = forest_of(layout_rows(2))
    data = json.loads(forest.dumps())
    change(data)
    text = json.dumps(data, indent=1)
    path = tmp_path / "bad.qt.json"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        DecisionFunction.load(str(path))
    message = str(err.value)
    assert words in message and "\n" not in message and message.startswith(str(path))
    if "layout 2" in words:     # the member's own line
        line = text.splitlines().index(' {', 0) if False else None
        starts = [i + 1 for i, t in enumerate(text.splitlines()) if t == "  {"]
        assert message.startswith(f"{path}:{starts[1]}: ")


def test_a_2d_tree_file_loads_as_before(tmp_path):
    rows, _, _ = random_table(np.random.default_rng(3), 4, 5, 3)
    fn = build_size_tree(build_decision_map(rows))
    path = tmp_path / "t.qt.json"
    path.write_text(fn.dumps())
    back = DecisionFunction.load(str(path))
    assert not back.has_layout and json.loads(back.dumps()) == json.loads(fn.dumps())


def test_mixed_rows_refuse_in_one_line():
    rows = layout_rows(0)
    rows[5] = rows[5].__class__(**{**rows[5].__dict__, "nodes": None, "ppn": None})
    with pytest.raises(QuadselError, match=r"x.csv:7 has no layout and x.csv:2 has one .*--layout NODESxPPN"):
        layout_groups(rows)


# -- a file without layout columns builds exactly main's tree ------------------------------------------------------
BUILD_ALL = """
import sys, glob, os
from click.testing import CliRunner
from quadsel.cli import main
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.csv"))):
    for extra in ([], ["--paper"], ["--max-leaves", "3", "--extrapolate"]):
        out = path + "".join(extra).replace("-", "_") + ".qt.json"
        result = CliRunner().invoke(main, ["build", path, "-o", out, *extra])
        print(os.path.basename(out), result.exit_code, result.output.strip().replace(sys.argv[1], ""))
"""


def _main_copy(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed to read main's code")
    where = tmp_path / "main"
    where.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "main", "quadsel", "templates"], capture_output=True)
    if archive.returncode:
        pytest.skip("no `main` branch in this checkout")
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    return where


@settings(max_examples=2, deadline=None)
@given(st.integers(0, 2 ** 32))
def test_files_without_layout_columns_build_mains_tree_byte_for_byte(tmp_path_factory, seed):
    """Random 2-D sweeps (one subprocess per side builds them all: default, --paper, a budget)."""
    tmp_path = tmp_path_factory.mktemp("same")
    data = tmp_path / "data"
    data.mkdir()
    draw = np.random.default_rng(seed)
    shapes = [(int(draw.integers(2, 7)), int(draw.integers(2, 8)), int(draw.integers(2, 5))) for _ in range(5)]
    for i, (n_comm, n_msg, n_methods) in enumerate(shapes):
        rng = np.random.default_rng([seed, i])
        rows, _, _ = random_table(rng, n_comm, n_msg, n_methods)
        lines = ["collective,algorithm,segsize,comm_size,msg_size,time_us,stddev_us,reps"]
        lines += [f"{m.collective},{m.algorithm},{m.segsize},{m.comm_size},{m.msg_size},{m.time:.3f},"
                  f"{m.time * rng.uniform(0, 0.1):.3f},{int(rng.integers(1, 50))}" for m in rows]
        (data / f"sweep{i}.csv").write_text("\n".join(lines) + "\n")
    outputs = {}
    for name, code in (("main", _main_copy(tmp_path)), ("here", REPO)):
        env = dict(os.environ, PYTHONPATH=str(code))
        copy = tmp_path / f"out-{name}"
        shutil.copytree(data, copy)
        run = subprocess.run([sys.executable, "-c", BUILD_ALL, str(copy)], env=env, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        trees = {}
        for path in sorted(copy.glob("*.qt.json")):
            tree = json.loads(path.read_text())
            tree["provenance"].pop("created", None)
            trees[path.name] = json.dumps(tree, indent=1)
        outputs[name] = (run.stdout, trees)
    assert outputs["here"] == outputs["main"]
    assert len(outputs["here"][1]) == 3 * len(shapes)


def test_merged_layers_keep_the_tree_of_more_sizes_so_every_measured_layout_is_verified(tmp_path):
    """Issue 40: on a 2 x 2 allocation the ppn-1 and ppn-2 trees of MPICH's bcast decided alike and merged into
    ppn 1's tree (2 ranks only); verify takes the layouts from the kept tree's sizes and left 2 x 2 out."""
    from click.testing import CliRunner
    from quadsel.cli import main
    from quadsel.decision.decision_function import DecisionFunction
    from quadsel.decision.layouts import Layer, merge_identical

    def tree(comms, name):
        lines = ["collective,algorithm,segsize,comm_size,msg_size,time_us,stddev_us,reps"]
        lines += [f"bcast,{alg},0,{n},{m},{t},0.1,20" for n in comms for m in (8, 65536)
                  for alg, t in (("default", 10.0), ("1", 5.0))]
        (tmp_path / f"{name}.csv").write_text("\n".join(lines) + "\n")
        done = CliRunner().invoke(main, ["build", str(tmp_path / f"{name}.csv"), "--extrapolate", "-o",
                                         str(tmp_path / f"{name}.json")])
        assert done.exit_code == 0, done.output
        return DecisionFunction.load(tmp_path / f"{name}.json").size_tree
    one, two = tree([2], "ppn1"), tree([2, 4], "ppn2")
    merged = merge_identical([Layer(1, (1,), (2,), one), Layer(2, (2,), (1, 2), two)])
    assert len(merged) == 1 and merged[0].measured_ppn == (1, 2) and merged[0].nodes == (1, 2)
    assert list(merged[0].tree.comm_sizes) == [2, 4]
