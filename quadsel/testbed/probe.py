"""The proof job of a multi-host run (run under mpiexec): `python -m quadsel.testbed.probe [--iterations N]`.

Rank 0 prints one JSON object: every rank's MPI_Get_processor_name, the node groups that
MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) forms (as lists of world ranks), the MPI library, and the one-way
latency of a ping-pong (8 bytes, half the best round trip of `--reps` runs of `--iterations` round trips, µs)
between rank 0 and another rank of its node group ("within_host") and between rank 0 and the first rank of
another node group ("between_hosts").

While two ranks ping-pong the others wait in a non-blocking barrier polled with sleeps: the namespace
cluster's hosts share the machine's cores, and busy-waiting ranks would take the cores from the pair.
"""

import argparse
import json
import sys
import time


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m quadsel.testbed.probe")
    parser.add_argument("--iterations", type=int, default=1000, help="round trips per timed run")
    parser.add_argument("--reps", type=int, default=5, help="timed runs; the best is kept")
    parser.add_argument("--bytes", type=int, default=8, help="message size")
    args = parser.parse_args(argv)
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    names = comm.allgather(MPI.Get_processor_name())
    leaders = comm.allgather(comm.rank if node.rank == 0 else None)
    groups = comm.allgather(tuple(node.allgather(comm.rank)))
    node_groups = sorted(set(groups))
    latency = {}
    partner = next((r for r in groups[0] if r != 0), None)                 # rank 0's host
    other_node = next((g[0] for g in node_groups if 0 not in g), None)     # another host
    if partner is not None:
        latency["within_host"] = _pingpong(comm, 0, partner, args)
    if other_node is not None:
        latency["between_hosts"] = _pingpong(comm, 0, other_node, args)
    node.Free()
    if comm.rank == 0:
        print(json.dumps({
            "library": MPI.Get_library_version().replace("\x00", "").splitlines()[0].strip(),
            "size": comm.size,
            "processor_names": names,
            "node_groups": [list(g) for g in node_groups],
            "node_leaders": [r for r in leaders if r is not None],
            "one_way_latency_us": latency,
            "message_bytes": args.bytes,
            "iterations": args.iterations,
            "reps": args.reps,
        }), flush=True)
    return 0


def _quiet_barrier(comm):
    request = comm.Ibarrier()
    while not request.Test():
        time.sleep(0.0005)


def _pingpong(comm, a, b, args):
    """One-way latency between world ranks a and b (µs, best of the reps), broadcast to every rank."""
    import numpy as np
    buf = np.zeros(max(args.bytes, 1), dtype=np.uint8)[:args.bytes]
    best = float("inf")
    _quiet_barrier(comm)
    for _ in range(args.reps):
        if comm.rank in (a, b):
            other = b if comm.rank == a else a
            comm.Sendrecv(buf, other, recvbuf=buf, source=other)   # the connection is made before the clock runs
            start = time.perf_counter()
            for _ in range(args.iterations):
                if comm.rank == a:
                    comm.Send(buf, other)
                    comm.Recv(buf, other)
                else:
                    comm.Recv(buf, other)
                    comm.Send(buf, other)
            best = min(best, (time.perf_counter() - start) / args.iterations / 2 * 1e6)
        _quiet_barrier(comm)
    return comm.bcast(best if comm.rank == a else None, root=a)


if __name__ == "__main__":
    sys.exit(main())
