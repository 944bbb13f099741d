"""Sizes at their documented maxima (a message of 2^63 - 1 bytes, a communicator of 2^31 - 1 ranks): the tree,
`query`, the rules files, the blob and the compiled C agree at and near the limits (issue 32).

The region outside the measured range starts at "largest + 1"; at the top of an axis there is no such size, and
the axis has no above cell (decision/grid.py). Before, that size overflowed int64 through a float cast: `query`
answered `default` at measured points, the rules files got the key -9223372036854775808 and the blob step
failed.
"""

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_function import DecisionFunction
from quadsel.decision.decision_map import build_decision_map
from quadsel.decision.grid import COMM_TOP, MSG_TOP, Axis
from quadsel.targets import emit, ompi_json, ompi_rules
from quadsel.targets.rules_file import read_rules_file

from helpers import table_from_cube
from library_readers import OmpiClassicRules, OmpiJsonRules

NEAR_COMM = [1, 2, 3, COMM_TOP - 2, COMM_TOP - 1, COMM_TOP]
NEAR_MSG = [0, 1, 2, MSG_TOP - 2, MSG_TOP - 1, MSG_TOP]


def sizes(near, low, high):
    """Sorted distinct sizes: some at and near the axis' ends, some in between."""
    return st.lists(st.one_of(st.sampled_from(near), st.integers(low, high)), min_size=1, max_size=4,
                    unique=True).map(sorted)


def tree(comm_sizes, msg_sizes, seed, outside, n_methods=3):
    rng = np.random.default_rng(seed)
    ids = ["1", "6", "3", "5"][:n_methods]
    cost = rng.uniform(1.0, 100.0, size=(len(comm_sizes), len(msg_sizes), n_methods))
    rows = table_from_cube(cost, comm_sizes, msg_sizes, [(a, 0) for a in ids])
    return build_size_tree(build_decision_map(rows), split="measured", between="least-bad",
                                   leaf_rule="penalty", outside=outside)


def probes(fn):
    """Every measured size, its neighbours and both ends of each axis, all within what the axes hold."""
    comms = sorted({1, COMM_TOP} | {min(max(int(c) + d, 1), COMM_TOP) for c in fn.comm_sizes for d in (-1, 0, 1)})
    msgs = sorted({0, MSG_TOP} | {min(max(int(m) + d, 0), MSG_TOP) for m in fn.msg_sizes for d in (-1, 0, 1)})
    return [(c, m) for c in comms for m in msgs]


def expected(fn, comm, msg):
    method = fn.query(comm, msg)
    return (0 if method.algorithm == "default" else int(method.algorithm)), method.segsize


def test_an_axis_whose_largest_size_is_its_top_has_no_above_cell():
    assert Axis.of([8, MSG_TOP], outside=True).lo.tolist() == [0, 8, MSG_TOP]
    assert Axis.of([8, MSG_TOP - 1], outside=True).lo.tolist() == [0, 8, MSG_TOP - 1, MSG_TOP]
    assert Axis.of([2, COMM_TOP], outside=True, top=COMM_TOP).lo.tolist() == [0, 2, COMM_TOP]
    assert Axis.of([2, COMM_TOP - 1], outside=True, top=COMM_TOP).lo.tolist() == [0, 2, COMM_TOP - 1, COMM_TOP]
    assert Axis.of([0, MSG_TOP], "least-bad", outside=True).lo.tolist() == [0, 1, MSG_TOP]


@given(sizes(NEAR_COMM, 1, COMM_TOP), sizes(NEAR_MSG, 0, MSG_TOP), st.integers(0, 10 ** 6),
       st.sampled_from(["default", "extrapolate"]))
@settings(max_examples=60, deadline=None)
def test_query_and_rules_files_agree_at_and_near_the_limits(comm_sizes, msg_sizes, seed, outside):
    fn = tree(comm_sizes, msg_sizes, seed, outside)
    for axis, top in ((fn.comm_axis, COMM_TOP), (fn.msg_axis, MSG_TOP)):
        assert axis.lo.dtype == np.int64 and 0 <= axis.lo.min() and axis.lo.max() <= top
        assert (np.diff(axis.lo) > 0).all()
    for comm in comm_sizes:                         # a measured point is never handed back to the library
        for msg in msg_sizes:
            assert fn.query(comm, msg).algorithm != "default", (comm, msg)
    again = DecisionFunction.from_json(json.loads(fn.dumps())).size_tree      # the tree file holds it
    classic = OmpiClassicRules(ompi_rules.emit([fn]))
    as_json = OmpiJsonRules(ompi_json.emit([fn]))
    assert not classic.ignored
    read_back = read_rules_file("bcast.rules", text=ompi_rules.emit([fn]), library_version="Open MPI v5.0.11")
    selection = read_back.selections()[0]
    for comm, msg in probes(fn):
        want = expected(fn, comm, msg)
        assert expected(again, comm, msg) == want
        assert classic.lookup(7, comm, msg)[0] == want[0] and classic.lookup(7, comm, msg)[2] == want[1], (comm, msg)
        assert as_json.lookup("bcast", comm, msg)[0] == want[0], (comm, msg)
        assert selection.pick(comm, msg).label == ("default" if want[0] == 0 else str(want[0])), (comm, msg)


CASES = [(c, m, outside) for c, m in [([2, 4, COMM_TOP], [1, 1024, MSG_TOP]), ([COMM_TOP], [MSG_TOP]),
                                      ([1, COMM_TOP - 1], [0, MSG_TOP - 1]), ([3, COMM_TOP], [0, 7, MSG_TOP]),
                                      ([2, 8], [MSG_TOP - 1, MSG_TOP])]
         for outside in ("default", "extrapolate")]


def test_the_blob_and_the_compiled_c_answer_like_query_at_the_limits(c_program):
    fns = [tree(c, m, seed, outside) for seed, (c, m, outside) in enumerate(CASES)]
    functions = {f"decide{i}": emit("c", [fn], name=f"decide{i}") for i, fn in enumerate(fns)}
    functions.update({f"table{i}": emit("c", [fn], flavor="table", name=f"table{i}") for i, fn in enumerate(fns)})
    program = c_program(functions, [emit("blob", [fn]) for fn in fns], sanitize=True)
    queries, wanted = [], []
    for i, fn in enumerate(fns):
        for comm, msg in probes(fn):
            want = expected(fn, comm, msg)
            for kind, index in (("f", i), ("f", len(fns) + i), ("b", i)):
                queries.append((kind, index, comm, msg))
                wanted.append(want)
    assert program.ask(queries) == wanted


@pytest.mark.parametrize("comm_sizes, msg_sizes", [([2, 4, 8], [1, 1024, MSG_TOP]), ([2, 4, COMM_TOP], [1, 8, 64])])
def test_build_query_and_codegen_at_the_limits_through_the_cli(tmp_path, comm_sizes, msg_sizes):
    from click.testing import CliRunner
    from quadsel.cli import main
    lines = ["collective,algorithm,segsize,comm_size,msg_size,time_us"]
    for alg, factor in (("1", 1.0), ("6", 2.0)):
        for comm in comm_sizes:
            for msg in msg_sizes:
                lines.append(f"bcast,{alg},0,{comm},{msg},{factor * (2 if msg > 8 else 1):.1f}")
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    runner = CliRunner()
    result = runner.invoke(main, ["build", str(tmp_path / "m.csv"), "-o", str(tmp_path / "t.qt.json")])
    assert result.exit_code == 0 and "Warning" not in result.output, result.output
    for comm in comm_sizes:
        for msg in msg_sizes:
            result = runner.invoke(main, ["query", str(tmp_path / "t.qt.json"), "--comm", str(comm), "--msg", str(msg)])
            assert result.output.split()[0] == "1", (comm, msg, result.output)
    for target in ("ompi-rules", "ompi-json", "blob", "c"):
        result = runner.invoke(main, ["codegen", str(tmp_path / "t.qt.json"), "-t", target, "-o", str(tmp_path / target)])
        assert result.exit_code == 0, (target, result.output)
    assert "-9223372036854775808" not in (tmp_path / "ompi-rules").read_text()


# -- total-size keys (per rank x comm size): Open MPI reads a key as a C long ----------------------------------
TOTAL_KEY = {"allgather": 0, "alltoall": 3, "gather": 9, "reduce_scatter_block": 13, "reduce_scatter": 12}


def total_tree(collective, comm_sizes, msg_sizes, seed, outside):
    rng = np.random.default_rng(seed)
    cost = rng.uniform(1.0, 100.0, size=(len(comm_sizes), len(msg_sizes), 2))
    rows = table_from_cube(cost, comm_sizes, msg_sizes, [("1", 0), ("2", 0)], collective)
    return build_size_tree(build_decision_map(rows, collective), split="measured", between="least-bad",
                                   leaf_rule="penalty", outside=outside)


@given(st.sampled_from(sorted(TOTAL_KEY)), st.lists(st.integers(1, 12), min_size=1, max_size=3, unique=True).map(sorted),
       sizes([0, 1, 1 << 40, MSG_TOP // 4, MSG_TOP // 3, MSG_TOP // 2, MSG_TOP - 1, MSG_TOP], 0, MSG_TOP),
       st.integers(0, 10 ** 6), st.sampled_from(["default", "extrapolate"]))
@settings(max_examples=50, deadline=None)
def test_total_size_keys_beyond_a_c_long_are_left_out_and_every_reachable_key_follows_the_tree(
        collective, comm_sizes, msg_sizes, seed, outside):
    """Decision (docs/formats-output.md, "Total-size keys"): a key beyond 2^63 - 1 is a total no call reaches; its
    rule is left out (with a note), and every key Open MPI can compute still gets the tree's method."""
    fn = total_tree(collective, comm_sizes, msg_sizes, seed, outside)
    text = ompi_rules.emit([fn])
    classic, as_json = OmpiClassicRules(text), OmpiJsonRules(ompi_json.emit([fn]))
    keys = [rule[0] for comms in classic.collectives.values() for _, rules in comms for rule in rules]
    assert max(keys) <= MSG_TOP
    read_back = read_rules_file("r.rules", text=text, library_version="Open MPI v5.0.11")   # quadsel's own reader
    for comm in range(1, comm_sizes[-1] + 1):
        if outside == "extrapolate" and not comm_sizes[0] <= comm <= comm_sizes[-1]:
            continue
        for msg in sorted({min(max(int(m) + d, 0), MSG_TOP) for m in msg_sizes for d in (-1, 0, 1)} | {0}):
            if msg * comm > MSG_TOP:
                continue        # no call: its buffers would hold more than 8 EiB
            want = expected(fn, comm, msg)[0]
            assert classic.lookup(TOTAL_KEY[collective], comm, msg * comm)[0] == want, (comm, msg)
            assert as_json.lookup(collective, comm, msg * comm)[0] == want, (comm, msg)
            assert read_back.pick(collective, comm, msg).label == ("default" if want == 0 else str(want))


def test_codegen_says_which_total_size_keys_it_left_out(tmp_path):
    from click.testing import CliRunner
    from quadsel.cli import main
    lines = ["collective,algorithm,segsize,comm_size,msg_size,time_us"]
    for alg in ("1", "2"):
        for comm in (2, 4, 8):
            for i, msg in enumerate((1, 1024, 1 << 62, MSG_TOP - 8)):
                lines.append(f"allgather,{alg},0,{comm},{msg},{1.0 if (int(alg) + i) % 2 else 2.0}")
    (tmp_path / "ag.csv").write_text("\n".join(lines) + "\n")
    runner = CliRunner()
    assert runner.invoke(main, ["build", str(tmp_path / "ag.csv"), "-o", str(tmp_path / "t.qt.json")]).exit_code == 0
    result = runner.invoke(main, ["codegen", str(tmp_path / "t.qt.json"), "-t", "ompi-rules", "-o", str(tmp_path / "r")])
    assert result.exit_code == 0 and "message keys beyond 9223372036854775807" in result.output, result.output
    assert "18446744073709551" not in (tmp_path / "r").read_text()
    read_rules_file(str(tmp_path / "r"), library_version="Open MPI v5.0.11")     # what verify reads: no error
