"""The job's own bookkeeping between ranks (host names, clock domains), point to point.

A collective forced through the environment (Open MPI's allgatherv, every collective of MPICH and Intel MPI: read at
start-up, one launch per method) is forced for every call of the job, quadsel's own too, and an algorithm need not
take the world's size: Open MPI 5's allgatherv algorithm 5 (two_proc) on 4 ranks fails with
MPI_ERR_UNSUPPORTED_OPERATION, and mpi4py's `allgather` of Python objects is MPI_Allgather + MPI_Allgatherv. So the
exchanges every job makes before it times anything go through send and recv, which no forcing touches.
"""

_TAG = 7301


def allgather(comm, value):
    """[value of rank 0, value of rank 1, ...] on every rank, by sends to rank 0 and back (quadsel's few values
    per job: the cost is the world's size in messages, once)."""
    rank, size = comm.Get_rank(), comm.Get_size()
    if rank == 0:
        values = [value] + [comm.recv(source=r, tag=_TAG) for r in range(1, size)]
        for r in range(1, size):
            comm.send(values, dest=r, tag=_TAG)
        return values
    comm.send(value, dest=0, tag=_TAG)
    return comm.recv(source=0, tag=_TAG)


def gather(comm, value, root=0):
    """[value of every rank] on `root`, None elsewhere, by sends (the verify follow check's fingerprints: they are
    gathered on the communicator whose collective is forced, gather's own included)."""
    rank, size = comm.Get_rank(), comm.Get_size()
    if rank != root:
        comm.send(value, dest=root, tag=_TAG + 1)
        return None
    return [value if r == root else comm.recv(source=r, tag=_TAG + 1) for r in range(size)]
