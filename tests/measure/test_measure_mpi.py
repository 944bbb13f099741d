"""Real measurements with the installed MPI (2 ranks, tiny grids: seconds each).

Skipped when mpi4py or mpiexec is missing. MPICH tests need a Python whose mpi4py loads MPICH:
QUADSEL_MPICH_PYTHON=/path/to/venv/bin/python (see docs/measure.md).
"""

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from quadsel.ingest.table import GENERIC_COLUMNS

from helpers import run_launcher

REPO = Path(__file__).resolve().parents[2]
pytest.importorskip("mpi4py")


def _mpiexec(python):
    beside = Path(python).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


def _library(python):
    code = ("import mpi4py; mpi4py.rc.initialize = False; from mpi4py import MPI; "
            "print(MPI.Get_library_version())")
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, env=_env()).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return "openmpi" if "Open MPI" in out else "mpich" if "MPICH" in out else None


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}, **extra)
    return env


LIBRARY = _library(sys.executable)
MPICH_PYTHON = os.environ.get("QUADSEL_MPICH_PYTHON")
pytestmark = pytest.mark.skipif(not _mpiexec(sys.executable) or LIBRARY is None,
                                reason="needs mpiexec and an MPI library mpi4py can load")
needs_openmpi = pytest.mark.skipif(LIBRARY != "openmpi", reason="Open MPI only")
needs_mpich = pytest.mark.skipif(not MPICH_PYTHON, reason="the MPICH venv: set QUADSEL_MPICH_PYTHON to a Python with MPICH")


def measure(args, python=sys.executable, timeout=240, **env):
    return subprocess.run([python, "-m", "quadsel", "measure", *args], capture_output=True, text=True,
                          timeout=timeout, env=_env(**env))


def rows(path):
    with open(path, newline="") as handle:
        reader = csv.reader(handle)
        assert tuple(next(reader)) == GENERIC_COLUMNS
        return list(reader)


def keys(path):
    return [tuple(r[:5]) for r in rows(path)]


TINY = ["--np", "2", "-c", "bcast", "--algorithms", "default,1,6", "--segments", "0,8K", "--msg-sizes", "1,1K",
        "--max-reps", "20", "--quiet"]


@needs_openmpi
def test_tiny_real_run_rows_metadata_and_rerun(tmp_path):
    out = tmp_path / "bcast.csv"
    done = measure(TINY + ["-o", str(out)])
    assert done.returncode == 0, done.stderr
    expected = {("bcast", alg, str(seg), "2", str(msg))
                for alg, seg in [("default", 0), ("1", 0), ("6", 0), ("6", 8192)] for msg in (1, 1024)}
    assert sorted(keys(out)) == sorted(expected)         # basic_linear and default only at segsize 0
    for row in rows(out):
        assert float(row[5]) > 0 and float(row[6]) >= 0 and 5 <= int(row[7]) <= 20
    meta = json.loads((tmp_path / "bcast.meta.json").read_text())
    assert meta["library"] == "openmpi" and meta["forcing"] == "mpit" and meta["complete"] is True
    assert meta["job_size"] == 2 and sum(meta["ranks_per_node"].values()) == 2 and meta["hostnames"]
    assert "--np 2" in meta["command"] and meta["grid"]["comm_sizes"] == [2]
    assert meta["grid"]["algorithms"]["6"] == "binomial"
    # --timing auto: both ranks are on this one machine, so the span on its shared clock is used
    method = meta["methodology"]
    assert method["timing_requested"] == "auto" and method["timing"] == "span", method
    assert method["timer"] == "CLOCK_MONOTONIC" and "one host" in method["timing_reason"]
    assert method["wtime_is_global"] in (True, False)
    assert not (tmp_path / "bcast.csv.rounds.jsonl").exists()
    # a rerun of the same command finds every point done and writes nothing
    before = out.read_bytes()
    again = measure(TINY + ["-o", str(out)])
    assert again.returncode == 0, again.stderr
    assert out.read_bytes() == before
    assert len(json.loads((tmp_path / "bcast.meta.json").read_text())["runs"]) == 2
    # resuming with the other timing would mix two definitions of time in one file: refused
    mixed = measure(TINY + ["--timing", "local", "-o", str(out)])
    assert mixed.returncode == 2 and "timed with --timing span" in mixed.stderr, mixed.stderr
    assert out.read_bytes() == before


@needs_openmpi
def test_build_reads_the_csv_without_flags(tmp_path):
    out = tmp_path / "reduce.csv"
    done = measure(["--np", "2", "-c", "reduce", "--algorithms", "default,1,5", "--segments", "0",
                    "--msg-sizes", "4,4K", "--rounds", "1", "--max-reps", "10", "--quiet", "-o", str(out)])
    assert done.returncode == 0, done.stderr
    from quadsel.ingest import read_measurements
    table = read_measurements([str(out)])
    assert {(m.algorithm, m.comm_size, m.msg_size) for m in table} == {
        (a, 2, s) for a in ("default", "1", "5") for s in (4, 4096)}


def _session_pids(sid):
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[3]) == sid:
                pids.append(int(entry))
    return pids


def _kill_session(sid):
    """kill -9 the launcher and every rank (the ranks have process groups of their own)."""
    for _ in range(50):
        pids = _session_pids(sid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)


@needs_openmpi
def test_kill_9_then_rerun_has_every_point_exactly_once(tmp_path):
    out = tmp_path / "k.csv"
    args = ["--np", "2", "-c", "bcast", "--algorithms", "default,1,2,6", "--segments", "0",
            "--msg-sizes", "1-1M:pow2", "--rounds", "2", "--max-reps", "40", "--quiet", "-o", str(out)]
    # a 0.1 s pause after each point makes a round last ~2 s, so the kill lands inside round 2
    proc = subprocess.Popen([sys.executable, "-m", "quadsel", "measure", *args], start_new_session=True,
                            env=_env(QUADSEL_MEASURE_POINT_DELAY="0.1"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = tmp_path / "k.csv.rounds.jsonl"
    deadline = time.time() + 120
    # kill in round 2, once some rows are written: the journal holds round 1, the CSV part of round 2
    while time.time() < deadline and proc.poll() is None:
        if out.exists() and len(out.read_text().splitlines()) > 3:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the run ended before it could be killed"
    _kill_session(proc.pid)
    proc.wait()
    partial = keys(out)
    assert journal.exists(), f"killed too late: {len(partial)} rows"
    assert 3 <= len(partial) < 4 * 21
    done = measure(args)
    assert done.returncode == 0, done.stderr
    final = keys(out)
    assert len(final) == len(set(final)) == 4 * 21            # every point exactly once
    assert final[:len(partial)] == partial                     # finished rows were kept, not redone
    assert not journal.exists()
    runs = json.loads((tmp_path / "k.meta.json").read_text())["runs"]
    assert [r["complete"] for r in runs] == [False, True]


@needs_openmpi
def test_forcing_changes_the_reduction_tree_open_mpi():
    """Direct proof (docs/measure.md): the combination order of a reduce differs per forced algorithm."""
    cmd = [_mpiexec(sys.executable), "--oversubscribe", "-n", "4", sys.executable, "-m",
           "quadsel.measure.selfcheck", "reduce", "1", "2", "5", "6"]
    done = run_launcher(cmd, timeout=120, env=_env())
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(set(result["forced"].values())) == 4        # linear, chain, binomial, in-order binary differ
    assert len(set(result["unforced"].values())) == 1      # control: forcing switched off -> one order


@needs_mpich
def test_forcing_changes_the_reduction_tree_mpich():
    cmd = [_mpiexec(MPICH_PYTHON), "-n", "4", MPICH_PYTHON, "-m", "quadsel.measure.selfcheck", "allreduce",
           "recursive_doubling", "recursive_multiplying", "ring"]
    done = run_launcher(cmd, timeout=120, env=_env())
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["library"] == "mpich"
    assert len(set(result["forced"].values())) == 3
    assert len(set(result["unforced"].values())) == 1


@needs_mpich
def test_tiny_real_run_mpich(tmp_path):
    out = tmp_path / "m.csv"
    done = measure(["--np", "2", "-c", "bcast", "--algorithms", "default,binomial,scatter_ring_allgather",
                    "--msg-sizes", "1,64K", "--max-reps", "20", "--quiet", "-o", str(out)], python=MPICH_PYTHON)
    assert done.returncode == 0, done.stderr
    assert sorted(keys(out)) == sorted(("bcast", a, "0", "2", m) for a in ("default", "binomial",
                                       "scatter_ring_allgather") for m in ("1", "65536"))
    meta = json.loads((tmp_path / "m.meta.json").read_text())
    assert meta["library"] == "mpich" and meta["forcing"] == "mpit"
    assert meta["methodology"]["timing"] == "span" and meta["methodology"]["timing_requested"] == "auto"


@needs_openmpi
def test_environment_fallback_without_mpi_t(tmp_path):
    out = tmp_path / "env.csv"
    done = measure(["--np", "2", "-c", "reduce", "--algorithms", "default,1,5", "--segments", "0",
                    "--msg-sizes", "1K", "--rounds", "1", "--max-reps", "10", "-o", str(out)],
                   QUADSEL_MEASURE_NO_MPIT="1")
    assert done.returncode == 0, done.stderr
    assert "one launch per method" in done.stderr
    assert sorted(keys(out)) == sorted(("reduce", a, "0", "2", "1024") for a in ("default", "1", "5"))
    assert json.loads((tmp_path / "env.meta.json").read_text())["forcing"] == "env"


@needs_openmpi
def test_allgatherv_falls_back_in_one_line_without_a_failed_launch(tmp_path):
    # issue 31: Open MPI 5.0.x cannot force allgatherv through MPI_T; the first launch found out and printed
    # Open MPI's 7-line "prterun detected ... Exit code: 3" block before the fallback, read as a crash
    out = tmp_path / "agv.csv"
    done = measure(["--np", "2", "-c", "allgatherv", "--algorithms", "1,2", "--msg-sizes", "1K", "--rounds", "1",
                    "--max-reps", "10", "--quiet", "-o", str(out)])
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == ["quadsel measure: Open MPI forces allgatherv through the environment only (read at start-up): "
                     "one launch per method (2 launches)"], done.stderr
    assert sorted(keys(out)) == sorted(("allgatherv", a, "0", "2", "1024") for a in ("1", "2"))


@needs_openmpi
def test_an_algorithm_forced_for_the_whole_job_that_refuses_its_size_leaves_quadsels_own_exchanges_alone(tmp_path):
    # issue 40: allgatherv's two_proc (5) forced through the environment for a job of 4 ranks made quadsel's own
    # world.allgather (MPI_Allgatherv) fail before anything was timed; its exchanges are point to point now
    out = tmp_path / "agv.csv"
    done = measure(["--np", "4", "-c", "allgatherv", "--algorithms", "default,5", "--comm-sizes", "2,4",
                    "--msg-sizes", "8", "--rounds", "1", "--max-reps", "5", "--quiet", "-o", str(out)], timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found = set(keys(out))
    assert ("allgatherv", "5", "0", "2", "8") in found and ("allgatherv", "default", "0", "4", "8") in found


@pytest.mark.parametrize("args,message", [
    (["-c", "bcast", "--algorithms", "1,warp_drive"], "unknown bcast algorithm 'warp_drive'"),
    (["-c", "bcast", "--comm-sizes", "2-4"], "communicator size 4 is larger than the job (2 ranks)"),
    (["-c", "reduce", "--msg-sizes", "0,4"], "message size 0: reduce needs data"),
    (["-c", "reduce", "--msg-sizes", "6", "--datatype", "float"], "not a multiple of the float size"),
    (["-c", "bcast", "--msg-sizes", "1-1M"], "did you mean 1-1M:pow2"),
])
def test_bad_arguments_fail_before_anything_runs(tmp_path, args, message):
    out = tmp_path / "x.csv"
    done = measure(["--np", "2", "-o", str(out)] + args, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]
    assert not out.exists()


@needs_openmpi
def test_under_the_users_launcher_with_idle_ranks(tmp_path):
    """`mpiexec -n 3 ... --comm-sizes 2`: rank 2 idles while ranks 0-1 measure."""
    out = tmp_path / "u.csv"
    cmd = [_mpiexec(sys.executable), "--oversubscribe", "-n", "3", sys.executable, "-m", "quadsel", "measure",
           "-c", "allreduce", "--algorithms", "default,4", "--comm-sizes", "2,3", "--msg-sizes", "1K",
           "--rounds", "1", "--max-reps", "10", "--timing", "span", "--quiet", "-o", str(out)]
    done = run_launcher(cmd, timeout=120, env=_env())
    assert done.returncode == 0, done.stderr
    assert sorted(keys(out)) == sorted(("allreduce", a, "0", n, "1024") for a in ("default", "4") for n in "23")
    meta = json.loads((tmp_path / "u.meta.json").read_text())
    assert meta["job_size"] == 3 and meta["command"].startswith("python -m quadsel measure")
    assert meta["methodology"]["timing"] == "span"


@needs_openmpi
def test_hang_watchdog_aborts_the_job(tmp_path):
    """A point that makes no progress (simulated by a 20 s pause) ends the job with a message."""
    out = tmp_path / "h.csv"
    done = measure(["--np", "2", "-c", "bcast", "--algorithms", "default", "--msg-sizes", "1,2", "--rounds", "1",
                    "--hang-timeout", "2", "--quiet", "-o", str(out)], timeout=60,
                   QUADSEL_MEASURE_POINT_DELAY="20")
    assert done.returncode != 0
    assert "no timed call finished for" in done.stderr and "message size 1" in done.stderr


ADAPTIVE = ["--np", "2", "-c", "bcast", "--algorithms", "default,1,3,6", "--segments", "0,1K", "--msg-sizes",
            "1-1M:pow2", "--max-reps", "30", "--adaptive", "--quiet"]


@needs_openmpi
def test_adaptive_real_run_kill_9_and_rerun(tmp_path):
    """--adaptive on the real MPI: rows + `# skipped` lines + metadata; killed and rerun, it completes
    with every measured pair once and the killed run's rows kept; a further rerun writes nothing."""
    out = tmp_path / "a.csv"
    proc = subprocess.Popen([sys.executable, "-m", "quadsel", "measure", *ADAPTIVE, "-o", str(out)],
                            start_new_session=True, env=_env(QUADSEL_MEASURE_POINT_DELAY="0.1"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if out.exists() and len(keys(out)) > 8:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the run ended before it could be killed"
    _kill_session(proc.pid)
    proc.wait()
    partial = [k for k in keys(out) if not k[0].startswith("#")]
    done = measure(ADAPTIVE + ["-o", str(out)])
    assert done.returncode == 0, done.stderr
    lines = out.read_text().splitlines()
    final = [tuple(line.split(",")[:5]) for line in lines[1:] if not line.startswith("#")]
    assert len(final) == len(set(final)) and final[:len(partial)] == partial
    skipped = [line for line in lines if line.startswith("# skipped ")]
    assert skipped and not any(line.startswith("# skipped bcast,default,0,*,* ") for line in skipped)
    assert {k[1] for k in final} <= {"1", "3", "6", "default"}         # the default is a candidate too
    for m in {k[4] for k in final}:                                    # never alone at a point
        assert any(k[4] == m and k[1] != "default" for k in final), m
    assert {k[4] for k in final} == {str(2 ** i) for i in range(21)}   # every point has a method
    meta = json.loads((tmp_path / "a.meta.json").read_text())
    assert meta["complete"] and [r["complete"] for r in meta["runs"]] == [False, True]
    assert meta["methodology"]["adaptive"] is True
    summary = meta["adaptive"]
    assert summary["finished"] and summary["full_sweep_time_is"] == "estimated"
    assert summary["pairs_measured"] == len(final) and summary["pairs_measured"] + summary["pairs_skipped"] == 6 * 21
    assert 0 < summary["share_of_full_sweep"] < 1
    before = out.read_bytes()
    again = measure(ADAPTIVE + ["-o", str(out)])
    assert again.returncode == 0 and out.read_bytes() == before       # everything is answered from the CSV
    from quadsel.ingest import read_measurements
    assert {m.algorithm for m in read_measurements([str(out)]) if not m.is_default} <= {"1", "3", "6"}


@needs_openmpi
def test_sample_model_real_run(tmp_path):
    """--sample model on the real MPI (a time budget): every method at each point, cheapest first, metadata."""
    out = tmp_path / "s.csv"
    done = measure(["--np", "2", "-c", "bcast", "--algorithms", "1,6", "--segments", "0", "--msg-sizes", "1,4K",
                    "--max-reps", "10", "--sample", "model", "--budget", "10m", "--quiet", "-o", str(out)])
    assert done.returncode == 0, done.stderr
    assert sorted(keys(out)) == sorted(("bcast", a, "0", "2", m) for a in ("1", "6") for m in ("1", "4096"))
    meta = json.loads((tmp_path / "s.meta.json").read_text())
    assert meta["complete"] and meta["methodology"]["sample"] == "model"
    assert meta["sample"]["points_measured"] == 2 and not meta["sample"]["budget_spent"]


@pytest.mark.parametrize("args, words", [("stray", "Executable: stray"), ("--bogus-opt", "--bogus-opt")])
def test_a_launcher_that_fails_before_any_rank_is_said_in_one_line(tmp_path, args, words):
    """Issue 41: a stray word in --mpiexec-args printed prterun's 12-line notice and exited 66."""
    done = measure(["--np", "2", "-c", "bcast", "--msg-sizes", "8", "--mpiexec-args", args, "-o",
                    str(tmp_path / "b.csv")])
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("Error: measuring bcast failed: mpiexec")
    assert words in lines[0] and "-----" not in done.stderr
