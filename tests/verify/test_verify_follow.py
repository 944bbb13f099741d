"""The MPI library really follows the emitted rules files (real launches; skipped without MPI).

Open MPI: a file launch (OMPI_MCA_coll_tuned_dynamic_rules_filename) must send exactly the messages that
forcing the tree's method sends (pml/monitoring traffic), and not what Open MPI's fixed decision sends.
MPICH (QUADSEL_MPICH_PYTHON=/path/to/venv/bin/python): the reduction order of a file launch
(MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE) must be the forced method's.
"""

import os
import sys
from pathlib import Path

import pytest

from quadsel.targets import mpich_json, ompi_rules
from quadsel.verify.follow import check_follows, summary

from helpers import mpi_library as _library, mpiexec_beside as _mpiexec, tree_choosing

REPO = Path(__file__).resolve().parents[2]
pytest.importorskip("mpi4py")


MPICH_PYTHON = os.environ.get("QUADSEL_MPICH_PYTHON")
needs_openmpi = pytest.mark.skipif(not _mpiexec(sys.executable) or _library(sys.executable) != "openmpi",
                                   reason="needs Open MPI's mpiexec and mpi4py on Open MPI")
needs_mpich = pytest.mark.skipif(not MPICH_PYTHON, reason="the MPICH venv: set QUADSEL_MPICH_PYTHON to a Python with MPICH")


@pytest.fixture(autouse=True)
def _env(mpi_env):
    """Every test here launches MPI workers (conftest.mpi_env)."""


@needs_openmpi
@pytest.mark.parametrize("version2", [False, True])
def test_open_mpi_follows_the_emitted_classic_rules_file(tmp_path, version2):
    # 4 ranks (oversubscribed on 2 cores): enough for bcast algorithms to differ in who sends what
    bcast = tree_choosing("bcast", [2, 4], [1, 1024, 65536],
                          [[("1", 0), ("6", 0), ("3", 4096)],
                           [("3", 0), ("2", 0), ("3", 1024)]])
    reduce = tree_choosing("reduce", [2, 4], [8, 8192, 262144],
                           [[("1", 0), ("1", 0), ("3", 8192)],
                            [("3", 0), ("1", 0), ("5", 16384)]])
    rules = tmp_path / "rules.conf"
    rules.write_text(ompi_rules.emit([bcast, reduce], max_requests=0 if version2 else None))
    checks = check_follows([bcast, reduce], str(rules), "openmpi", 4)
    bad = [c for c in checks if c.status not in ("follows", "indistinguishable")]
    assert not bad, bad
    assert all(c.status == "follows" for c in checks if c.comm == 4), checks   # 4 ranks tell algorithms apart
    assert summary(checks).get("follows", 0) >= 8, checks


@needs_openmpi
def test_a_file_open_mpi_ignores_is_caught(tmp_path):
    # a first message rule that is not 0 makes Open MPI drop the whole file: the check must notice
    bcast = tree_choosing("bcast", [4], [1, 65536], [[("5", 0), ("3", 1024)]])
    text = ompi_rules.emit([bcast])
    broken = text.replace("\n0 5 0 0", "\n1 5 0 0")
    assert broken != text
    rules = tmp_path / "broken.conf"
    rules.write_text(broken)
    checks = check_follows([bcast], str(rules), "openmpi", 4)
    assert any(c.status == "differs" for c in checks), checks


@needs_mpich
def test_mpich_follows_the_emitted_selection(tmp_path):
    # allreduce: its algorithms accept the user operation the order fingerprint needs (MPICH's reduce
    # reduce_scatter_gather needs a built-in op; the emitted guard sends other ops to binomial)
    reduce = tree_choosing("allreduce", [2, 4], [8, 65536],
                           [[("recursive_doubling", 0), ("ring", 0)],
                            [("ring", 0), ("tree", 0)]])
    lib = Path(MPICH_PYTHON).parent.parent / "lib"
    base = str(lib / "libmpi.so")
    selection = tmp_path / "mpich.json"
    selection.write_text(mpich_json.emit([reduce], base=mpich_json.load_base(base)))
    checks = check_follows([reduce], str(selection), "mpich", 4, python=MPICH_PYTHON,
                           mpiexec=_mpiexec(MPICH_PYTHON))
    bad = [c for c in checks if c.status not in ("follows", "indistinguishable")]
    assert not bad, bad
    assert summary(checks).get("follows", 0) >= 3, checks


# -- rules files checked as they are (quadsel verify RULES) ----------------------------------------------------
def _rules(path, text, library_version="Open MPI v5.0.11"):
    from quadsel.targets.rules_file import read_rules_file
    path.write_text(text)
    return read_rules_file(str(path), library_version=library_version)


@needs_openmpi
def test_open_mpi_follows_a_hand_written_file_with_a_chain_fan_out(tmp_path):
    # 4 ranks: one chain (0 -> 1 -> 2 -> 3) and four chains (0 -> each) send differently, so the fan-out
    # the rule carries must be forced too (coll_tuned_bcast_algorithm_chain_fanout)
    rules = _rules(tmp_path / "hand.rules", "1\n7\n1\n4 3\n0 2 1 0\n1024 2 4 0\n65536 6 0 0\n")
    checks = check_follows(rules.selections(), rules.path, "openmpi", 4,
                           points={"bcast": [(4, 8), (4, 2048), (4, 65536)]})
    by_msg = {c.msg: c for c in checks}
    assert [c.status for c in checks] == ["follows"] * 3, checks
    assert by_msg[8].method == "2 (chain_fanout=1)" and by_msg[2048].method == "2"
    assert "2" not in by_msg[8].matches and "2 (chain_fanout=1)" not in by_msg[2048].matches


@needs_openmpi
def test_open_mpi_version_2_max_requests_are_forced(tmp_path):
    rules = _rules(tmp_path / "v2.rules", "rule-file-version-2\n1\n11\n1\n4 2\n0 1 0 0\n4096 5 0 1024 8\n")
    checks = check_follows(rules.selections(), rules.path, "openmpi", 4, points={"reduce": [(4, 64), (4, 8192)]})
    assert [c.method for c in checks] == ["1", "5/seg1024 (max_requests=8)"]
    assert all(c.status == "follows" for c in checks), checks


@needs_openmpi
def test_a_file_open_mpi_ignores_runs_the_default(tmp_path):
    # reduce's first message rule is 8: Open MPI drops the whole file, bcast's good rules included
    rules = _rules(tmp_path / "dropped.rules", "2\n7\n1\n4 1\n0 1 0 0\n11\n1\n4 1\n8 1 0 0\n")
    assert rules.ignored
    checks = check_follows(rules.selections(), rules.path, "openmpi", 4,
                           points={"bcast": [(4, 8), (4, 65536)], "reduce": [(4, 64)]})
    assert all(c.method == "default" and c.status == "indistinguishable" for c in checks), checks


@needs_mpich
def test_mpich_follows_its_selection_file_read_back(tmp_path):
    from quadsel.targets.rules_file import read_rules_file
    allreduce = tree_choosing("allreduce", [2, 4], [8, 65536],
                              [[("recursive_doubling", 0), ("ring", 0)],
                               [("ring", 0), ("tree", 0)]])
    base = mpich_json.load_base(str(Path(MPICH_PYTHON).parent.parent / "lib" / "libmpi.so"))
    selection = tmp_path / "mpich.json"
    selection.write_text(mpich_json.emit([allreduce], base=base))
    rules = read_rules_file(str(selection), library_version="MPICH Version: 5.0.2")
    checks = check_follows(rules.selections(), str(selection), "mpich", 4, python=MPICH_PYTHON,
                           mpiexec=_mpiexec(MPICH_PYTHON), points={"allreduce": [(2, 8), (4, 8), (4, 65536)]})
    assert [c.method for c in checks] == ["recursive_doubling", "ring", "tree"]
    bad = [c for c in checks if c.status not in ("follows", "indistinguishable")]
    assert not bad and summary(checks).get("follows", 0) >= 2, checks


# -- the probe (quadsel.verify.probe): which algorithm ran, at 2 ranks ----------------------------------------
@needs_openmpi
@pytest.mark.parametrize("probe", [True, False])
def test_open_mpi_algorithms_that_send_alike_at_2_ranks_are_told_apart_by_their_functions(tmp_path, probe):
    # alltoall at 2 ranks: linear (1), modified bruck (3) and the fixed decision's pairwise (2) all send one
    # message each way; only the coll/base function that ran tells them apart
    alltoall = tree_choosing("alltoall", [2], [8, 4096], [[("1", 0), ("3", 0)]])
    rules = tmp_path / "rules.conf"
    rules.write_text(ompi_rules.emit([alltoall]))
    checks = check_follows([alltoall], str(rules), "openmpi", 2, probe=probe)
    assert [c.method for c in checks] == ["1", "3"]
    assert [c.status for c in checks] == (["follows"] * 2 if probe else ["indistinguishable"] * 2), checks


@needs_openmpi
def test_a_file_open_mpi_ignores_differs_at_2_ranks(tmp_path):
    alltoall = tree_choosing("alltoall", [2], [8, 4096], [[("1", 0), ("3", 0)]])
    text = ompi_rules.emit([alltoall])
    broken = text.replace("\n0 1 0 0", "\n1 1 0 0")     # Open MPI drops the file and runs its pairwise (2)
    assert broken != text
    rules = tmp_path / "broken.conf"
    rules.write_text(broken)
    checks = check_follows([alltoall], str(rules), "openmpi", 2)
    assert [c.status for c in checks] == ["differs", "differs"], checks
    assert all(c.matches == ["default"] for c in checks), checks


@needs_mpich
@pytest.mark.parametrize("probe", [True, False])
def test_mpich_data_movers_are_checked_through_their_messages(tmp_path, probe):
    # gather: no reduction order to look at. With the probe, MPICH's messages (UCX) tell `nb` (a schedule's
    # tags) from the default's binomial at 2 ranks; binomial itself is the default's choice; at 4 ranks
    # bcast's scatter + ring allgather sends other messages than binomial
    gather = tree_choosing("gather", [2, 4], [8, 4096], [[("nb", 0), ("binomial", 0)], [("nb", 0), ("nb", 0)]])
    bcast = tree_choosing("bcast", [2, 4], [8, 4096], [[("binomial", 0), ("binomial", 0)],
                                                       [("scatter_ring_allgather", 0), ("binomial", 0)]])
    base = mpich_json.load_base(str(Path(MPICH_PYTHON).parent.parent / "lib" / "libmpi.so"))
    selection = tmp_path / "mpich.json"
    selection.write_text(mpich_json.emit([gather, bcast], base=base))
    checks = check_follows([gather, bcast], str(selection), "mpich", 4, python=MPICH_PYTHON,
                           mpiexec=_mpiexec(MPICH_PYTHON), probe=probe)
    got = {(c.collective, c.comm, c.msg): c.status for c in checks}
    if not probe:
        assert set(got.values()) == {"unchecked"}, checks
        return
    assert got == {("gather", 2, 8): "follows", ("gather", 2, 4096): "indistinguishable",
                   ("gather", 4, 8): "follows", ("gather", 4, 4096): "follows",
                   ("bcast", 2, 8): "indistinguishable", ("bcast", 2, 4096): "indistinguishable",
                   ("bcast", 4, 8): "follows", ("bcast", 4, 4096): "indistinguishable"}, checks


@needs_openmpi
def test_one_rules_file_per_measured_method(tmp_path):
    # exscan has two algorithms and linear (1) is Open MPI's own choice: a tree that picks it proves nothing,
    # so --check-methods also checks a file per measured method; a file Open MPI drops is caught there too
    from quadsel.decision.decision_map import Method
    from quadsel.verify.method_files import check_methods
    methods = {"exscan": [Method("1"), Method("2")]}
    points = {"exscan": [(2, 8), (2, 4096)]}
    got = check_methods(methods, points, "openmpi", 2, ompi_rules.emit, str(tmp_path))
    assert {label: summary(c) for label, c in got["exscan"].items()} == {"1": {"indistinguishable": 2},
                                                                          "2": {"follows": 2}}
    (tmp_path / "broken").mkdir()
    got = check_methods(methods, points, "openmpi", 2, lambda fns: ompi_rules.emit(fns).replace("\n0 2 0 0", "\n8 2 0 0"),
                        str(tmp_path / "broken"))
    assert summary(got["exscan"]["2"]) == {"differs": 2}


@needs_mpich
@pytest.mark.parametrize("probe", [True, False])
def test_mpich_built_in_op_algorithms_are_checked_with_verify_s_own_call(tmp_path, probe):
    # reduce_scatter_gather needs a built-in operation: the order fingerprint's user operation makes MPICH run
    # its own selection instead, so nothing can be told; with the probe the check calls MPI_SUM ("sends")
    reduce = tree_choosing("reduce", [2, 4], [8, 65536], [[("reduce_scatter_gather", 0)] * 2] * 2)
    base = mpich_json.load_base(str(Path(MPICH_PYTHON).parent.parent / "lib" / "libmpi.so"))
    selection = tmp_path / "mpich.json"
    selection.write_text(mpich_json.emit([reduce], base=base))
    checks = check_follows([reduce], str(selection), "mpich", 4, python=MPICH_PYTHON,
                           mpiexec=_mpiexec(MPICH_PYTHON), probe=probe)
    assert {c.method for c in checks} == {"reduce_scatter_gather"}
    statuses = {(c.comm, c.msg): c.status for c in checks}
    assert statuses.pop((2, 8)) == ("follows" if probe else "indistinguishable"), checks
    assert set(statuses.values()) == {"indistinguishable"}, checks


@needs_openmpi
def test_a_nested_call_following_another_collectives_rule_is_not_a_difference(tmp_path):
    # reduce_scatter_block's basic_linear (Open MPI's own choice at 2 ranks x 1 MiB) calls reduce, whose rule in the
    # same file is binary there: loaded with the whole file the nested reduce follows it, while the forced launches
    # (no file) run the default's pipeline. The check loads each collective's rules alone (follow.py _own_rules).
    rules = _rules(tmp_path / "two.rules", "2\n11\n2\n1 1\n0 0 0 0\n2 2\n0 0 0 0\n262144 4 0 0\n"
                                           "13\n2\n1 1\n0 0 0 0\n2 3\n0 0 0 0\n2 3 0 0\n524290 0 0 0\n")
    checks = check_follows(rules.selections(), rules.path, "openmpi", 2,
                           points={"reduce": [(2, 1048576)], "reduce_scatter_block": [(2, 1048576)]})
    by_coll = {c.collective: c for c in checks}
    assert by_coll["reduce"].status == "follows", checks
    assert by_coll["reduce_scatter_block"].method == "default"
    assert by_coll["reduce_scatter_block"].status == "indistinguishable", checks


@needs_openmpi
def test_one_forced_launch_for_many_checks_proves_what_a_launch_per_check_proves(tmp_path, monkeypatch):
    """ForcedLaunches (issue 40): the forced side of every collective's check in one launch; each check then makes
    its file launch only. The statuses, matches and named defaults are those of a forced launch per check, and a
    file the library does not follow is still caught."""
    from quadsel.verify import follow
    bcast = tree_choosing("bcast", [2, 4], [1, 1024, 65536], [[("1", 0), ("6", 0), ("3", 4096)],
                                                             [("3", 0), ("2", 0), ("3", 1024)]])
    reduce = tree_choosing("reduce", [2, 4], [8, 8192], [[("1", 0), ("1", 0)], [("3", 0), ("1", 0)]])
    rules = tmp_path / "rules.conf"
    rules.write_text(ompi_rules.emit([bcast, reduce]))
    launches = []
    real = follow._launch
    monkeypatch.setattr(follow, "_launch", lambda *a, **k: launches.append(a[1]) or real(*a, **k))
    forced = follow.ForcedLaunches()
    forced.prefetch([([bcast], None, False), ([reduce], None, False)], "openmpi", 4)
    assert len(launches) == 1 and [s["collective"] for s in launches[0]["batch"]] == ["bcast", "reduce"]
    batched = check_follows([bcast, reduce], str(rules), "openmpi", 4, identify=True, forced=forced)
    assert len(launches) == 3 and all(s.get("forced") is None for s in launches[1:])   # the file launches only
    alone = check_follows([bcast, reduce], str(rules), "openmpi", 4, identify=True)
    assert len(launches) == 7
    key = lambda c: (c.collective, c.comm, c.msg, c.status, tuple(c.matches), str(c.default_ran))   # noqa: E731
    assert sorted(map(key, batched)) == sorted(map(key, alone))
    assert all(c.status == "follows" for c in batched if c.comm == 4), batched
    wrong = tree_choosing("bcast", [2, 4], [1, 1024, 65536], [[("1", 0)] * 3, [("2", 0)] * 3])
    other = tmp_path / "other.conf"      # a file of another tree, checked against this one's picks
    other.write_text(ompi_rules.emit([wrong, reduce]))
    caught = check_follows([bcast], str(other), "openmpi", 4, identify=True, forced=forced)
    assert any(c.status == "differs" for c in caught), caught


def test_an_algorithm_forced_for_the_whole_job_is_forced_only_where_the_library_can_run_it(monkeypatch):
    """Open MPI 5.0.x allgatherv is forced through the environment, for the whole launch: its two_proc (5) at a
    4-rank point failed the launch and ended the check of every point (the 2 x 2 Slurm run). Each arm's launch
    now holds only the points where fallbacks.fails says the library runs it."""
    from quadsel.verify import follow
    specs = []
    monkeypatch.setattr(follow, "_launch", lambda np_, spec, *a, **k: specs.append(spec) or {
        tuple(p): {"library": 1} for p in spec["points"]})
    spec = {"collective": "allgatherv", "kind": "traffic", "points": [[2, 8, 1, 2], [4, 8, 2, 2], [2, 64, 2, 1]],
            "han": False}
    got = follow._forced_by_env(4, spec, [["default", 0], ["5", 0], ["2", 0]], "openmpi", "python", "mpiexec", 60,
                                "/tmp")
    assert [s["points"] for s in specs] == [spec["points"], [[2, 8, 1, 2], [2, 64, 2, 1]], spec["points"]]
    assert set(got[(4, 8, 2, 2)]) == {"default", "2"} and set(got[(2, 8, 1, 2)]) == {"default", "5", "2"}
