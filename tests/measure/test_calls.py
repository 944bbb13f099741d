"""Every collective's call (quadsel/measure/calls.py) is that collective, with the documented buffers, in
measure, in verify's timing and in its fingerprints; and its data arrive where MPI says (a real launch).
"""

import os
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from quadsel.errors import QuadselError
from quadsel.libraries import COLLECTIVES
from quadsel.measure.calls import buffer_bytes, call_for, check_sizes

from helpers import mpi_library as _library, mpiexec_beside as _mpiexec

REPO = Path(__file__).resolve().parents[2]
MPICH_PYTHON = os.environ.get("QUADSEL_MPICH_PYTHON")
MPI_NAME = {c: "".join(w.capitalize() for w in c.split("_")) for c in COLLECTIVES}
MPI_NAME.update(reduce_scatter="Reduce_scatter", reduce_scatter_block="Reduce_scatter_block")


class FakeComm:
    """Records the MPI call and the buffer lengths (in elements of 1 byte) it was given."""

    def __init__(self, size=3):
        self.size, self.calls = size, []

    def Get_size(self):
        return self.size

    def Get_rank(self):
        return 0

    def gather(self, value, root=0):
        return [value] * self.size

    def __getattr__(self, name):
        if not name[:1].isupper():
            raise AttributeError(name)
        return lambda *args, **kwargs: self.calls.append((name, args, kwargs))


FAKE_MPI = types.SimpleNamespace(SUM="sum", BYTE="byte", FLOAT="float", UINT8_T="uint8", INT64_T="int64")


@pytest.mark.parametrize("collective", COLLECTIVES)
def test_measure_and_verify_call_the_collective_itself(collective):
    from quadsel.verify import fingerprint, speed
    msg = 0 if collective == "barrier" else 64
    send, recv = (np.zeros(n, dtype=np.uint8) for n in buffer_bytes(collective, msg, 3))
    calls = [call_for(FAKE_MPI, collective, send, recv, msg, FAKE_MPI.BYTE, 1, 3),
             speed._call(FAKE_MPI, collective, msg, send, recv, None, 3),
             fingerprint._calls(FAKE_MPI, collective, msg, "traffic", None, 3)]
    if collective not in ("barrier", "bcast", "gather", "scatter", "allgather", "allgatherv", "alltoall",
                          "alltoallv"):
        calls.append(fingerprint._calls(FAKE_MPI, collective, msg, "order", "op", 3))
    for call in calls:
        comm = FakeComm()
        call(comm)
        assert [c[0] for c in comm.calls] == [MPI_NAME[collective]], (collective, comm.calls)
        args, kwargs = comm.calls[0][1], comm.calls[0][2]
        if collective in ("reduce", "bcast", "gather", "scatter"):
            assert kwargs.get("root") == 0
        if collective in ("reduce", "allreduce", "scan", "exscan", "reduce_scatter", "reduce_scatter_block"):
            assert kwargs["op"] in ("sum", "op")
        if collective == "reduce_scatter":
            assert sum(kwargs["recvcounts"]) * (len(args[0][0]) // sum(kwargs["recvcounts"])) == len(args[0][0])


def test_sizes_each_collective_accepts():
    check_sizes("barrier", [0])
    check_sizes("bcast", [0, 8])
    with pytest.raises(QuadselError, match="barrier carries no data"):
        check_sizes("barrier", [0, 8])
    with pytest.raises(QuadselError, match="needs data"):
        check_sizes("alltoall", [0, 8])
    assert buffer_bytes("alltoall", 1024, 4) == (4096, 4096)
    assert buffer_bytes("gather", 1024, 4) == (1024, 4096)
    assert buffer_bytes("scatter", 1024, 4) == (4096, 1024)
    assert buffer_bytes("barrier", 0, 4) == (1, 1)


# A real launch: every collective through call_for at 3 ranks, with rank-tagged data; the results checked.
WORKER = r"""
import numpy as np
from mpi4py import MPI
from quadsel.libraries import COLLECTIVES
from quadsel.measure.calls import buffer_bytes, call_for
comm = MPI.COMM_WORLD
rank, p = comm.Get_rank(), comm.Get_size()
bad = []
for coll in COLLECTIVES:
    for msg in ([0] if coll == "barrier" else [4, 4096]):
        nsend, nrecv = buffer_bytes(coll, msg, p)
        send = np.zeros(nsend, dtype=np.uint8)
        recv = np.zeros(nrecv, dtype=np.uint8)
        reduction = coll in ("reduce", "allreduce", "scan", "exscan", "reduce_scatter", "reduce_scatter_block")
        if reduction:
            vals = send.view(np.float32)
            vals[:] = np.arange(vals.size) % 7 + 10 * rank    # element i: i%7 + 10 rank
            dtype, size = MPI.FLOAT, 4
        else:
            send[:] = (np.arange(nsend) // max(msg, 1)) % 50 + 50 * rank   # block b of rank r: b + 50 r
            dtype, size = MPI.BYTE, 1
        call_for(MPI, coll, send, recv, msg, dtype, size, p)(comm)
        m = msg // size
        r = recv.view(np.float32) if reduction else recv
        ok = True
        ranks = 10 * sum(range(p))
        if coll == "bcast":
            ok = (send[:msg] == 0).all()        # the root's first block, 0, everywhere
        elif coll == "gather" and rank == 0:
            ok = all((r[i * m:(i + 1) * m] == 50 * i).all() for i in range(p))
        elif coll == "scatter":
            ok = (r[:m] == rank).all()
        elif coll in ("allgather", "allgatherv"):
            ok = all((r[i * m:(i + 1) * m] == 50 * i).all() for i in range(p))
        elif coll in ("alltoall", "alltoallv"):
            ok = all((r[i * m:(i + 1) * m] == rank + 50 * i).all() for i in range(p))
        elif coll in ("allreduce",) or (coll == "reduce" and rank == 0):
            ok = np.allclose(r[:m], p * (np.arange(m) % 7) + ranks)
        elif coll == "scan":
            ok = np.allclose(r[:m], (rank + 1) * (np.arange(m) % 7) + 10 * sum(range(rank + 1)))
        elif coll == "exscan" and rank > 0:
            ok = np.allclose(r[:m], rank * (np.arange(m) % 7) + 10 * sum(range(rank)))
        elif coll in ("reduce_scatter", "reduce_scatter_block"):
            ok = np.allclose(r[:m], p * (np.arange(rank * m, (rank + 1) * m) % 7) + ranks)
        if not ok:
            bad.append((coll, msg, rank))
bad = comm.gather(bad, root=0)
if rank == 0:
    print("BAD", [b for part in bad for b in part])
"""


def _launch(python, mpi_env):
    mpiexec = _mpiexec(python)
    if not mpiexec:
        pytest.skip(f"no mpiexec beside {python}")
    flags = ["--oversubscribe"] if _library(python) == "openmpi" else []
    from quadsel.measure import launch     # launched as quadsel launches: again once on Open MPI's PMIx start-up flake
    done = launch.run([mpiexec] + flags + ["-n", "3", python, "-c", WORKER], dict(os.environ), timeout=300,
                      capture=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("python", [sys.executable, MPICH_PYTHON], ids=["default-python", "mpich"])
def test_every_collective_moves_the_documented_data(python, mpi_env):
    if python is None:
        pytest.skip("set QUADSEL_MPICH_PYTHON to a Python with MPICH")
    pytest.importorskip("mpi4py")
    out = _launch(python, mpi_env)
    assert "BAD []" in out, out
