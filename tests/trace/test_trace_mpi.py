"""`quadsel trace` on the real MPI: 2 ranks, a few calls (CI stays short). Skipped without mpi4py/mpiexec."""

import json
import os
import subprocess
import sys

import pytest

from quadsel.trace.trace_file import load_trace

from conftest import REPO
from helpers import mpi_library, mpiexec_beside as _mpiexec, run_launcher

LIBRARY = mpi_library(sys.executable)
MPICH_PYTHON = os.environ.get("QUADSEL_MPICH_PYTHON")
needs_openmpi = pytest.mark.skipif(LIBRARY != "openmpi", reason="Open MPI only")
needs_mpich = pytest.mark.skipif(not MPICH_PYTHON, reason="the MPICH venv: set QUADSEL_MPICH_PYTHON to a Python with MPICH")

pytestmark = pytest.mark.skipif(not _mpiexec(sys.executable) or LIBRARY is None,
                                reason="needs mpiexec and an MPI library mpi4py can load")


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    return env


def quadsel(args, python=sys.executable, timeout=240):
    return subprocess.run([python, "-m", "quadsel", *args], capture_output=True, text=True, timeout=timeout,
                          env=_env())


@needs_openmpi
def test_trace_two_ranks_resume_and_breakdown(tmp_path):
    out = tmp_path / "t.json"
    args = ["trace", "--np", "2", "-c", "bcast", "--algorithms", "6", "--msg-sizes", "1K", "--calls", "6",
            "--batch", "3", "--warmup", "1", "-o", str(out)]
    run = quadsel(args)
    assert run.returncode == 0, run.stderr
    doc = load_trace(str(out))
    assert doc["library"] == "openmpi" and doc["comm_size"] == 2 and doc["clock"]["one_clock"]
    (r,) = doc["runs"]
    assert (r["algorithm"], r["msg_size"], r["calls"]) == ("6", 1024, 6)
    assert all(x >= e for xs, es in zip(r["exit_us"], r["entry_us"]) for x, e in zip(xs, es))
    assert len(r["overhead"]["traced_us_per_iteration"]) == 2
    assert "waits most" in run.stderr and "bcast binomial (bmtree) on openmpi" in run.stderr
    before = out.read_bytes()
    again = quadsel(args + ["--quiet"])                  # resumed: nothing left to trace, nothing rewritten
    assert again.returncode == 0, again.stderr
    assert out.read_bytes() == before
    more = quadsel(args[:6] + ["6,3"] + args[7:] + ["--quiet"])   # a second algorithm is appended
    assert more.returncode == 0, more.stderr
    assert [x["algorithm"] for x in load_trace(str(out))["runs"]] == ["6", "3"]
    table = quadsel(["breakdown", str(out), "--json"])
    assert table.returncode == 0, table.stderr
    data = json.loads(table.stdout)
    assert data["comparisons"] == [["6 @ 1024 B", "3 @ 1024 B"]]
    # another mapping cannot be resumed into the same file
    other = quadsel(args + ["--map-by", "socket", "--quiet"])
    assert other.returncode == 2 and "map_by" in other.stderr and "Traceback" not in other.stderr


@needs_openmpi
def test_trace_argument_errors(tmp_path):
    out = tmp_path / "t.json"
    bad = quadsel(["trace", "--np", "2", "-c", "bcast", "--algorithms", "nosuch", "-o", str(out)])
    assert bad.returncode == 2 and "unknown bcast algorithm" in bad.stderr and not out.exists()
    assert len(bad.stderr.strip().splitlines()) == 1


@needs_mpich
def test_trace_mpich_binomial(tmp_path):
    out = tmp_path / "m.json"
    run = quadsel(["trace", "--np", "2", "-c", "bcast", "--algorithms", "binomial", "--msg-sizes", "1K",
                   "--calls", "4", "--python", MPICH_PYTHON, "-o", str(out), "--quiet"])
    assert run.returncode == 0, run.stderr
    doc = load_trace(str(out))
    assert doc["library"] == "mpich" and doc["runs"][0]["algorithm"] == "binomial"
    assert os.path.getsize(out) > 0


@needs_openmpi
def test_trace_under_the_users_launcher(tmp_path):
    out = tmp_path / "own.json"
    cmd = [_mpiexec(sys.executable), "-n", "2", sys.executable, "-m", "quadsel", "trace", "-c", "reduce",
           "--algorithms", "5", "--msg-sizes", "4K", "--calls", "4", "--batch", "2", "--quiet", "-o", str(out)]
    run = run_launcher(cmd, timeout=240, env=_env())
    assert run.returncode == 0, run.stderr
    doc = load_trace(str(out))
    assert doc["job_size"] == 2 and doc["runs"][0]["algorithm"] == "5" and doc["map_by"] is None


@needs_openmpi
def test_trace_of_default_names_the_algorithm_the_library_ran(tmp_path):
    # issue 31: "which algorithm did the default run?" A rules file makes Open MPI's own selection run the
    # 3 pipeline at every size: the trace of `default` must name it, from the follow check's fingerprints.
    rules = tmp_path / "rules.conf"
    rules.write_text("1\n7\n1\n2\n1\n0 3 0 0\n")
    out = tmp_path / "t.json"
    env = dict(_env(), OMPI_MCA_coll_tuned_use_dynamic_rules="1",
               OMPI_MCA_coll_tuned_dynamic_rules_filename=str(rules))
    run = subprocess.run([sys.executable, "-m", "quadsel", "trace", "--np", "2", "-c", "bcast", "--algorithms",
                          "default", "--msg-sizes", "1K,1M", "--calls", "6", "--batch", "3", "--warmup", "1",
                          "-o", str(out)], capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr
    doc = load_trace(str(out))
    assert doc["algorithms"]["3"] == "pipeline"
    for r in doc["runs"]:
        ran = r["library_ran"]
        assert ran["status"] == "identified", ran
        assert ran["algorithms"] == [{"label": "3", "name": "pipeline"}]
    assert run.stderr.count("the library default ran: 3 pipeline") == 2
    assert "bcast library default, ran 3 pipeline on openmpi" in run.stderr


@needs_openmpi
def test_trace_of_default_without_rules_names_one_of_the_forcible_algorithms(tmp_path):
    out = tmp_path / "t.json"
    run = quadsel(["trace", "--np", "2", "-c", "reduce", "--algorithms", "default", "--msg-sizes", "64K",
                   "--calls", "6", "--batch", "3", "--warmup", "1", "-o", str(out)])
    assert run.returncode == 0, run.stderr
    doc = load_trace(str(out))
    (r,) = doc["runs"]
    ran = r["library_ran"]
    assert ran["status"] in ("identified", "ambiguous"), ran
    assert ran["algorithms"] and all(a["label"] in doc["algorithms"] for a in ran["algorithms"])
    table = quadsel(["breakdown", str(out), "--json"])
    assert json.loads(table.stdout)["configurations"][0]["library_ran"] == ran
