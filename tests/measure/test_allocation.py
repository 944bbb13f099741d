"""The Slurm allocation a command runs in (quadsel.measure.allocation): read from Slurm's variables, the ranks and
host options it gives, and a --np that contradicts it refused. The real allocations: tests/cluster/test_slurm_tune.py."""

import shlex

import pytest
from hypothesis import given, strategies as st

from quadsel.errors import QuadselError
from quadsel.libraries import get
from quadsel.measure import allocation
from quadsel.measure.allocation import Allocation, current, expand, launcher, outside_note, resolve, tasks_per_node


def _env(tasks="2(x2)", nodes="node[1-2]", **more):
    return {"SLURM_JOB_ID": "42", "SLURM_TASKS_PER_NODE": tasks, "SLURM_JOB_NODELIST": nodes, **more}


@pytest.fixture(autouse=True)
def no_scontrol(monkeypatch):
    """The node list expanded here, not by a scontrol of this machine (none, or another cluster's)."""
    monkeypatch.setattr(allocation.shutil, "which", lambda name: None)


@pytest.mark.parametrize("text, counts", [("2", [2]), ("2(x2)", [2, 2]), ("2(x2),1", [2, 2, 1]),
                                          ("4,3(x3)", [4, 3, 3, 3])])
def test_tasks_per_node_reads_slurms_compressed_form(text, counts):
    assert tasks_per_node(text) == counts


@pytest.mark.parametrize("text", ["", "2x2", "2(x)", "a", "2(x2", "-1"])
def test_tasks_per_node_refuses_anything_else_in_one_line(text):
    with pytest.raises(QuadselError, match="SLURM_TASKS_PER_NODE"):
        tasks_per_node(text)


@pytest.mark.parametrize("text, names", [("node1", ["node1"]), ("node[1-3]", ["node1", "node2", "node3"]),
                                         ("n[01-02,7],gpu5", ["n01", "n02", "n7", "gpu5"]),
                                         ("a,b", ["a", "b"])])
def test_expand_is_slurms_host_list(text, names):
    assert expand(text) == names


@given(st.lists(st.integers(1, 64), min_size=1, max_size=12))
def test_tasks_per_node_inverts_slurms_compression(counts):
    runs = []
    for count in counts:
        if runs and runs[-1][0] == count:
            runs[-1][1] += 1
        else:
            runs.append([count, 1])
    text = ",".join(f"{c}(x{n})" if n > 1 else str(c) for c, n in runs)
    assert tasks_per_node(text) == counts


def test_current_is_none_outside_and_inside_a_job_step():
    assert current({}) is None
    assert current(_env(SLURM_STEP_ID="0")) is None      # srun's step: the user's launcher, as under mpiexec


def test_current_reads_the_allocation():
    found = current(_env("2(x2),1", "node[1-3]"))
    assert found == Allocation("42", ("node1", "node2", "node3"), (2, 2, 1))
    assert (found.nodes, found.ntasks, found.ppn, found.shape) == (3, 5, 1, "3:2,2,1")
    assert current(_env()).shape == "2x2"
    assert current(_env()).describe() == "Slurm job 42: 2 nodes (node1, node2), 2 tasks each"


def test_a_node_list_that_disagrees_with_the_task_counts_is_refused():
    with pytest.raises(QuadselError, match="3 nodes in SLURM_JOB_NODELIST but 2"):
        current(_env("2(x2)", "node[1-3]"))


def test_np_defaults_to_the_allocations_tasks_and_a_contradiction_is_refused():
    assert resolve(None, env={}) == (None, None)
    assert resolve(None, env=_env())[0] == 4
    assert resolve(4, env=_env())[0] == 4
    for np_ in (2, 8):
        with pytest.raises(QuadselError, match=f"--np {np_} contradicts the allocation .*4 tasks"):
            resolve(np_, env=_env())
    assert resolve(2, env=_env("4", "node1"))[0] == 2       # fewer ranks on one node: a part of it
    with pytest.raises(QuadselError, match="contradicts"):
        resolve(5, env=_env("4", "node1"))


@pytest.mark.parametrize("flavor, expected", [("openmpi", ["--host", "node1:2,node2:2"]),
                                              ("mpich", ["-hosts", "node1:2,node2:2"])])
def test_the_launcher_gets_the_allocations_hosts(monkeypatch, flavor, expected):
    monkeypatch.setattr("quadsel.measure.launch.find_mpiexec", lambda given: "/x/mpiexec")
    monkeypatch.setattr("quadsel.measure.launch.mpiexec_flavor", lambda path: flavor)
    np_, args, found = launcher(None, None, env=_env())
    assert (np_, shlex.split(args), found.shape) == (4, expected, "2x2")
    assert get(flavor).allocation_args(found) == expected
    assert launcher(None, "--host a:2", env=_env())[1] == "--host a:2"       # the user's options win
    assert launcher(None, None, env=_env("2", "node1"))[1] is None          # one node: nothing to place
    assert launcher(3, None, env=dict(_env(), OMPI_COMM_WORLD_SIZE="4")) == (3, None, None)   # in an MPI job


def test_an_unknown_launcher_in_an_allocation_is_refused(monkeypatch):
    monkeypatch.setattr("quadsel.measure.launch.find_mpiexec", lambda given: "/x/mpiexec")
    monkeypatch.setattr("quadsel.measure.launch.mpiexec_flavor", lambda path: "unknown")
    with pytest.raises(QuadselError, match="give them with --mpiexec-args"):
        launcher(None, None, env=_env())


def test_outside_an_allocation_tune_says_slurm_is_unused(monkeypatch):
    monkeypatch.setattr(allocation, "slurm_seen", lambda timeout=5: 2)
    monkeypatch.setattr(allocation.os, "cpu_count", lambda: 2)
    note = outside_note(4, env={})
    assert note.startswith("note: Slurm is here (sinfo: 2 nodes)") and "\n" not in note and "salloc" in note
    assert outside_note(2, env={}) is None                      # as many ranks as cores: nothing to say
    assert outside_note(4, env={"SLURM_JOB_ID": "1"}) is None   # inside one
    monkeypatch.setattr(allocation, "slurm_seen", lambda timeout=5: None)
    assert outside_note(4, env={}) is None                      # no Slurm here
