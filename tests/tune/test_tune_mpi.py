"""`quadsel tune` on the real MPI at 2 ranks, on a tiny grid (CI stays short)."""

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO
from helpers import mpi_library, mpiexec_beside, verified_again

pytestmark = pytest.mark.skipif(not mpiexec_beside(sys.executable) or mpi_library(sys.executable) != "openmpi",
                                reason="needs Open MPI's mpiexec and mpi4py")

TINY = ["--np", "2", "--msg-sizes", "8,64K", "--rounds", "1", "--max-reps", "10", "--max-time", "0.05",
        "--verify-rounds", "2", "--no-figures"]


def _env(**extra):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.update(extra)
    return env


def _tune(args, timeout=600, **env):
    return subprocess.run([sys.executable, "-m", "quadsel", "tune", *args], capture_output=True, text=True,
                          timeout=timeout, env=_env(**env))


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_tune_writes_a_folder_whose_deployed_file_the_library_follows(tmp_path):
    out = tmp_path / "deploy"
    done = _tune([*TINY, "-c", "allreduce,reduce", "-o", str(out)])
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert re.match(r"^(deploy: \d of 2 collectives tuned, [\d.]+x \[[\d.]+, [\d.]+\]; \d kept at the library "
                    r"default; \. .*tuned\.env|do not deploy: none of 2 collectives .*)$", last), last
    for name in ("tuned.env", "report.md", "tune.json", "verify/first.json",
                 "measurements/allreduce.csv", "measurements/reduce.meta.json", "trees/reduce.qt.json"):
        assert (out / name).exists(), name
    journal = json.loads((out / "tune.json").read_text())
    for label in verified_again(out, journal):
        doc = json.loads((out / "verify" / f"{label}.json").read_text())
        assert doc["rules_followed"]["counts"].get("differs", 0) == 0    # the library follows the file
        assert all(p["best"] is None for p in doc["points"])   # no best arm: the decision never reads it
        assert all(p.get("timed") is False for p in doc["points"] if p["verdict"] == "default")   # speed-up 1
    deployed = journal["steps"]["summary"]["deployed"]
    assert deployed == sorted(c for c, p in journal["steps"]["summary"]["per_collective"].items() if p["deploy"])
    report = (out / "report.md").read_text()
    assert "| allreduce |" in report and "| reduce |" in report
    for text_file in ("report.md", "tuned.env"):     # Open MPI's version string ends in a NUL byte
        assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f]", (out / text_file).read_text()), text_file
    env = subprocess.run(["sh", "-c", f". '{out / 'tuned.env'}' && env"], capture_output=True, text=True,
                         check=True).stdout
    assert ("OMPI_MCA_coll_tuned_dynamic_rules_filename=" in env) == bool(deployed)
    if deployed:   # the deployed file holds exactly the deployed collectives, and verify finds it followed
        check = subprocess.run([sys.executable, "-m", "quadsel", "verify", str(out / "tuned.rules"), "--np", "2",
                                "--comm-sizes", "2", "--msg-sizes", "8,64K", "--rounds", "2", "--max-reps", "5",
                                "--json"], capture_output=True, text=True, timeout=300, env=_env())
        assert check.returncode == 0, check.stderr
        doc = json.loads(check.stdout)
        assert sorted(doc["summary"]) == deployed
        assert doc["rules_followed"]["counts"].get("differs", 0) == 0


def test_kill_9_then_the_same_command_continues_without_measuring_again(tmp_path):
    out = tmp_path / "deploy"
    args = [*TINY, "-c", "allreduce,barrier", "-o", str(out)]
    # SIGINT ignored, as a non-interactive shell's `&` starts it: nothing of tune's may depend on SIGINT to end
    proc = subprocess.Popen([sys.executable, "-m", "quadsel", "tune", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=_env(QUADSEL_MEASURE_POINT_DELAY="0.5"),
                            start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    journal = out / "tune.json"
    deadline = time.monotonic() + 300
    second = out / "measurements" / "barrier.csv"
    while time.monotonic() < deadline:    # the first collective measured: kill -9 once the second has rows
        if journal.exists() and "measure:allreduce" in journal.read_text() and second.exists() and \
                len([l for l in second.read_text().splitlines()[1:] if l and not l.startswith("#")]) >= 1:
            break
        time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("the second collective was not measuring in time")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert _children_gone(proc.pid), "a process tune started outlived it"   # issue 41: mpiexec and its ranks too
    first = _sha(out / "measurements" / "allreduce.csv")
    again = _tune(args)
    assert again.returncode == 0, again.stderr
    assert "continuing the run" in again.stderr
    assert "[1/2 allreduce] measuring" not in again.stderr          # finished: not measured again
    assert _sha(out / "measurements" / "allreduce.csv") == first
    steps = json.loads(journal.read_text())["steps"]
    assert steps["measure:barrier"]["complete"] and "summary" in steps


def test_tune_refuses_bad_options_in_one_line(tmp_path):
    for args, message in ((["-c", "nosuch"], "unknown collective"), (["--budget", "50%"], "a time"),
                          (["--comm-sizes", "3"], "between 2 and --np 2")):
        done = _tune(["--np", "2", "-o", str(tmp_path / "x"), *args], timeout=60)
        assert done.returncode == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "x").exists()


def test_a_second_tune_on_a_folder_another_tune_holds_is_refused_in_one_line(tmp_path):
    import fcntl
    out = tmp_path / "deploy"
    out.mkdir()
    with open(out / ".tune.lock", "a") as held:     # what a running tune holds for its whole life (folder.py)
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        done = _tune([*TINY, "-c", "barrier", "-o", str(out)], timeout=60)
    assert done.returncode == 2 and "being tuned by another quadsel tune" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (out / "measurements").exists()


def _children_gone(pid, wait=30):
    """Are the processes launched for tune `pid` (their QUADSEL_LAUNCHER_PID names it) gone within `wait` s?"""
    mark = f"QUADSEL_LAUNCHER_PID={pid}@".encode()
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        left = []
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/environ", "rb") as handle:
                    if mark in handle.read():
                        left.append(entry)
            except (OSError, ValueError):
                continue
        if not left:
            return True
        time.sleep(0.5)
    return False
