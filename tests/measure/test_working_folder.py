"""The ranks quadsel launches do not import from the working folder (issue 31: a file named inspect.py there
made every rank of verify and measure fail at import). Real launches, Open MPI, 2 ranks; skipped without MPI."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import mpi_library, mpiexec_beside

REPO = Path(__file__).resolve().parents[2]
pytest.importorskip("mpi4py")
pytestmark = pytest.mark.skipif(not mpiexec_beside(sys.executable) or mpi_library(sys.executable) != "openmpi",
                                reason="needs Open MPI's mpiexec and mpi4py on Open MPI")

# The command itself is started as the `quadsel` console script is (its folder, not the working one, first
# on sys.path): what is tested is what it launches.
CONSOLE = "import sys; del sys.path[0]; from quadsel.entry import main; main()"
SHADOW = "raise SystemExit('the working folder inspect.py was imported')\n"


def quadsel(folder, *args, timeout=300):
    # no empty entry: "REPO:" would put the working folder on sys.path by itself (Python reads "" as ".")
    path = os.pathsep.join(p for p in [str(REPO)] + os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    env = dict(os.environ, PYTHONPATH=path,
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.run([sys.executable, "-c", CONSOLE, *map(str, args)], cwd=folder, capture_output=True,
                          text=True, timeout=timeout, env=env)


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "inspect.py").write_text(SHADOW)
    (tmp_path / "json.py").write_text(SHADOW.replace("inspect", "json"))
    return tmp_path


def test_measure_build_verify_and_trace_ignore_the_working_folder(folder):
    done = quadsel(folder, "measure", "--np", 2, "-c", "bcast", "--algorithms", "default,1,6", "--msg-sizes",
                   "1K,64K", "--segments", 0, "--rounds", 1, "--max-reps", 5, "--max-time", 0.05, "--quiet", "-o", "m.csv")
    assert done.returncode == 0 and "working folder" not in done.stderr, done.stderr
    assert len([line for line in (folder / "m.csv").read_text().splitlines() if line[:1].isalpha()]) == 7
    built = quadsel(folder, "build", "m.csv", "-o", "t.qt.json")
    assert built.returncode == 0, built.stderr
    verified = quadsel(folder, "verify", "t.qt.json", "--np", 2, "--rounds", 2, "--max-reps", 5, "--max-time", 0.05,
                       "--json", "-o", "v.json")
    assert verified.returncode in (0, 3) and "working folder" not in verified.stderr, verified.stderr
    assert (folder / "v.json").exists()
    traced = quadsel(folder, "trace", "--np", 2, "-c", "bcast", "--algorithms", "6,default", "--msg-sizes", "1K",
                     "--calls", 6, "--batch", 3, "--warmup", 1, "--quiet", "-o", "t.trace.json")
    assert traced.returncode == 0 and "working folder" not in traced.stderr, traced.stderr
    assert (folder / "t.trace.json").exists()
