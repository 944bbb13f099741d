"""The call of every collective at one message size: its buffers, counts, root, operation and v-counts.

One module for `quadsel measure`, `quadsel verify`'s timing (verify/speed.py) and its fingerprints
(verify/fingerprint.py), so that what is verified is exactly what was measured. The message size m is the
decision map's convention, bytes per rank (libraries/sizes.py, docs/collectives.md):

  bcast                   root 0 sends m bytes (MPI_BYTE)
  gather                  every rank sends m bytes to root 0, which receives m x p (MPI_BYTE)
  scatter                 root 0 sends m bytes to every rank (the send count passed on every rank, so that
                          every rank computes the same Open MPI rules key)
  allgather               every rank contributes m bytes, receives m x p (MPI_BYTE)
  allgatherv              the same with recvcounts [m]*p, displs [0, m, 2m, ...] (equal blocks)
  alltoall                m bytes to each peer: send and receive m x p (MPI_BYTE)
  alltoallv               the same with counts [m]*p, displs [0, m, 2m, ...]
  reduce, allreduce       MPI_SUM of m bytes per rank (float, or uint8 if a size is not a multiple of 4),
  scan, exscan            reduce to root 0
  reduce_scatter_block    MPI_SUM of m x p bytes per rank, each rank receives its m bytes
  reduce_scatter          the same with recvcounts [m/type size]*p
  barrier                 no data: m is 0
The buffers are never MPI_IN_PLACE (MPICH's in-place-only algorithms are then replaced: libraries/fallbacks).
"""

from ..errors import QuadselError
from ..libraries.base import is_reduction  # noqa: F401 (part of this module's interface)
# Buffer bytes a rank needs per byte of m at p ranks: (send, receive) factors of m, and of m x p.
_PER_P = {"gather": (False, True), "scatter": (True, False), "allgather": (False, True),
          "allgatherv": (False, True), "alltoall": (True, True), "alltoallv": (True, True),
          "reduce_scatter": (True, False), "reduce_scatter_block": (True, False)}


def buffer_bytes(collective, max_msg, max_comm):
    """Bytes of the send and of the receive buffer enough for every point up to (max_comm, max_msg)."""
    send_p, recv_p = _PER_P.get(collective, (False, False))
    return (max(max_msg * (max_comm if send_p else 1), 1), max(max_msg * (max_comm if recv_p else 1), 1))


def check_sizes(collective, msg_sizes):
    """Message sizes a collective can be called with; raises QuadselError."""
    if collective == "barrier":
        if any(m != 0 for m in msg_sizes):
            raise QuadselError("barrier carries no data: its only message size is 0 (--msg-sizes 0)")
    elif collective != "bcast" and 0 in msg_sizes:
        raise QuadselError(f"message size 0: {collective} needs data (start at 1 or more)")


def call_for(MPI, collective, send, recv, msg, datatype, type_size, p, op=None):
    """call(comm) of `collective` with m = `msg` bytes per rank on a communicator of p ranks.

    send/recv: byte buffers at least buffer_bytes() long; datatype: the MPI datatype of type_size bytes
    (MPI_BYTE for the data movers); op: the reduction (MPI_SUM by default).
    """
    if collective == "barrier":
        return lambda comm: comm.Barrier()
    count = msg // type_size
    op = MPI.SUM if op is None else op
    nbytes = count * type_size
    # exact views: mpi4py divides a block collective's buffer by the ranks, no count to misread
    one_s, one_r = [send[:nbytes], datatype], [recv[:nbytes], datatype]
    all_s, all_r = [send[:nbytes * p], datatype], [recv[:nbytes * p], datatype]
    blocks = ([count] * p, [i * count for i in range(p)])
    v_s, v_r = [send[:nbytes * p], blocks, datatype], [recv[:nbytes * p], blocks, datatype]
    calls = {
        "bcast": lambda comm: comm.Bcast(one_s, root=0),
        "reduce": lambda comm: comm.Reduce(one_s, one_r, op=op, root=0),
        "allreduce": lambda comm: comm.Allreduce(one_s, one_r, op=op),
        "scan": lambda comm: comm.Scan(one_s, one_r, op=op),
        "exscan": lambda comm: comm.Exscan(one_s, one_r, op=op),
        "gather": lambda comm: comm.Gather(one_s, all_r, root=0),
        "scatter": lambda comm: comm.Scatter(all_s, one_r, root=0),
        "allgather": lambda comm: comm.Allgather(one_s, all_r),
        "allgatherv": lambda comm: comm.Allgatherv(one_s, v_r),
        "alltoall": lambda comm: comm.Alltoall(all_s, all_r),
        "alltoallv": lambda comm: comm.Alltoallv(v_s, v_r),
        "reduce_scatter_block": lambda comm: comm.Reduce_scatter_block(all_s, one_r, op=op),
        "reduce_scatter": lambda comm: comm.Reduce_scatter(all_s, one_r, recvcounts=[count] * p, op=op),
    }
    if collective not in calls:
        raise QuadselError(f"quadsel cannot call {collective!r}")
    return calls[collective]
