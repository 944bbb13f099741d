"""How far apart the ranks leave an MPI_Barrier, on one host (whose CLOCK_MONOTONIC they share).

    mpiexec -n 8 python -m quadsel.measure.skew [--comm-sizes 2,4,8] [--reps 2000]

For each communicator size n (the first n ranks; the others sleep as in `quadsel measure`), it calls
Barrier then reads the clock, `reps` times, and prints one JSON line per size with the median, 90th
percentile and maximum over the repetitions, in µs, of

- `spread`: latest exit - earliest exit over the ranks;
- `root_late`: root's exit - earliest exit (how long a non-root rank may wait for the root to start);
- `after_root`: latest exit - root's exit (how long the data may already wait for a late rank).

With `--timing local` a rank that leaves late times only the part of the collective it still sees, so
`after_root` is what `local` can miss; `--timing span` counts `root_late` in, for every method alike.
"""

import argparse
import json
import sys
import time

import numpy as np

from . import exchange


def measure(comm, reps, warmup=50):
    clock = time.perf_counter     # CLOCK_MONOTONIC on Linux: one clock for every process of a host
    for _ in range(warmup):
        comm.Barrier()
    exits = np.empty(reps)
    for i in range(reps):
        comm.Barrier()
        exits[i] = clock()
    table = comm.gather(exits, root=0)
    if comm.Get_rank() != 0:
        return None
    table = np.array(table) * 1e6           # ranks x reps, µs
    first, last, root = table.min(axis=0), table.max(axis=0), table[0]

    def stats(values):
        return {"median": round(float(np.median(values)), 2), "p90": round(float(np.percentile(values, 90)), 2),
                "max": round(float(values.max()), 2)}
    return {"comm_size": comm.Get_size(), "reps": reps, "spread": stats(last - first),
            "root_late": stats(root - first), "after_root": stats(last - root)}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m quadsel.measure.skew", description=__doc__.splitlines()[0])
    parser.add_argument("--comm-sizes", default=None, help="comma list (default: 2 to the job size)")
    parser.add_argument("--reps", type=int, default=2000)
    args = parser.parse_args(argv)
    from mpi4py import MPI
    from .timing import clock_domain, wait_quietly
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    domains = exchange.allgather(world, clock_domain(MPI.Get_processor_name()))
    if len(set(domains)) > 1:
        if rank == 0:
            sys.stderr.write("quadsel.measure.skew: the ranks are on several hosts; their clocks differ\n")
        return 2
    sizes = [int(s) for s in args.comm_sizes.split(",")] if args.comm_sizes else list(range(2, size + 1))
    for n in sizes:
        member = rank < n
        comm = world.Split(0 if member else MPI.UNDEFINED, rank)
        if member:
            result = measure(comm, args.reps)
            if result is not None:
                result["library"] = MPI.Get_library_version().splitlines()[0].strip()
                result["job_size"] = size
                print(json.dumps(result), flush=True)
            comm.Free()
        wait_quietly(world)
    return 0


if __name__ == "__main__":
    sys.exit(main())
