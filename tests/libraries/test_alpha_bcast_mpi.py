"""The α-tree broadcast on the real MPI (3 and 4 ranks, seconds): every rank ends with the root's bytes, sends
exactly what the MPI-free tree says (flat at α = 0, binomial at α = 0.5), the levels come from
MPI_Comm_split_type, and `measure --alpha --sync ring` writes rows that build and codegen turn into C."""

import json
import os
import subprocess
import sys

import pytest

from helpers import REPO, mpi_library, mpiexec_beside, run_launcher

pytest.importorskip("mpi4py")
LIBRARY = mpi_library(sys.executable)
pytestmark = pytest.mark.skipif(not mpiexec_beside(sys.executable) or LIBRARY is None,
                                reason="needs mpiexec and an MPI library mpi4py can load")

CHECK = r'''
import json, sys
import numpy as np
from mpi4py import MPI
from quadsel.libraries import alphatree
from quadsel.libraries.alpha_bcast import AlphaBcast, level_keys, ring_semi_barrier

class Counting:
    """The communicator, counting the sends this rank posts."""
    def __init__(self, comm):
        self.comm, self.sends = comm, 0
    def Isend(self, *args, **kwargs):
        self.sends += 1
        return self.comm.Isend(*args, **kwargs)
    def __getattr__(self, name):
        return getattr(self.comm, name)

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
report = {}
for label, levels in [("alpha-0.00", "auto"), ("alpha-0.50", "auto"), ("alpha-0.25", "auto"),
                      ("alpha-0.00-0.50", (2,)), ("alpha-0.50-0.00", "auto")]:
    depth = len(alphatree.parse(label)) - 1
    keys, described = level_keys(MPI, world, levels, depth)
    for root in range(size):
        comm = world.Dup()
        bcast = AlphaBcast(MPI, comm, label, keys, root=root)
        counting = Counting(comm)
        for count in (0, 1, 5000):
            data = (np.arange(count) * 7 + root + 1).astype(np.uint8) if rank == root else np.zeros(count, np.uint8)
            bcast(counting, [data, count, MPI.BYTE])
            ok = bool(np.array_equal(data, (np.arange(count) * 7 + root + 1).astype(np.uint8)))
            assert world.allreduce(ok, op=MPI.LAND), (label, root, count)
        sends = world.gather(counting.sends // 3, root=0)
        if rank == 0:
            report[f"{label}@{root}"] = {"sends": sends, "expected": alphatree.schedule(size, root,
                                         alphatree.parse(label), keys).sends(), "levels": described}
        comm.Free()
sync = ring_semi_barrier(MPI, root=0)
for _ in range(3):
    sync(world)
if rank == 0:
    print(json.dumps(report))
'''


def run_check(np_, tmp_path):
    script = tmp_path / "check.py"
    script.write_text(CHECK)
    env = dict(os.environ, PYTHONPATH=str(REPO), OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [mpiexec_beside(sys.executable)] + (["--oversubscribe"] if LIBRARY == "openmpi" else [])
    done = run_launcher(cmd + ["-n", str(np_), sys.executable, str(script)], timeout=240, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("np_", [3, 4])
def test_alpha_bcast_delivers_the_roots_data_and_sends_what_the_tree_says(np_, tmp_path):
    report = run_check(np_, tmp_path)
    for key, got in report.items():
        assert got["sends"] == got["expected"], key
    for root in range(np_):
        assert report[f"alpha-0.00@{root}"]["sends"] == [np_ - 1 if r == root else 0 for r in range(np_)]
    if np_ == 4:   # binomial from rank 0: 0 -> 2, 1; 2 -> 3
        assert report["alpha-0.50@0"]["sends"] == [2, 0, 1, 0]
        # two emulated nodes of 2: flat across nodes, binomial inside = one message into the other node
        assert report["alpha-0.00-0.50@0"]["sends"] == [2, 0, 1, 0]
    node = report["alpha-0.50-0.00@0"]["levels"][0]
    assert node["how"] == "MPI_COMM_TYPE_SHARED" and node["group_sizes"] == [np_]   # one host


def measure(args, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO), OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.run([sys.executable, "-m", "quadsel", *args], capture_output=True, text=True, timeout=240,
                          env=env, cwd=tmp_path)


@pytest.mark.skipif(LIBRARY != "openmpi", reason="Open MPI ids in the C")
def test_measure_alpha_with_ring_builds_a_tree_and_c_returning_alpha_ids(tmp_path):
    out = tmp_path / "a.csv"
    done = measure(["measure", "--np", "2", "-c", "bcast", "--algorithms", "default,6,alpha-0.10-0.50",
                    "--alpha", "0,0.5", "--alpha-levels", "blocks:1", "--sync", "ring", "--msg-sizes", "1,4K",
                    "--max-reps", "10", "--rounds", "1", "--quiet", "-o", str(out)], tmp_path)
    assert done.returncode == 0, done.stderr
    lines = out.read_text().splitlines()
    labels = {line.split(",")[1] for line in lines[1:]}
    assert labels == {"default", "6", "alpha-0.00", "alpha-0.50", "alpha-0.10-0.50"}
    meta = json.loads((tmp_path / "a.meta.json").read_text())
    assert meta["methodology"]["sync"] == "ring" and not meta["methodology"]["barrier_before_each_call"]
    assert meta["alpha_tree"]["levels_of_the_job"][0]["group_sizes"] == [1, 1]
    assert meta["grid"]["algorithms"]["alpha-0.00"].startswith("quadsel alpha-tree")
    again = measure(["measure", "--np", "2", "-c", "bcast", "--algorithms", "default,6,alpha-0.10-0.50",
                     "--alpha", "0,0.5", "--alpha-levels", "blocks:1", "--msg-sizes", "1,4K", "--max-reps", "10",
                     "--rounds", "1", "--quiet", "-o", str(out)], tmp_path)   # the same without --sync ring: refused
    assert again.returncode == 2 and "measured with --sync ring" in again.stderr, again.stderr
    built = measure(["build", str(out), "-o", "a.qt.json", "--max-leaves", "none"], tmp_path)
    assert built.returncode == 0, built.stderr
    source = measure(["codegen", "a.qt.json"], tmp_path)
    assert source.returncode == 0, source.stderr
    assert "no MPI library ships this algorithm" in source.stdout and "1050 = alpha-0.50" in source.stdout
