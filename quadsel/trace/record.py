"""`quadsel trace` inside the MPI job: entry and exit time of every rank at every call of a forced algorithm.

    mpiexec -n 4 python -m quadsel.trace.record SPEC.json [STATUS.json]

SPEC.json is what trace_cli.py writes (the options). Every rank reads its clock right before and right after
each call (a barrier before every call, as `measure` times); the timestamps are gathered to rank 0, put on
rank 0's clock (one host: the CLOCK_MONOTONIC all ranks share, offsets 0; several hosts: offsets estimated by
ping-pong, `clock_offsets`) and written to the trace file (docs/trace.md) after every (algorithm, message
size) run, atomically: a rerun of the same command skips the runs already in the file. The algorithms of one
message size take turns block by block (`trace_interleaved`), and blocks of traced calls alternate with blocks
of untraced ones (barrier + call only), so that the comparison and the cost of tracing are measured under the
same load. The analysis is quadsel/trace/breakdown.py (no MPI).
"""

import json
import os
import socket
import sys
import time
from types import SimpleNamespace

import numpy as np

from .. import __version__
from ..errors import QuadselError
from ..output import write_text

from .trace_file import FORMAT, VERSION, load_trace
# header fields a resumed file must share with the run (else its runs would not be comparable)
_SAME = ("collective", "library", "comm_size", "job_size", "map_by", "datatype")


def clock_offsets(comm, clock, rounds=30):
    """(offset, uncertainty) in seconds of every rank's clock against rank 0's, Cristian's way: rank 0 sends,
    the rank answers its clock reading t, rank 0 reads t0 before and t1 after; offset = t - (t0 + t1) / 2 from
    the round trip with the least t1 - t0, uncertain by half of it. Lists on rank 0, None elsewhere."""
    rank, size = comm.Get_rank(), comm.Get_size()
    best = [(0.0, 0.0)] + [(0.0, float("inf"))] * (size - 1)
    buf = np.zeros(1)
    for peer in range(1, size):
        for _ in range(rounds):
            if rank == 0:
                t0 = clock()
                comm.Send(buf, dest=peer, tag=77)
                comm.Recv(buf, source=peer, tag=78)
                t1 = clock()
                if (t1 - t0) / 2 < best[peer][1]:
                    best[peer] = (float(buf[0]) - (t0 + t1) / 2, (t1 - t0) / 2)
            elif rank == peer:
                comm.Recv(buf, source=0, tag=77)
                buf[0] = clock()
                comm.Send(buf, dest=0, tag=78)
    return ([b[0] for b in best], [b[1] for b in best]) if rank == 0 else (None, None)


class Traced:
    """The timestamps and block wall times of one method at one message size, on this rank."""

    def __init__(self, method, calls):
        self.method = method
        self.entries, self.exits = np.empty(calls), np.empty(calls)
        self.walls = {"traced": [], "untraced": []}
        self.done = 0


def trace_interleaved(methods, call, calls, warmup, batch, clock, beat=None):
    """Trace `calls` calls of every method on its communicator; [Traced] of this rank (seconds, own clock).

    The methods take turns block by block (their order rotated every block), so that a change of the
    machine's load hits all of them alike and their side-by-side comparison is fair. Each turn is a block of
    `batch` traced calls and one of untraced calls (barrier + call, no clock reading or store), the kind
    going first swapped every block: their difference is the cost of tracing."""
    runs = [Traced(m, calls) for m in methods]
    for run in runs:
        if run.method.activate:
            run.method.activate()
        for _ in range(warmup):
            run.method.comm.Barrier()
            call(run.method.comm)
    block = 0
    while runs and runs[0].done < calls:
        n = min(batch, calls - runs[0].done)
        turn = block % len(runs)
        for run in runs[turn:] + runs[:turn]:
            comm, done = run.method.comm, run.done
            for kind in (("traced", "untraced") if block % 2 == 0 else ("untraced", "traced")):
                if run.method.activate:
                    run.method.activate()
                comm.Barrier()
                start = clock()
                if kind == "traced":
                    for i in range(done, done + n):
                        comm.Barrier()
                        run.entries[i] = clock()
                        call(comm)
                        run.exits[i] = clock()
                else:
                    for _ in range(n):
                        comm.Barrier()
                        call(comm)
                run.walls[kind].append((clock() - start) / n)
            run.done += n
        if beat:
            beat()
        block += 1
    return runs


def _run_record(comm, spec, run, label, name, seg, msg, offsets, load):
    """One traced run, gathered on rank 0 into its trace-file record (None on the other ranks)."""
    local = np.concatenate([run.entries, run.exits, run.walls["traced"], run.walls["untraced"]])
    table = np.empty((comm.Get_size(), local.size)) if comm.Get_rank() == 0 else None
    comm.Gather(local, table, root=0)
    if comm.Get_rank() != 0:
        return None
    n = spec.calls
    shift = np.asarray(offsets)[:, None]                       # onto rank 0's clock
    entry, exit_ = (table[:, :n] - shift).T, (table[:, n:2 * n] - shift).T     # calls x ranks
    origin = entry.min()
    blocks = (table.shape[1] - 2 * n) // 2
    traced = table[:, 2 * n:2 * n + blocks].max(axis=0)        # per block, the slowest rank's wall
    untraced = table[:, 2 * n + blocks:].max(axis=0)
    return {"algorithm": label, "name": name, "segsize": seg, "msg_size": msg, "calls": n,
            "warmup": spec.warmup, "batch": spec.batch, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "load_average": [round(x, 2) for x in load],
            "entry_us": np.round((entry - origin) * 1e6, 3).tolist(),
            "exit_us": np.round((exit_ - origin) * 1e6, 3).tolist(),
            "overhead": {"traced_us_per_iteration": [round(x * 1e6, 3) for x in traced],
                         "untraced_us_per_iteration": [round(x * 1e6, 3) for x in untraced],
                         "iteration": "barrier + call (+ two clock readings and their store when traced)"}}


def _existing(spec):
    """The trace file being resumed (None: a new one); QuadselError when it is not one of ours."""
    if not spec.resume or not os.path.exists(spec.output):
        return None
    return load_trace(spec.output, own=True)


def run(spec):
    """Every rank of MPI_COMM_WORLD calls this; rank 0 writes the trace file. Errors: QuadselError on rank 0."""
    from mpi4py import MPI
    from ..libraries import open_library
    from ..measure.mpit import MPIT, MPITError
    from ..measure.calls import buffer_bytes, call_for
    from ..measure.point import MethodComms
    from ..measure.runner import choose_datatype
    from ..measure.grid import DATATYPES
    from ..measure.skew import measure as barrier_skew
    from ..measure.timing import clock_domain, wait_quietly
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    n = spec.comm_size or size
    error = None
    try:
        if n < 2 or n > size:
            raise QuadselError(f"--comm-size {n}: needs 2 to the job size ({size})")
        mpit = MPIT(thread_level=MPI.Query_thread())
        library = open_library(MPI.Get_library_version(), mpit)
        labels = library.resolve(spec.collective, spec.algorithms)
        methods = [(lab, spec.segment if lab != "default" and library.uses_segsize(spec.collective, lab) else 0)
                   for lab in labels]
        library.prepare(spec.collective)
        dtype_name, dtype_size = choose_datatype(SimpleNamespace(datatype="auto", collective=spec.collective,
                                                                 msg_sizes=spec.msg_sizes))
        old = _existing(spec) if rank == 0 else None
        if old is not None:
            now = {"collective": spec.collective, "library": library.name, "comm_size": n, "job_size": size,
                   "map_by": spec.map_by, "datatype": dtype_name}
            for key in _SAME:
                if old.get(key) != now[key]:
                    raise QuadselError(f"{spec.output} was traced with {key} {old.get(key)!r}, this run has "
                                       f"{now[key]!r}: use another -o or --no-resume")
    except MPITError as exc:
        error = f"MPI_T unavailable ({exc}): tracing forces algorithms through it"
    except QuadselError as exc:
        error = str(exc)
    error = world.bcast(error if rank == 0 else None, root=0) or error
    if error:          # one line from rank 0; every rank ends normally (no abort notice from mpiexec)
        if rank == 0:
            raise QuadselError(error)
        return None

    host = MPI.Get_processor_name() or socket.gethostname()
    affinity = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    hosts, domains, affinities = zip(*world.allgather((host, clock_domain(host), affinity)))
    watchdog = None
    if rank == 0 and getattr(spec, "hang_timeout", 0):
        from ..measure.watchdog import Watchdog
        watchdog = Watchdog(spec.hang_timeout, lambda: world.Abort(4)).start()
    comms = MethodComms(MPI, world, library, spec.collective, n, methods)
    clock = time.perf_counter                   # CLOCK_MONOTONIC: one clock for every process of a host
    doc = None
    if comms.member:
        sub = comms.base
        one_clock = len(set(domains[:n])) == 1
        estimated, uncertainty = clock_offsets(sub, clock)
        skew = barrier_skew(sub, 200)
        if rank == 0:
            doc = _header(MPI, spec, library, n, size, hosts, dtype_name, one_clock, estimated, uncertainty, skew)
            doc["cpu_affinity"] = list(affinities[:n])      # the CPUs each rank may run on (its binding)
            doc["algorithms"] = {str(k): v for k, v in library.algorithms(spec.collective).items()}   # forcible
            if old is not None:
                doc["runs"] = old["runs"]
        offsets = sub.bcast([0.0] * n if (rank != 0 or one_clock) else estimated, root=0)
        done = sub.bcast({(r["algorithm"], r["segsize"], r["msg_size"]) for r in doc["runs"]} if rank == 0 else None,
                         root=0)
        send_bytes, recv_bytes = buffer_bytes(spec.collective, max(spec.msg_sizes), n)
        send = np.zeros(send_bytes, dtype=np.uint8)
        recv = np.zeros(recv_bytes, dtype=np.uint8)
        datatype = getattr(MPI, DATATYPES[dtype_name][0])
        offered = library.algorithms(spec.collective)
        for msg in spec.msg_sizes:
            call = call_for(MPI, spec.collective, send, recv, msg, datatype, dtype_size, n)
            todo = [meth for meth in methods if (meth[0], meth[1], msg) not in done]
            if not todo:
                continue
            where = f"message size {msg}, methods {', '.join(f'{a}:{b}' for a, b in todo)}"
            beat = (lambda: watchdog.beat(where)) if watchdog else None
            if beat:
                beat()
            load = os.getloadavg()
            runs = trace_interleaved(comms.contenders(todo), call, spec.calls, spec.warmup, spec.batch, clock, beat)
            records = [_run_record(sub, spec, run, label, offered.get(label, "library default"), seg, msg, offsets,
                                   load) for run, (label, seg) in zip(runs, todo)]
            if rank == 0:           # the runs of one message size land together: a rerun redoes them together
                doc["runs"] += records
                write_text(spec.output, json.dumps(doc, separators=(",", ":")) + "\n")
                if spec.progress:
                    sys.stderr.write(f"trace {spec.collective}: {where}, {spec.calls} calls each on {n} ranks\n")
        comms.free()
    if watchdog:
        watchdog.stop()
    wait_quietly(world)
    mpit.close()
    return doc


def probe_cost_us(clock, reps=20000):
    """µs per call of what tracing adds in this process: two clock readings stored into arrays (loop included)."""
    a, b = np.empty(reps), np.empty(reps)
    start = clock()
    for i in range(reps):
        a[i] = clock()
        b[i] = clock()
    return round((clock() - start) / reps * 1e6, 4)


def _header(MPI, spec, library, n, size, hosts, dtype_name, one_clock, estimated, uncertainty, skew):
    from collections import Counter
    per_host = Counter(hosts[:n])
    return {
        "format": FORMAT, "version": VERSION, "quadsel_version": __version__,
        "collective": spec.collective, "library": library.name,
        "library_version": MPI.Get_library_version().replace("\0", "").strip().splitlines()[0],
        "comm_size": n, "job_size": size, "root": 0, "datatype": dtype_name, "map_by": spec.map_by,
        "hosts": list(hosts[:n]), "cpus": os.cpu_count(),
        "oversubscribed": max(per_host.values()) > (os.cpu_count() or 1),
        "command": spec.command, "load_average": [round(x, 2) for x in os.getloadavg()],
        "clock": {"timer": "CLOCK_MONOTONIC (time.perf_counter)", "one_clock": one_clock,
                  "offsets_applied": not one_clock,
                  "estimated_offset_us": [round(x * 1e6, 3) for x in estimated],
                  "offset_uncertainty_us": [round(x * 1e6, 3) for x in uncertainty]},
        "probe_cost_us": probe_cost_us(time.perf_counter),
        "barrier_skew_us": skew,
        "runs": [],
    }


def main(argv=None):
    """python -m quadsel.trace.record SPEC.json [STATUS.json]: the job the `trace` command launches."""
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0]) as handle:
        spec = SimpleNamespace(**json.load(handle))
    status = argv[1] if len(argv) > 1 else None
    try:
        run(spec)
    except QuadselError as exc:
        if status:     # the launching command reports it, as one line
            with open(status, "w") as handle:
                json.dump({"error": str(exc)}, handle)
            return 0
        sys.stderr.write(f"Error: {exc}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
