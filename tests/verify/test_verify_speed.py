"""`quadsel verify` end to end on the real MPI: 2 ranks, a few points (seconds). Skipped without MPI."""

import json
import sys

import pytest
from click.testing import CliRunner

from quadsel.cli import main
from quadsel.libraries import openmpi
from quadsel.verify import speed, verdict

from helpers import mpi_library as _library, mpiexec_beside as _mpiexec, tree_choosing, like_a_terminal

needs_openmpi = pytest.mark.skipif(not _mpiexec(sys.executable) or _library(sys.executable) != "openmpi",
                                   reason="needs Open MPI's mpiexec and mpi4py on Open MPI")


@pytest.fixture(autouse=True)
def _env(mpi_env):
    """Every test here launches MPI workers (conftest.mpi_env)."""


@needs_openmpi
def test_verify_reports_speedup_best_and_that_open_mpi_follows_the_rules(tmp_path):
    tree = tree_choosing("bcast", [2], [1024, 65536], [[("6", 0), ("3", 8192)]])
    path = tmp_path / "bcast.qt.json"
    tree.save(path)
    result = CliRunner().invoke(main, ["verify", str(path), "--np", "2", "--rounds", "2", "--max-reps", "10",
                                       "--max-time", "0.1", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)      # the ranks' progress lines reach stderr through the launcher's filter
    summary = doc["summary"]["bcast"]
    assert summary["points"] == 2 and summary["geomean_speedup"] > 0
    assert 0.0 <= summary["within_10pct_of_best"] <= 1.0
    assert {p["quadsel"] for p in doc["points"]} == {"6", "3/seg8192"}
    for p in doc["points"]:
        assert p["best_us"] <= p["quadsel_us"] and p["default_us"] > 0
    followed = doc["rules_followed"]["counts"]
    assert "differs" not in followed and followed.get("follows", 0) >= 1   # 64 KiB in 8 KiB segments: 8 messages
    # which algorithm the default ran, by name and id (every bcast algorithm is forced once to compare)
    for p in doc["points"]:
        ran = p["default_ran"]
        assert ran["match"] in ("fingerprint", "functions") and ran["arms"], p
        assert ran["names"] == [f"{a.split('/')[0]} {openmpi.ALGORITHMS['bcast'][int(a.split('/')[0])]}"
                                + (f"/{a.split('/', 1)[1]}" if "/" in a else "") for a in ran["arms"]]
        assert ran["functions"] and all(f.startswith("bcast_intra_") for f in ran["functions"])
        assert p["followed"] == "follows" or p["default_ran"]["arms"] == [p["quadsel"]]
    assert doc["statistics"]["proof"]["ran"] and doc["statistics"]["decision"] in verdict.DECISIONS


@needs_openmpi
def test_a_file_the_library_does_not_follow_is_not_deployed_and_fails(tmp_path, monkeypatch):
    # an MCA variable in the environment forces bcast basic_linear: Open MPI then ignores the rules file
    monkeypatch.setenv("OMPI_MCA_coll_tuned_bcast_algorithm", "1")
    tree = tree_choosing("bcast", [2], [65536], [[("6", 0)]])
    path = tmp_path / "bcast.qt.json"
    tree.save(path)
    result = CliRunner().invoke(main, ["verify", str(path), "--np", "2", "--rounds", "2", "--max-reps", "10",
                                       "--max-time", "0.1", "--fail-on-regression", "--min-gain", "1"])
    assert result.exit_code == 3, result.output
    assert "DECISION: do not deploy: the library does not follow the file at 1 point(s) (bcast comm 2 msg 65536)" \
        in result.stdout
    assert "DIFFERS: bcast comm 2 msg 65536: selected 6 binomial, library ran 1 basic_linear" in result.stdout


def _verify_rules(tmp_path, name, text, *args):
    """(verify's JSON document, its output) of a hand-written Open MPI rules file `text`, with verify's `args`."""
    rules = tmp_path / name
    rules.write_text(text)
    result = CliRunner().invoke(main, ["verify", str(rules), *args, "--rounds", "2", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.output


@needs_openmpi
def test_verify_a_hand_written_rules_file_end_to_end(tmp_path):
    rules = tmp_path / "bcast.rules"
    doc, _ = _verify_rules(tmp_path, "bcast.rules", "1\n7\n1\n2 2\n0 6 0 0\n65536 3 0 8192\n", "--np", "2",
                           "--comm-sizes", "2", "--msg-sizes", "1K,64K", "--max-reps", "10", "--max-time", "0.1")
    assert [p["quadsel"] for p in doc["points"]] == ["6", "3/seg8192"]
    assert all(p["best_us"] is None and p["rule"].startswith(str(rules)) for p in doc["points"])
    assert doc["summary"]["bcast"]["within_10pct_of_best"] is None
    followed = doc["rules_followed"]["counts"]
    assert "differs" not in followed and followed.get("follows", 0) >= 1
    assert doc["inputs"] == [{"path": str(rules), "kind": "ompi-rules", "collectives": ["bcast"], "ignored": None,
                              "warnings": []}]


@needs_openmpi
def test_the_follow_check_leaves_out_an_algorithm_the_library_refuses_at_a_size(tmp_path):
    """Issue 40: allgather's two_proc (6), chosen at 2 ranks, was forced at 4 by the follow check (every method the
    file names, at every point: MPI_ERR_UNSUPPORTED_OPERATION, the whole check lost); libraries/fallbacks.py's
    errors are left out per point now, every rank alike."""
    doc, output = _verify_rules(tmp_path, "allgather.rules", "1\n0\n2\n2 1\n0 6 0 0\n4 1\n0 4 0 0\n", "--np", "4",
                                "--comm-sizes", "2,4", "--msg-sizes", "64", "--max-reps", "5", "--max-time", "0.05")
    assert [p["quadsel"] for p in doc["points"]] == ["6", "4"]
    assert "RULES CHECK FAILED" not in output and "fingerprint launch failed" not in output
    followed = doc["rules_followed"]["counts"]
    assert "differs" not in followed and sum(followed.values()) == 2, followed


def test_summary_arithmetic():
    result = {"collective": "bcast", "points": [
        {"collective": "bcast", "comm": 2, "msg": 1, "default": ["default", 0], "quadsel": ["6", 0],
         "candidates": [["6", 0], ["1", 0]],
         "times": {"default": {"mean_us": 20.0}, "6": {"mean_us": 10.0}, "1": {"mean_us": 8.0}}},
        {"collective": "bcast", "comm": 2, "msg": 2, "default": ["default", 0], "quadsel": ["1", 0],
         "candidates": [["6", 0], ["1", 0]],
         "times": {"default": {"mean_us": 10.0}, "6": {"mean_us": 10.0}, "1": {"mean_us": 20.0}}}]}
    rows, summary = speed.summarize(result)
    assert [r["speedup"] for r in rows] == [2.0, 0.5]
    assert summary["geomean_speedup"] == pytest.approx(1.0)
    assert summary["within_10pct_of_best"] == 0.0
    assert summary["worst_vs_best"]["msg_size"] == 2 and summary["worst_vs_best"]["vs_best"] == pytest.approx(1.0)
    assert summary["lowest_speedup"]["msg_size"] == 2


def test_verify_needs_np_outside_mpi(tmp_path):
    tree = tree_choosing("bcast", [2], [1], [[("6", 0)]])
    tree.save(tmp_path / "t.qt.json")
    result = CliRunner().invoke(main, ["verify", str(tmp_path / "t.qt.json")], env={"OMPI_COMM_WORLD_SIZE": None})
    assert result.exit_code == 2 and "--np" in result.output


def _speed_ranks(session):
    """Pids of the verify timing ranks running in `session` (their command line names quadsel.verify.speed)."""
    import os
    pids = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                named = b"quadsel.verify.speed" in handle.read()
            with open(f"/proc/{entry}/stat") as handle:
                sid = int(handle.read().rsplit(")", 1)[1].split()[3])
        except (OSError, ValueError, IndexError):
            continue
        if named and sid == session:
            pids.append(int(entry))
    return pids


@needs_openmpi
def test_ctrl_c_stops_the_job_writes_nothing_and_exits_130(tmp_path):
    import os
    import signal
    import subprocess
    import time
    from pathlib import Path
    tree = tree_choosing("bcast", [2], [1 << k for k in range(21)], [[("6", 0)] * 21])
    path = tmp_path / "bcast.qt.json"
    tree.save(path)
    out = tmp_path / "verify.md"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[2])] + sys.path))
    proc = subprocess.Popen([sys.executable, "-m", "quadsel", "verify", str(path), "--np", "2", "--rounds", "1000",
                             "--max-reps", "200", "-o", str(out)], preexec_fn=like_a_terminal, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not _speed_ranks(proc.pid) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(1)                              # the job is timing
    assert proc.poll() is None and _speed_ranks(proc.pid), proc.communicate()
    os.killpg(proc.pid, signal.SIGINT)        # a terminal's Ctrl-C
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert stderr.strip().splitlines() == ["quadsel verify: interrupted; nothing was written (outputs are written "
                                           "whole at the end): run the command again"], stderr
    assert sorted(os.listdir(tmp_path)) == ["bcast.qt.json"]
    time.sleep(1)
    assert not _speed_ranks(proc.pid)                  # the job was stopped, no rank left running


@needs_openmpi
def test_the_follow_check_at_other_communicator_sizes_and_per_method(tmp_path):
    # timed at 2 ranks, checked at 2 and 4 (4 ranks on 2 cores: no timing, so oversubscription does not matter);
    # a tree says nothing at 4, its rules file does: the tree's point there is skipped with a note, the file's checked
    from quadsel.targets import ompi_rules
    tree = tree_choosing("alltoall", [2], [8], [[("1", 0)]])
    path = tmp_path / "alltoall.qt.json"
    tree.save(path)
    rules = tmp_path / "alltoall.rules"
    rules.write_text(ompi_rules.emit([tree]))
    timing = ["--np", "2", "--comm-sizes", "2", "--msg-sizes", "8", "--rounds", "1", "--max-reps", "3",
              "--max-time", "0.01", "--check-comm-sizes", "2,4", "--json"]
    result = CliRunner().invoke(main, ["verify", str(path)] + timing)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [(p["comm"], p["status"]) for p in doc["rules_followed"]["points"]] == [(2, "follows")]
    assert "skips 1 point(s) outside their measured communicator sizes" in result.stderr
    result = CliRunner().invoke(main, ["verify", str(rules), "--check-methods"] + timing)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [(p["comm"], p["method"], p["status"]) for p in doc["rules_followed"]["points"]] == [
        (2, "1", "follows"), (4, "1", "follows")]
    assert doc["rules_followed"]["methods"] == {}      # no --measurements and no tree: no method to check
    assert "--check-methods: no measured method to check" in result.stderr
    result = CliRunner().invoke(main, ["verify", str(path), "--check-methods"] + timing)
    doc = json.loads(result.stdout)
    assert doc["rules_followed"]["methods"] == {"alltoall": {"1": {"follows": 2}}}


@needs_openmpi
def test_tunes_verify_times_two_arms_and_not_the_points_at_the_default(tmp_path):
    """quadsel tune's verify (VerifyOptions best_arm and time_default_points False, issue 40): one timing job of the
    changed points with the default and the selection only; a collective at the default everywhere is not timed at
    all; the proof still checks every point; the decision is what it is with every point timed."""
    import numpy as np
    from quadsel.decision.builder import build_size_tree
    from quadsel.decision.decision_map import build_decision_map
    from quadsel.verify.run import VerifyOptions, run_verify
    from helpers import table_from_cube

    def keeping_default(collective, algorithm, cost):     # cost[comm][msg] of the algorithm; the default's is 1
        rows = table_from_cube(np.array(cost, dtype=float)[:, :, None], [2], [1024, 65536], [algorithm], collective,
                               default=np.ones((1, 2)))
        return build_size_tree(build_decision_map(rows, collective), split="measured", between="least-bad",
                               leaf_rule="penalty", keep_default=True, outside="default")
    bcast = keeping_default("bcast", ("3", 8192), [[5.0, 0.2]])       # the default at 1 KiB, 3 at 64 KiB
    reduce = keeping_default("reduce", ("1", 0), [[5.0, 5.0]])        # the default everywhere
    paths = []
    for fn in (bcast, reduce):
        paths.append(str(tmp_path / f"{fn.collective}.qt.json"))
        fn.save(paths[-1])
    out = run_verify(VerifyOptions(paths, 2, rounds=2, max_reps=6, max_time=0.1, progress=False, best_arm=False,
                                   time_default_points=False), lambda line: None)
    doc = out.document
    rows = {(p["collective"], p["msg_size"]): p for p in doc["points"]}
    assert rows[("bcast", 65536)]["default_us"] > 0 and rows[("bcast", 65536)]["best"] is None
    for key in (("bcast", 1024), ("reduce", 1024), ("reduce", 65536)):
        assert rows[key]["timed"] is False and rows[key]["verdict"] == "default" and "default_us" not in rows[key]
    assert doc["summary"]["reduce"]["points"] == 2 and doc["summary"]["reduce"]["untimed_default_points"] == 2
    assert doc["summary"]["bcast"]["points"] == 2 and doc["summary"]["bcast"]["verdicts"]["default"] == 1
    checked = {(c["collective"], c["msg"]) for c in doc["rules_followed"]["points"]}
    assert checked == set(rows)                      # the proof covers the untimed points too
    assert "not timed" in out.table and "1 point(s) at the library default not timed" in out.table
    from quadsel.schemas import check_doc
    check_doc(doc, "verify.json", "verify-result")
