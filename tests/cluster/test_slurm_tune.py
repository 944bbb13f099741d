"""quadsel under a real Slurm (issue 40): inside `salloc -N2 --ntasks-per-node=2` tune needs neither --np nor launcher
options and tunes both nodes (every layout of the allocation measured and verified, the follow check as the
allocation's job steps); measure launched directly by `srun --mpi=pmix`; the batch job `tune --sbatch` writes,
cancelled while it measures and submitted again, continues without measuring a finished point again.

The two namespace nodes share this machine's 2 cores: 4 ranks are oversubscribed, so no speed-up is asserted, only
what the run must show whatever the timing."""

import csv
import json
import time

import pytest

from helpers import verified_again
from netns_helpers import job_env, python_of
from quadsel.testbed.slurm import SlurmCluster, unavailable

REASON = unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"a Slurm cluster: {REASON}" if REASON else "a Slurm cluster")
ROOT_OK = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
TUNE = ["-c", "bcast", "--msg-sizes", "8,64K", "--max-time", "0.05", "--max-reps", "10", "--verify-rounds", "2",
        "--no-figures"]
LAYOUTS = {(1, 2), (2, 1), (2, 2)}


@pytest.fixture(scope="module")
def slurm():
    with SlurmCluster(2) as cluster:
        yield cluster


def _rows(path):
    """Data rows; a last line torn by a kill (no newline yet) is not one."""
    with open(path, newline="") as handle:
        lines = handle.read().splitlines(keepends=True)
    return list(csv.DictReader(line for line in lines if line.endswith("\n") and not line.startswith("#")))


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_tune_inside_salloc_tunes_both_nodes_with_no_launcher_option(slurm, flavor, tmp_path):
    python = python_of(flavor)
    out = tmp_path / "deploy"
    done = slurm.run(["salloc", "-N2", "--ntasks-per-node=2", python, "-m", "quadsel", "tune", "-o", str(out), *TUNE],
                     env=job_env(ROOT_OK), timeout=600)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert "--np" not in done.stderr
    rows = _rows(out / "measurements" / "bcast.csv")
    assert {(int(r["nodes"]), int(r["ppn"])) for r in rows} == LAYOUTS      # every layout of the allocation
    summary = json.load(open(out / "tune.json"))["steps"]["summary"]
    assert summary["allocation"].startswith("Slurm job ") and "2 nodes (node1, node2), 2 tasks each" in \
        summary["allocation"]
    verdict = summary["per_collective"]["bcast"]
    assert "unproven" not in verdict["why"], verdict            # the follow check ran as the allocation's steps
    for label in verified_again(out):
        doc = json.load(open(out / "verify" / f"{label}.json"))
        assert {(r["nodes"], r["ppn"]) for r in doc["points"]} == LAYOUTS, label
        proof = doc["statistics"]["proof"]
        assert proof["ran"] and not proof["failed"] and not proof["differs"], (label, proof)
    report = open(out / "report.md").read()
    assert "Tuned in the allocation of Slurm job" in report and "the 2 nodes of Slurm job" in report
    journal = json.load(open(out / "tune.json"))
    assert journal["settings"]["mpiexec_args"] == "Slurm allocation 2x2"


def test_np_that_contradicts_the_allocation_is_refused(slurm, tmp_path):
    done = slurm.run(["salloc", "-N2", "--ntasks-per-node=2", python_of("openmpi"), "-m", "quadsel", "tune", "--np",
                      "2", "-o", str(tmp_path / "x"), *TUNE], env=job_env(ROOT_OK), timeout=120)
    errors = [line for line in done.stderr.splitlines() if not line.startswith("salloc:")]
    assert done.returncode == 2 and len(errors) == 1, done.stderr
    assert "--np 2 contradicts the allocation (Slurm job" in errors[0] and "4 tasks" in errors[0]
    assert not (tmp_path / "x").exists()


def test_measure_launched_by_srun_measures_the_jobs_layouts(slurm, tmp_path):
    out = tmp_path / "b.csv"
    done = slurm.run(["srun", "-N2", "--ntasks-per-node=2", "--mpi=pmix", python_of("openmpi"), "-m", "quadsel",
                      "measure", "-c", "bcast", "--msg-sizes", "8", "--max-time", "0.05", "--max-reps", "5",
                      "-o", str(out)], env=job_env(ROOT_OK), timeout=300)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert {(int(r["nodes"]), int(r["ppn"])) for r in _rows(out)} == LAYOUTS


def test_the_sbatch_job_cancelled_and_submitted_again_continues_without_measuring_again(slurm, tmp_path,
                                                                                           monkeypatch):
    python = python_of("openmpi")
    for name, value in job_env(ROOT_OK).items():      # sbatch passes the submitter's environment to the job
        monkeypatch.setenv(name, value)
    out = tmp_path / "deploy"
    made = slurm.run([python, "-m", "quadsel", "tune", "--sbatch", str(tmp_path / "tune.sh"), "--nodes", "2",
                      "--ntasks-per-node", "2", "--time", "10", "-o", str(out), *TUNE], timeout=60)
    assert made.returncode == 0, made.stderr
    script = (tmp_path / "tune.sh").read_text()
    csv_path = out / "measurements" / "bcast.csv"

    monkeypatch.setenv("QUADSEL_MEASURE_POINT_DELAY", "0.4")      # slow enough to be cancelled mid-measurement
    first = slurm.sbatch(script)
    deadline = time.monotonic() + 240
    while not (csv_path.exists() and len(_rows(csv_path)) >= 3):
        assert time.monotonic() < deadline, slurm.output(first).read_text()[-3000:]
        assert slurm.job(first).get("JobState") in ("PENDING", "RUNNING"), slurm.output(first).read_text()[-3000:]
        time.sleep(0.2)
    slurm.scancel(first)
    assert slurm.wait(first, timeout=120)["JobState"] == "CANCELLED"
    kept = _rows(csv_path)
    assert not (out / "tuned.env").exists()

    monkeypatch.delenv("QUADSEL_MEASURE_POINT_DELAY")
    again = slurm.sbatch(script)
    info = slurm.wait(again, timeout=600)
    text = slurm.output(again).read_text()
    assert (info["JobState"], info["ExitCode"]) == ("COMPLETED", "0:0"), text[-4000:]
    assert "continuing the run" in text, text[-3000:]
    after = _rows(csv_path)
    assert after[:len(kept)] == kept                                  # the finished rows kept as they were
    keys = [(r["algorithm"], r["segsize"], r["nodes"], r["ppn"], r["msg_size"]) for r in after]
    assert len(keys) == len(set(keys))                                 # no point measured twice
    assert {(int(r["nodes"]), int(r["ppn"])) for r in after} == LAYOUTS
    assert text.strip().splitlines()[-1].startswith(("deploy:", "do not deploy:"))
    assert (out / "tuned.env").exists()
