"""`quadsel verify RULES`: the package's rules-file readers (quadsel/targets/rules_file.py) and the verify plan of a
rules file, without launching MPI.

Two kinds of checks: the readers against tests/library_readers.py (the emitters' independent oracle, which
shares no code with quadsel.targets) and against the trees, on emitted files; and hand-written files
(tests/data/rules/) against values worked out by hand from the libraries' documented matching.
"""

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from quadsel.libraries import openmpi
from quadsel.targets import mpich_json, ompi_json, ompi_rules
from quadsel.cli import main
from quadsel.errors import InputError, QuadselError
from quadsel.targets.library_call import DEFAULT_PICK, CallModel, Pick
from quadsel.targets.mpich_json import _pof2
from quadsel.targets.rules_file import detect_format, read_rules_file
from quadsel.verify import command, speed
from quadsel.verify.selection import load_inputs

from library_readers import MpichSelection, OmpiClassicRules, OmpiJsonRules
from helpers import COLL_ID, mpich_fns, ompi_fns
from helpers import probe_points, random_fn

DATA = Path(__file__).resolve().parents[1] / "data" / "rules"
OMPI5 = "Open MPI v5.0.11, package: Open MPI, ident: 5.0.11"
OMPI6 = "Open MPI v6.0.0, package: Open MPI, ident: 6.0.0"


def tree_pick(fn, comm, msg, max_requests=0):
    """What the emitted Open MPI file makes the library run, worked out from the tree."""
    method = fn.query(comm, msg)
    alg = int(method.algorithm)
    seg = 0 if alg in openmpi.UNSEGMENTED[fn.collective] else method.segsize
    params = (("max_requests", max_requests),) if fn.collective == "reduce" and max_requests else ()
    return Pick(str(alg), seg, params)


# -- emitted files: package reader == tree == independent oracle ------------------------------------------
@given(st.integers(0, 10**6), st.sampled_from([["bcast"], ["reduce"], ["bcast", "reduce", "allreduce"]]),
       st.integers(1, 5), st.integers(1, 7), st.integers(1, 5), st.sampled_from([None, 1, 2]),
       st.sampled_from([None, 0, 8]))
@settings(max_examples=40, deadline=None)
def test_classic_reader_reads_emitted_files_like_the_tree_and_the_oracle(seed, collectives, n_comm, n_msg,
                                                                          n_methods, max_depth, max_requests):
    fns = ompi_fns(seed, collectives, n_comm, n_msg, n_methods, max_depth)
    text = ompi_rules.emit(fns, max_requests=max_requests)
    rules = read_rules_file("emitted.rules", text, OMPI5)
    oracle = OmpiClassicRules(text)
    assert rules.format == "ompi-rules" and rules.ignored is None and not rules.warnings
    assert rules.version == (1 if max_requests is None else 2)
    assert sorted(rules.collectives) == sorted(collectives)
    for fn in fns:
        for comm, msg in probe_points(fn):
            got = rules.pick(fn.collective, comm, msg)
            assert got == tree_pick(fn, comm, msg, max_requests or 0), (fn.collective, comm, msg)
            alg, faninout, seg, maxreq = oracle.lookup(COLL_ID[fn.collective], comm, msg)
            assert got == ompi_rules.pick(fn.collective, alg, faninout, seg, maxreq, ""), (fn.collective, comm, msg)


@given(st.integers(0, 10**6), st.sampled_from([["bcast"], ["bcast", "reduce", "allreduce"]]),
       st.integers(1, 5), st.integers(1, 7), st.integers(1, 5), st.sampled_from([None, 1]))
@settings(max_examples=30, deadline=None)
def test_json_reader_reads_emitted_files_like_the_tree_and_the_oracle(seed, collectives, n_comm, n_msg, n_methods,
                                                                       max_depth):
    fns = ompi_fns(seed, collectives, n_comm, n_msg, n_methods, max_depth)
    text = ompi_json.emit(fns)
    rules = read_rules_file("emitted.json", text, OMPI6)
    oracle = OmpiJsonRules(text)
    assert rules.format == "ompi-json" and rules.ignored is None and not rules.warnings
    for fn in fns:
        for comm, msg in probe_points(fn):
            got = rules.pick(fn.collective, comm, msg)
            assert got == tree_pick(fn, comm, msg), (fn.collective, comm, msg)
            alg, faninout, seg, reqs = oracle.lookup(fn.collective, comm, msg)
            assert got == ompi_rules.pick(fn.collective, alg, faninout, seg, reqs, "")
    # Open MPI 5.0.x has no JSON reader: the file is ignored, the default runs everywhere
    old = read_rules_file("emitted.json", text, OMPI5)
    assert "reads only the classic rules format" in old.ignored
    assert all(old.pick(fn.collective, c, m) == DEFAULT_PICK for fn in fns for c, m in probe_points(fn))


@given(st.integers(0, 10**6), st.sampled_from([["bcast"], ["reduce"], ["bcast", "reduce", "allreduce"]]),
       st.integers(1, 5), st.integers(1, 7), st.integers(1, 4), st.sampled_from([None, 1]))
@settings(max_examples=30, deadline=None)
def test_mpich_reader_reads_emitted_files_like_the_oracle(seed, collectives, n_comm, n_msg, n_methods, max_depth):
    fns = mpich_fns(seed, collectives, n_comm, n_msg, n_methods, max_depth)
    text = mpich_json.emit(fns)
    rules = read_rules_file("emitted.json", text, "MPICH Version: 5.0.2")
    oracle = MpichSelection(text)
    assert rules.format == "mpich-json" and rules.library == "mpich"
    assert any("no selection for barrier" in w for w in rules.warnings)   # emitted without --mpich-base
    for fn in fns:
        for comm, msg in probe_points(fn):
            got = rules.pick(fn.collective, comm, msg)
            if CallModel.of_verify_call(fn.collective, msg).count < _pof2(comm):
                continue   # the oracle models a count >= the comm's power of two only
            name, _ = oracle.lookup(fn.collective, comm, msg)
            assert got == Pick(name.split("_", 3)[3]), (fn.collective, comm, msg)


# -- hand-written Open MPI classic files ---------------------------------------------------------------------
def test_classic_v1_hand_written():
    rules = read_rules_file(str(DATA / "good-v1.rules"), library_version=OMPI5)
    assert rules.collectives == ["bcast", "reduce"] and rules.version == 1 and not rules.ignored
    pick = lambda *a: rules.pick(*a)
    assert pick("bcast", 2, 0) == pick("bcast", 2, 1023) == Pick("1")
    assert pick("bcast", 1, 100) == Pick("1")                      # below the first key: the first key's rules
    assert pick("bcast", 2, 1024) == pick("bcast", 64, 65535) == Pick("6")
    assert pick("bcast", 8, 65536) == Pick("2", 8192, (("chain_fanout", 1),))   # 1 chain, not the forced 4
    assert pick("reduce", 4, 4095) == Pick("1") and pick("reduce", 4, 4096) == Pick("5", 1024)
    assert pick("bcast", 8, 65536).rule.endswith("good-v1.rules:8")


def test_classic_v2_optional_max_requests_and_algorithm_zero():
    rules = read_rules_file(str(DATA / "good-v2.rules"), library_version=OMPI5)
    assert rules.version == 2 and rules.collectives == ["reduce"]
    assert rules.pick("reduce", 2, 100) == DEFAULT_PICK           # ALG 0: the fixed decision
    assert rules.pick("reduce", 4, 4096) == Pick("5", 1024, (("max_requests", 8),))
    assert rules.pick("reduce", 1, 5000) == Pick("5", 1024, (("max_requests", 8),))
    assert rules.pick("reduce", 8, 5) == rules.pick("reduce", 100, 10**9) == Pick("2")   # fan-out 4 = forced default
    # Open MPI >= 6 reads each comm key as the exclusive upper end of a range: 4 ranks fall under key 8
    newer = read_rules_file(str(DATA / "good-v2.rules"), library_version=OMPI6)
    assert newer.pick("reduce", 4, 4096) == Pick("2") and newer.pick("reduce", 1, 4096).label == "5"


def test_classic_unsorted_keys_follow_open_mpis_first_larger_key_stop():
    rules = read_rules_file(str(DATA / "unsorted.rules"), library_version=OMPI5)
    assert rules.pick("bcast", 3, 0) == Pick("6")      # the first key 4 > 3: Open MPI stops there, keeps the first
    assert rules.pick("bcast", 5, 0) == Pick("1")      # 4 <= 5, then 2 <= 5: the later key wins
    assert rules.pick("bcast", 9, 0) == Pick("3", 4096)
    assert any("unsorted.rules:6" in w and "does not increase" in w for w in rules.warnings)


def test_a_first_message_rule_not_zero_makes_the_whole_file_the_default():
    rules = read_rules_file(str(DATA / "ignored-first-rule.rules"), library_version=OMPI5)
    assert "ignored-first-rule.rules:12" in rules.ignored and "silently ignores this whole file" in rules.ignored
    assert rules.pick("bcast", 2, 4096) == DEFAULT_PICK   # bcast's own rules are fine, but the file is dropped
    assert rules.pick("reduce", 4, 65536) == DEFAULT_PICK


@pytest.mark.parametrize("name, line, words", [
    ("bad-word.rules", 6, "'linear' is not a plain decimal integer"),
    ("bad-octal.rules", 5, "octal"),
    ("bad-negative.rules", 5, "negative"),
    ("bad-truncated.rules", 7, "the file ends where a message size of bcast comm size 2 was expected"),
    ("bad-trailing.rules", 6, "numbers after the last collective"),
    ("bad-version-line.rules", 2, "very first characters"),
    ("bad-collective.rules", 2, "collective id 30 does not exist"),
    ("bad-algorithm.rules", 5, "bcast has no coll/tuned algorithm 12"),
    ("bad-v1-five-numbers.rules", 5, "5 numbers on a message rule line"),
    ("bad-ompi-value.json", 3, "'msg_size_min' must be an integer or \"inf\""),
    ("bad-ompi-collective.json", 3, "unknown collective 'Bcast'"),
    ("bad-syntax.json", 3, "not valid JSON"),
    ("bad-mpich-key.json", 2, "MPICH does not know the key 'msg_size<=100'"),
    ("bad-mpich-any-first.json", 2, "must be the last key"),
    ("bad-mpich-no-alternative.json", 2, "needs a following key"),
    ("bad-mpich-algorithm.json", 2, "MPICH has no bcast algorithm 'fastest'"),
])
def test_malformed_rules_files_name_file_and_line(name, line, words):
    path = str(DATA / name)
    with pytest.raises(InputError) as caught:
        read_rules_file(path, library_version=OMPI5)
    assert caught.value.line == line and words in str(caught.value), str(caught.value)
    assert str(caught.value).startswith(f"{path}:{line}: ")


# -- hand-written JSON files ---------------------------------------------------------------------------------
def test_ompi_json_hand_written():
    rules = read_rules_file(str(DATA / "good-ompi.json"), library_version=OMPI6)
    assert rules.pick("bcast", 2, 100) == Pick("1")
    assert rules.pick("bcast", 7, 1024) == Pick("6", 8192)          # "binomial" by name
    assert rules.pick("bcast", 1, 0) == DEFAULT_PICK                # no comm range holds
    assert rules.pick("bcast", 8, 10) == DEFAULT_PICK               # its only rule is disabled
    assert any("good-ompi.json:6" in w and "disables this rule" in w for w in rules.warnings)


def test_mpich_json_hand_written():
    rules = read_rules_file(str(DATA / "good-mpich.json"), library_version="MPICH Version: 5.0.2")
    assert rules.pick("bcast", 4, 10**6) == Pick("binomial")
    assert rules.pick("bcast", 8, 12288) == Pick("binomial")
    assert rules.pick("bcast", 8, 12289) == Pick("scatter_ring_allgather")
    assert rules.pick("reduce", 4, 4096) == Pick("reduce_scatter_gather")      # MPI_SUM on 1024 floats
    assert rules.pick("reduce", 4, 2048) == Pick("binomial")
    assert rules.pick("reduce", 4, 2049) == Pick("reduce_scatter_gather")       # 2049 uint8: count >= pof2
    assert rules.pick("reduce", 4, 8192, CallModel.of_order_call(8192)) == Pick("binomial")   # a user operation
    with pytest.raises(QuadselError, match="no allreduce rule holds"):
        rules.pick("allreduce", 4, 8)


def test_format_detection():
    assert detect_format("1\n7\n") == "ompi-rules"
    assert detect_format('{"format": "quadsel-quadtree", "version": 1}') == "tree"
    assert detect_format((DATA / "good-ompi.json").read_text()) == "ompi-json"
    assert detect_format((DATA / "good-mpich.json").read_text()) == "mpich-json"


# -- verify's plan of a rules file and its CLI, MPI replaced -------------------------------------------------
@pytest.fixture
def fake_mpi(monkeypatch):
    """Open MPI 5.0.11 without launching: run_speed answers from the plan (the quadsel arm 10 µs, others 20 µs)."""
    launched = []
    monkeypatch.setattr(command, "current_library_version", lambda: ("openmpi", OMPI5))

    def run_speed(spec, np_, mpiexec=None, timeout=None):
        launched.append(spec)
        points = []
        for p in spec["points"]:
            times = {speed._key(m): {"mean_us": 10.0 if m == p["quadsel"] else 20.0, "stddev_us": 0.0, "n": 5}
                     for m in [p["default"], p["quadsel"]] + (p["candidates"] or [])}
            points.append(dict(p, times=times))
        return {"points": points}
    monkeypatch.setattr(command, "run_speed", run_speed)
    monkeypatch.delenv("OMPI_COMM_WORLD_SIZE", raising=False)
    return launched


def test_a_rules_file_needs_a_grid(fake_mpi):
    result = CliRunner().invoke(main, ["verify", str(DATA / "good-v1.rules"), "--np", "4", "--no-check-rules"])
    assert result.exit_code == 2 and "give --comm-sizes and --msg-sizes" in result.output, result.output
    result = CliRunner().invoke(main, ["verify", str(DATA / "good-v1.rules"), "--np", "4", "--comm-sizes", "2,4",
                                       "--no-check-rules"])
    assert result.exit_code == 2 and "give --msg-sizes" in result.output
    assert not fake_mpi


def test_verify_a_rules_file_without_measurements_skips_the_best_arm(fake_mpi):
    result = CliRunner().invoke(main, ["verify", str(DATA / "good-v1.rules"), "--np", "4", "--comm-sizes", "2,4",
                                       "--msg-sizes", "8,2K,64K", "--no-check-rules"])
    assert result.exit_code == 0, result.output
    assert [s["collective"] for s in fake_mpi] == ["bcast", "reduce"]
    bcast = {(p["comm"], p["msg"]): p for p in fake_mpi[0]["points"]}
    assert bcast[(4, 65536)]["quadsel"] == ["2", 8192, [["chain_fanout", 1]]]
    assert bcast[(2, 8)]["quadsel"] == ["1", 0] and bcast[(2, 8)]["candidates"] is None
    assert "best arm skipped" in result.output and "geometric-mean speed-up 2.000x" in result.output


def test_verify_a_rules_file_with_measurements_times_their_best(fake_mpi, tmp_path):
    csv = tmp_path / "m.csv"
    csv.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us\n"
                   "bcast,2,8,default,0,5\nbcast,2,8,6,0,3\nbcast,2,8,1,0,4\n"
                   "bcast,4,2048,3,1024,9\nbcast,4,2048,6,0,12\n"
                   "reduce,4,4096,5,1024,7\nreduce,4,4096,1,0,9\n")
    result = CliRunner().invoke(main, ["verify", str(DATA / "good-v1.rules"), "--np", "4", "--measurements",
                                       str(csv), "--no-check-rules", "--json"])
    assert result.exit_code == 0, result.output
    assert [s["collective"] for s in fake_mpi] == ["bcast", "reduce"]
    assert [(p["comm"], p["msg"], p["candidates"]) for p in fake_mpi[1]["points"]] == [(4, 4096, [["5", 1024], ["1", 0]])]
    points = {(p["comm"], p["msg"]): p for p in fake_mpi[0]["points"]}
    assert sorted(points) == [(2, 8), (2, 2048), (4, 8), (4, 2048)]
    assert points[(2, 8)]["candidates"] == [["6", 0], ["1", 0]]          # the measured best three, fastest first
    assert points[(4, 2048)]["candidates"] == [["3", 1024], ["6", 0]]


def test_an_ignored_file_is_said_loudly_and_verified_as_the_default(fake_mpi):
    result = CliRunner().invoke(main, ["verify", str(DATA / "ignored-first-rule.rules"), "--np", "4",
                                                       "--comm-sizes", "2,4", "--msg-sizes", "8,64K",
                                                       "--no-check-rules"])
    assert result.exit_code == 0, result.stderr
    warning = [line for line in result.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warning) == 1 and "ignored-first-rule.rules:12" in warning[0]
    assert "silently ignores this whole file" in warning[0] and "verifying the library default" in warning[0]
    for spec in fake_mpi:
        assert all(p["quadsel"] == ["default", 0] for p in spec["points"])
    assert "bcast: changes 0 of 4 points; nothing to compare" in result.stdout
    assert "DECISION: do not deploy: the selection keeps the library default at all 8 points" in result.stdout


@pytest.mark.parametrize("name", ["bad-word.rules", "bad-mpich-key.json", "bad-syntax.json"])
def test_malformed_file_through_the_cli_one_line_exit_2(fake_mpi, name):
    result = CliRunner().invoke(main, ["verify", str(DATA / name), "--np", "2",
                                                       "--comm-sizes", "2", "--msg-sizes", "8"])
    assert result.exit_code == 2 and not fake_mpi
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{DATA / name}:" in lines[0] and "Traceback" not in result.stderr


def test_mpich_file_under_open_mpi_is_refused(fake_mpi):
    result = CliRunner().invoke(main, ["verify", str(DATA / "good-mpich.json"), "--np", "2", "--comm-sizes", "2",
                                       "--msg-sizes", "8"])
    assert result.exit_code == 2 and "an MPICH rules file, but mpi4py loads Open MPI" in result.output


def test_one_selection_per_collective(tmp_path):
    fn = random_fn(1, 2, 3, 2, None, names=["1", "6"], collective="bcast")
    fn.save(tmp_path / "bcast.qt.json")
    with pytest.raises(QuadselError, match="bcast is also selected by"):
        load_inputs([str(tmp_path / "bcast.qt.json"), str(DATA / "good-v1.rules")], "openmpi", OMPI5)


def test_tree_plan_is_unchanged(tmp_path):
    fn = random_fn(5, 2, 3, 3, None, names=["1", "3", "6"], collective="bcast")
    points = command.plan(fn, "openmpi", 10**6)
    assert len(points) == 6 and all(p["candidates"] == [[m.algorithm, m.segsize] for m in fn.methods] for p in points)
    assert all(p["quadsel"] == [fn.query(p["comm"], p["msg"]).algorithm, fn.query(p["comm"], p["msg"]).segsize]
               for p in points)


def test_table_lists_checks_per_file_and_differing_points():
    from quadsel.verify.follow import PointCheck
    rows = [{"collective": "bcast", "comm_size": 4, "msg_size": 8, "quadsel": "1", "best": None, "default_us": 20.0,
             "quadsel_us": 10.0, "best_us": None, "speedup": 2.0, "vs_best": None}]
    summaries = {"bcast": {"points": 1, "geomean_speedup": 2.0, "faster_than_default": 1.0, "points_with_best": 0,
                           "within_10pct_of_best": None, "worst_vs_best": None,
                           "lowest_speedup": {"comm_size": 4, "msg_size": 8, "quadsel": "1", "speedup": 2.0}}}
    checks = {"a.rules": [PointCheck("bcast", 4, 8, "1", "follows", ["1"]),
                          PointCheck("bcast", 4, 16, "1", "differs", ["default"])]}
    text = command.format_table(rows, summaries, checks, ["IGNORED: x"], library="openmpi")
    assert "| bcast | 4 | 8 | 20.0 | 10.0 | — | 2.00 | — | — | — | 1 basic_linear | — | — |" in text
    assert "best arm skipped" in text and "IGNORED: x" in text
    assert "rules file followed by the library (a.rules): 1 differs, 1 follows" in text
    assert "DIFFERS: bcast comm 4 msg 16: selected 1 basic_linear, library ran default" in text


def test_mpich_collectives_that_keep_mpichs_own_selection_are_not_verified():
    import json
    doc = json.loads((DATA / "good-mpich.json").read_text())
    builtin = {"collective=reduce": doc["collective=reduce"], "collective=bcast": {"comm_type=intra": {}}}
    loaded = load_inputs([str(DATA / "good-mpich.json")], "mpich", "MPICH Version: 5.0.2", lambda: builtin)
    assert [s.collective for s in loaded.selections] == ["bcast"]
    assert any("reduce: MPICH's own selection, not verified" in n for n in loaded.notes)


def test_best_measured_keeps_the_three_fastest_per_point(tmp_path):
    csv = tmp_path / "m.csv"
    csv.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us\n"
                   "bcast,2,8,default,0,1\nbcast,2,8,6,0,3\nbcast,2,8,1,0,4\nbcast,2,8,3,1024,2\nbcast,2,8,5,0,9\n"
                   "reduce,2,8,1,0,4\n")
    best = command.best_measured([str(csv)])
    assert [m.label for m in best["bcast"][(2, 8)]] == ["3/seg1024", "6", "1"]
    assert command.best_measured([str(csv)], "allreduce") == {}


def test_unguarded_mpich_bcast_smp_is_reported():
    # MPICH 5.0.2 asserts MPIR_Comm_is_parent_comm in bcast smp; its own selection keeps smp under
    # comm_hierarchy=parent, a selection file that does not makes MPI_Comm_split abort
    text = ('{"collective=bcast": {"comm_type=intra": {\n "avg_msg_size<=64": {"algorithm=MPIR_Bcast_intra_smp": {}},\n'
            ' "avg_msg_size=any": {"comm_hierarchy=parent": {"algorithm=MPIR_Bcast_intra_smp": {}},\n'
            '                      "comm_hierarchy=any": {"algorithm=MPIR_Bcast_intra_binomial": {}}}}}}')
    rules = read_rules_file("smp.json", text, "MPICH Version: 5.0.2")
    assert [w for w in rules.warnings if "smp outside" in w] == [
        w for w in rules.warnings if w.startswith("smp.json:2: bcast/reduce smp outside \"comm_hierarchy=parent\" "
                                                  "(lines 2)")]
    assert any("smp outside" in w for w in rules.warnings)
    assert rules.pick("bcast", 4, 100) == Pick("smp")       # one node, 4 ranks: a parent communicator
    assert rules.pick("bcast", 1, 100) == Pick("binomial")


def test_a_failed_rules_check_keeps_the_timings_and_exits_1(fake_mpi, monkeypatch):
    from quadsel.verify import follow

    def aborts(*args, **kwargs):
        raise QuadselError("fingerprint launch failed (exit 9): Abort(1) on node 1: Internal error")
    monkeypatch.setattr(follow, "check_follows", aborts)
    result = CliRunner().invoke(main, ["verify", str(DATA / "good-v1.rules"), "--np", "4", "--comm-sizes", "4",
                                       "--msg-sizes", "8"])
    assert result.exit_code == 1
    assert "geometric-mean speed-up" in result.stdout
    assert f"RULES CHECK FAILED ({DATA / 'good-v1.rules'}): fingerprint launch failed" in result.stderr


def test_verify_reduces_in_the_datatype_measure_would_use_for_the_same_sizes():
    from quadsel.targets.library_call import CallModel, verify_type_size
    assert verify_type_size("reduce", [1, 16, 4096]) == 1        # as `quadsel measure --msg-sizes 1-1M:pow2`: uint8
    assert verify_type_size("reduce", [4, 16, 4096]) == 4        # every size a multiple of 4: float
    assert verify_type_size("bcast", [4, 8]) == 1
    assert CallModel.of_verify_call("reduce", 4096, 1).count == 4096
    assert CallModel.of_verify_call("reduce", 4096, 4).count == 1024
