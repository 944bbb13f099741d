"""`quadsel tune` under Intel MPI (the impi-rt venv, QUADSEL_IMPI_PYTHON) at 2 ranks on a tiny grid: measure (one
launch per preset), build, the JSON tuning file and the I_MPI_ADJUST strings, verify with the follow proof, and a
tuned.env that sets I_MPI_TUNING exactly when something is deployed; and the Intel deployment's files (no MPI)."""

import json
import os
import re
import subprocess

import pytest

from conftest import REPO
from helpers import verified_again
from quadsel.tune import deploy

IMPI_PYTHON = os.environ.get("QUADSEL_IMPI_PYTHON")
needs_impi = pytest.mark.skipif(not IMPI_PYTHON, reason="the Intel MPI venv: set QUADSEL_IMPI_PYTHON to a Python with Intel MPI (impi-rt)")
TINY = ["--np", "2", "--msg-sizes", "8,64K", "--rounds", "1", "--max-reps", "10", "--max-time", "0.05",
        "--verify-rounds", "2", "--no-figures"]


def _env():
    return dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))


@needs_impi
def test_tune_under_intel_mpi_deploys_a_tuning_file_the_library_follows(tmp_path):
    out = tmp_path / "deploy"
    done = subprocess.run([IMPI_PYTHON, "-m", "quadsel", "tune", *TINY, "-c", "reduce,allreduce", "-o", str(out)],
                          capture_output=True, text=True, timeout=900, env=_env())
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert re.match(r"^(deploy: \d of 2 collectives tuned, [\d.]+x \[[\d.]+, [\d.]+\]; \d kept at the library "
                    r"default; \. .*tuned\.env|do not deploy: none of 2 collectives .*)$", last), last
    journal = json.loads((out / "tune.json").read_text())
    assert journal["settings"]["library"] == "intelmpi"
    for name in ("verify/first.tuned-impi.json", "measurements/reduce.csv", "trees/allreduce.qt.json"):
        assert (out / name).exists(), name
    for label in verified_again(out, journal):           # the follow proof ran on Intel MPI and found no point it ignored
        proof = json.loads((out / "verify" / f"{label}.json").read_text())["statistics"]["proof"]
        assert proof["ran"] and not proof["differs"] and not proof["failed"], proof
        assert proof["at_changed_points"].get("follows", 0) > 0, proof
    deployed = journal["steps"]["summary"]["deployed"]
    env = subprocess.run(["sh", "-c", f". '{out / 'tuned.env'}' && env"], capture_output=True, text=True,
                         check=True).stdout
    assert (f"I_MPI_TUNING={out / 'tuned-impi.json'}" in env) == bool(deployed)
    assert (out / "tuned-impi.json").exists() == bool(deployed)
    if deployed:   # the deployed file holds exactly the deployed collectives, and verify finds it followed
        assert sorted(k.split("=")[1].lower() for k in json.loads((out / "tuned-impi.json").read_text())) == deployed
        check = subprocess.run([IMPI_PYTHON, "-m", "quadsel", "verify", str(out / "tuned-impi.json"), "--np", "2",
                                "--comm-sizes", "2", "--msg-sizes", "8,64K", "--rounds", "2", "--max-reps", "5",
                                "--json"], capture_output=True, text=True, timeout=600, env=_env())
        assert check.returncode == 0, check.stderr
        assert json.loads(check.stdout)["rules_followed"]["counts"].get("differs", 0) == 0


def _fn(collective, by_comm):
    """A 2-D Intel MPI tree from {comm: {msg: preset}} (each preset fastest where named)."""
    from quadsel.decision.builder import build_size_tree
    from quadsel.decision.decision_map import build_decision_map
    from quadsel.ingest.table import Measurement, Table
    rows = []
    presets = sorted({p for msgs in by_comm.values() for p in msgs.values()} | {"1"})
    for comm, msgs in by_comm.items():
        for msg, best in msgs.items():
            rows += [Measurement(collective, p, 0, comm, msg, 1.0 if p == best else 3.0, source=f"x.csv:{len(rows)}")
                     for p in presets]
    fn = build_size_tree(build_decision_map(Table(rows, (), "intelmpi"), collective))
    fn.provenance["library"] = "intelmpi"
    return fn


def test_the_intel_deployment_writes_the_strings_beside_the_tuning_file_when_they_can_say_it():
    dep = deploy.deployment("intelmpi")
    by_msg = _fn("allreduce", {2: {8: "3", 65536: "8"}, 4: {8: "3", 65536: "8"}})      # message ranges alone
    files = deploy.emit(dep, [by_msg])
    assert set(files) == {"tuned-impi.json", "tuned-impi-adjust.env"}
    assert "export I_MPI_ADJUST_ALLREDUCE=" in files["tuned-impi-adjust.env"]
    both = _fn("allreduce", {2: {8: "3", 65536: "8"}, 4: {8: "8", 65536: "3"}})        # changes with both sizes
    notes = []
    files = deploy.emit(dep, [both], notes=notes)
    assert set(files) == {"tuned-impi.json"}
    assert len(notes) == 1 and notes[0].startswith("tuned-impi-adjust.env not written:") and "-t impi-json" in notes[0]
    assert deploy.environment(dep, "/x", [both]) == {"I_MPI_TUNING": os.path.abspath("/x/tuned-impi.json")}
