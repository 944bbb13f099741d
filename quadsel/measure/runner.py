"""The sweep inside an MPI job: one launch measures every communicator size <= the job size on
sub-communicators of the first n ranks (idle ranks sleep), every message size and every method.
"""

import os
import random
import socket
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import List, Optional, Tuple

import numpy as np

from ..errors import QuadselError
from ..inputs import INT_MAX
from . import output, resume
from ..libraries import COLLECTIVES, DEFAULT_ALGORITHM, alphatree, open_library
from .mpit import MPIT, MPITError
from .grid import DATATYPES
from .progress import Progress
from .calls import buffer_bytes, call_for, check_sizes, is_reduction
from .point import POINT_DELAY, MethodComms, heartbeat, replaced_keys, time_point  # noqa: F401 (replaced_keys: part of the interface)
from .timing import StoppingRule, clock_domain, resolve_timing, wait_quietly
from .watchdog import Watchdog
from ..layout import Layout
from .layouts import NodeGroups, default_layouts
from . import clocksync
from . import exchange
from .metadata import first_writes, now, open_outputs

EXIT_NO_MPIT = 3   # the self-launcher then falls back to one launch per method (environment forcing)
# Set by the self-launcher: where rank 0 writes why this launch cannot force in process (MPI_T); every rank
# then ends with status 0, so that mpiexec prints no "exited with non-zero status" notice for a launch that
# only found out, and the launcher says in one line that it measures one launch per method (issue 31).
FALLBACK_STATUS = "QUADSEL_MEASURE_FALLBACK"



@dataclass
class Spec:
    """Everything a run needs; built from the command line (same on every rank)."""
    collective: str
    output: str
    comm_sizes: List[int]
    msg_sizes: List[int]
    segments: List[int] = field(default_factory=lambda: [0])
    algorithms: Optional[List[str]] = None   # None = all the library offers, plus `default`
    datatype: str = "auto"
    rule: StoppingRule = field(default_factory=StoppingRule)
    warmup: int = 2
    batch: int = 5
    rounds: int = 2
    seed: int = 0
    resume: bool = True
    progress: bool = True
    timing: str = "auto"      # "local": max over ranks of own durations; "span": latest end - earliest start;
                              # "auto": span when all ranks are on one host, else local (resolve_timing)
    hang_timeout: float = 300.0   # abort the job when no batch finished for this long (0: never)
    env_method: Optional[Tuple[str, int]] = None   # forced by this launch's environment (no MPI_T)
    command: str = ""
    adaptive: bool = False        # measure where the decision needs it (adaptive.py); one visit per point
    strategy: Optional[object] = None   # adaptive.Strategy (None: its defaults)
    budget: Optional[object] = None     # budget.Budget, only with adaptive or sample
    sample: Optional[str] = None        # "model": the sparse measurement of sample.py (a planned run like adaptive)
    alphas: List[str] = field(default_factory=list)   # quadsel's α-tree methods (libraries/alphatree.py)
    alpha_levels: object = "auto"       # where their levels come from (alpha_bcast.parse_levels)
    sync: str = "barrier"               # before every timed call: barrier, or the ring semi-barrier
    layouts: Optional[List[Layout]] = None   # --layouts; None: the default set across hosts
    common_start: Optional[object] = None   # set in the job: clocksync.CommonStart of --timing offset


def choose_datatype(spec):
    """(name, bytes): bytes for the collectives that move data; for reductions float unless a size is not a
    multiple of 4 (measure/calls.py)."""
    name = spec.datatype
    if name == "auto":
        if not is_reduction(spec.collective):
            name = "byte"
        else:
            name = "float" if all(m % 4 == 0 for m in spec.msg_sizes) else "uint8"
    if name not in DATATYPES:
        raise QuadselError(f"unknown datatype {name!r} (known: auto, {', '.join(DATATYPES)})")
    if name == "byte" and is_reduction(spec.collective):
        raise QuadselError(f"{spec.collective} cannot sum MPI_BYTE; use --datatype uint8, float, ...")
    size = DATATYPES[name][1]
    for m in spec.msg_sizes:
        if m % size:
            raise QuadselError(f"message size {m} is not a multiple of the {name} size ({size} bytes)")
    if max(spec.msg_sizes, default=0) // size > INT_MAX:   # MPI counts are C ints
        raise QuadselError(f"message size {max(spec.msg_sizes)} is {max(spec.msg_sizes) // size} {name} elements: "
                           f"beyond an MPI count ({INT_MAX})")
    return name, size


def check_spec(spec, job_size=None):
    """Argument errors that need no MPI (and the job size when known); raises QuadselError."""
    if spec.collective not in COLLECTIVES:
        raise QuadselError(f"unknown collective {spec.collective!r} (known: {', '.join(COLLECTIVES)})")
    if not spec.comm_sizes or not spec.msg_sizes:
        raise QuadselError("empty --comm-sizes or --msg-sizes")
    if min(spec.comm_sizes) < 1:
        raise QuadselError("communicator sizes must be >= 1")
    check_sizes(spec.collective, spec.msg_sizes)
    if job_size is not None and max(spec.comm_sizes) > job_size:
        raise QuadselError(f"communicator size {max(spec.comm_sizes)} is larger than the job "
                           f"({job_size} rank{'s' if job_size != 1 else ''}): launch more ranks or use --np")
    if spec.alphas and spec.collective != "bcast":
        raise QuadselError(f"α-tree methods are broadcasts; {spec.collective} has none")
    if spec.sync not in ("auto", "barrier", "ring", "start"):
        raise QuadselError(f"unknown --sync {spec.sync!r} (known: auto, barrier, ring, start)")
    if spec.rounds < 1 or spec.warmup < 0 or spec.batch < 1:
        raise QuadselError("--rounds and --batch must be >= 1, --warmup >= 0")
    choose_datatype(spec)


def check_methods(library, collective, labels, asked):
    """One line instead of a run that would time the library default alone because quadsel knows none of the
    collective's algorithms for this library (unless the user asked for the default alone)."""
    if asked is None and labels == [DEFAULT_ALGORITHM] and library.known:   # an unknown library: default only
        raise QuadselError(f"{library.name}: no {collective} algorithm quadsel can force on {library.version}; "
                           f"measuring would time only the library default (give --algorithms default for that)")


def _import_mpi():
    # mpi4py's default thread level (multiple) is kept on purpose: with MPI_THREAD_SINGLE, MPICH's
    # shared-memory collectives spin without yielding and take a whole 16 ms time slice per call
    # once ranks outnumber cores (measured here); the level in force is recorded in the metadata.
    from mpi4py import MPI
    return MPI


class _Fail(Exception):
    pass


def run(spec, planned_sweep=None):
    """Measure the grid of `spec`; every rank of MPI_COMM_WORLD calls this. `planned_sweep`: with --adaptive or
    --sample, the function that runs the plan in the job (quadsel.sampling.adaptive_run.sweep_adaptive)."""
    MPI = _import_mpi()
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()

    def fail(message, code=2, in_process=False):
        # one line from rank 0; the other ranks leave quietly with the same status. in_process: the plan needs
        # MPI_T forcing, which is missing: a self-launcher is told so quietly (pipeline/measure.py NeedsFullSweep)
        status = os.environ.get(FALLBACK_STATUS)
        if (code == EXIT_NO_MPIT or in_process) and status:
            if rank == 0:
                with open(status, "w") as handle:
                    handle.write(message)
            raise SystemExit(0)
        if code == EXIT_NO_MPIT:
            message += "; self-launch with --np to force each method through the environment, one launch per method"
        if rank == 0:
            if code == 2:
                raise QuadselError(message)
            sys.stderr.write(f"quadsel measure: {message}\n")
        raise SystemExit(code)

    try:
        check_spec(spec, size)
    except QuadselError as exc:
        fail(str(exc))

    version_string = MPI.Get_library_version()
    mpit = None
    if spec.env_method is None:
        try:
            mpit = MPIT(thread_level=MPI.Query_thread())
        except MPITError as exc:
            if spec.adaptive or spec.sample:
                fail(f"MPI_T unavailable ({exc}): --adaptive and --sample need it (the methods of a point are "
                     "interleaved in one launch); measure without them", in_process=True)
            fail(f"MPI_T unavailable ({exc})", EXIT_NO_MPIT)
    library = open_library(version_string, mpit)
    if getattr(library, "env_only", False) and spec.env_method is None:
        if spec.adaptive:
            fail(f"{library.version}: --adaptive needs in-process forcing (MPI_T); this library reads its "
                 "algorithm at start-up only: measure without --adaptive")
        fail(f"{library.version} reads its algorithm at start-up only", EXIT_NO_MPIT)
    if mpit is not None and not library.mpit_forcing(spec.collective):
        if spec.adaptive or spec.sample:
            fail(f"{library.name} cannot force {spec.collective} through MPI_T (read-only variables): --adaptive "
                 "and --sample need it; measure without them", in_process=True)
        fail(f"{spec.collective} algorithms cannot be forced through MPI_T here", EXIT_NO_MPIT)
    try:
        labels = library.resolve(spec.collective, spec.algorithms) + spec.alphas
        check_methods(library, spec.collective, labels, spec.algorithms)
        methods = library.methods(spec.collective, labels, spec.segments)
        if spec.env_method is not None:
            methods = [spec.env_method]
        library.prepare(spec.collective)
    except QuadselError as exc:
        fail(str(exc))
    dtype_name, dtype_size = choose_datatype(spec)

    name = MPI.Get_processor_name() or socket.gethostname()
    hosts, domains = zip(*exchange.allgather(world, (name, clock_domain(name))))
    wtime_is_global = bool(world.Get_attr(MPI.WTIME_IS_GLOBAL))
    groups = NodeGroups(MPI, world, name)
    layouts = None                         # one host, no --layouts: the first n ranks, as always
    try:
        if groups.count > 1 or spec.layouts:
            layouts = spec.layouts or default_layouts(groups.count, groups.min_ppn, spec.comm_sizes)
            groups.check(layouts)
            if spec.sample:
                raise QuadselError("--sample fits a model over one host's communicator sizes; across hosts "
                                   "(layouts) measure the full grid or --adaptive")
            if spec.sync == "ring" and groups.count > 1:
                raise QuadselError("--sync ring times from the root's start on one clock: one host only")
        timing, timing_reason = resolve_timing(spec.timing, domains, wtime_is_global, offsets=True)
    except QuadselError as exc:
        fail(str(exc))
    sync = spec.sync if spec.sync != "auto" else ("start" if timing == "offset" else "barrier")
    if sync == "start" and timing == "local":
        fail("--sync start compares clock readings across ranks: it needs --timing span, offset or auto")
    requested_timing = spec.timing
    spec = replace(spec, timing=timing, layouts=layouts, sync=sync)
    spec.common_start, clock_sync = clocksync.setup(MPI, world, groups, timing, sync)

    replaced = replaced_keys(library.name, spec, methods, dtype_size)
    units = [(n, None) for n in spec.comm_sizes] if layouts is None else [(lay.comm_size, Layout(*lay)) for lay in layouts]
    keys = [(spec.collective, label, seg, n, m) + (layout or ())
            for n, layout in units for m in spec.msg_sizes for label, seg in methods
            if (spec.collective, label, seg, n, m) not in replaced]

    # Rank 0 owns the files; everyone gets the same picture of what is done.
    state = results = journal = meta = earlier = None
    if rank == 0:
        try:
            meta, earlier, results, journal = open_outputs(
                spec, library, methods, labels, dtype_name, len(keys), size, layouts is not None,
                dict(timing_requested=requested_timing, timing_reason=timing_reason, wtime_is_global=wtime_is_global))
            state = (results.done, journal.rounds, None)
        except QuadselError as exc:
            state = (None, None, str(exc))
        except OSError as exc:
            state = (None, None, f"cannot write {spec.output}: {exc.strerror}")
    done, rounds_done, error = world.bcast(state, root=0)
    if error:
        fail(error)
    if journal is None:
        journal = output.Journal(output.journal_path(spec.output), resume=False)
        journal.rounds = rounds_done
        journal.record = _memory_record(journal)

    depth = max((len(alphatree.parse(a)) for a in spec.alphas), default=1) - 1
    if depth:
        from ..libraries.alpha_bcast import level_keys
        _, levels = level_keys(MPI, world, spec.alpha_levels, depth)
        if rank == 0:
            meta["alpha_tree"] = {"levels_option": "auto" if spec.alpha_levels == "auto" else
                                  "blocks:" + ",".join(map(str, spec.alpha_levels)), "levels_of_the_job": levels}
    error = None
    if rank == 0:
        if layouts is not None:
            meta["layouts"] = [{"nodes": a, "ppn": b, "comm_size": a * b, "hosts": groups.hosts((a, b))}
                               for a, b in layouts]
            meta["layout_rank_order"] = ("node-major: rank r of a layout's communicator is local rank r % ppn of "
                                         "node r // ppn; nodes (MPI_COMM_TYPE_SHARED groups) by lowest world rank")
            meta["node_groups"] = [{"host": h, "ranks": n} for h, n in zip(groups.hostnames, groups.sizes)]
        if clock_sync is not None:
            meta["clock_sync"] = clock_sync
        meta["hostnames"] = sorted(set(hosts))
        meta["ranks_per_node"] = dict(Counter(hosts))
        meta["oversubscribed"] = max(Counter(hosts).values()) > (os.cpu_count() or 1)
        meta["replaced"] = [dict(zip(("algorithm", "segsize", "comm_size", "msg_size"), k[1:]), runs=r[0], when=r[1],
                                 source=r[2]) for k, r in sorted(replaced.items(), key=lambda kv: kv[0][1:])]
        error = first_writes(spec, meta, results, replaced, earlier)
    # A failed first write (a full disk) is every rank's to know: all leave, with one line from rank 0 (issue 32).
    error = world.bcast(error, root=0)
    if error:
        if rank == 0:
            results.close(), journal.close()
        fail(error)
    if rank == 0:   # from here a failed write of a row ends the whole job at once (the others wait in a call)
        results.fatal = lambda message: _abort(world, message)

    send_bytes, recv_bytes = buffer_bytes(spec.collective, max(spec.msg_sizes), max(spec.comm_sizes))
    send, recv = np.zeros(send_bytes, dtype=np.uint8), np.zeros(recv_bytes, dtype=np.uint8)
    datatype = getattr(MPI, DATATYPES[dtype_name][0])

    watchdog = None
    if rank == 0 and spec.hang_timeout:
        watchdog = Watchdog(spec.hang_timeout, lambda: world.Abort(4)).start()
    if spec.adaptive or spec.sample:
        planned = planned_sweep(world, spec, library, methods, results, replaced,
                                lambda m, n: call_for(MPI, spec.collective, send, recv, m, datatype, dtype_size, n),
                                lambda where: heartbeat(watchdog, where), groups=groups)
    else:
        _sweep_rounds(MPI, world, spec, library, methods, keys, done, journal, results, send, recv, datatype,
                      dtype_size, watchdog, units, groups)
    if watchdog:
        watchdog.stop()
    world.Barrier()
    if clock_sync is not None:   # accuracy: what is left of the offsets on the corrected clocks, after the run
        clocksync.finish(MPI, world, groups, spec.common_start, clock_sync, sync == "start")
    groups.free()
    if rank == 0:
        own = planned.finished if spec.adaptive or spec.sample else all(k in results.done for k in keys)
        complete = resume.complete(spec.collective, meta["runs"][-1]["grid"], own, earlier, results)
        journal.close(remove=own)
        meta["runs"][-1].update(finished=now(), complete=own)
        meta["complete"] = complete
        if spec.adaptive or spec.sample:
            meta["sample" if spec.sample else "adaptive"] = planned.summary()
        results.write_meta(meta)   # beside the CSV, or (a stream) into it
        results.close()
    if mpit is not None:
        mpit.close()


def _sweep_rounds(MPI, world, spec, library, methods, keys, done, journal, results, send, recv, datatype,
                  dtype_size, watchdog, units, groups):
    """The full sweep: every method at every point, the grid repeated --rounds times. `units`: (comm size,
    layout or None) in the order measured; a key of a layout ends in (nodes, ppn)."""
    todo = [(k, r) for r in range(1, spec.rounds + 1) for k in keys if _pending(k, r, spec.rounds, done, journal)]
    visits = {(k[3], k[4], k[5:], r) for k, r in todo}      # a point visited in one round, all its methods
    progress = Progress(len(visits), f"measure {spec.collective}", enabled=(world.Get_rank() == 0 and spec.progress),
                        total_weight=sum(_expected_cost(k, r, spec.rounds) for k, r in todo),
                        unit="point visits" if spec.rounds > 1 else "points")
    for round_ in range(1, spec.rounds + 1):
        for n, layout in units:
            pending = [k for k in keys if k[3] == n and k[5:] == (layout or ())
                       and _pending(k, round_, spec.rounds, done, journal)]
            if not pending:
                continue
            _measure_comm_size(MPI, world, spec, library, methods, n, round_, pending, journal, results,
                               progress, send, recv, datatype, dtype_size, watchdog, layout, groups)
    progress.close()


def _pending(key, round_, rounds, done, journal):
    """Still to measure in this round? The last round writes the row, so it runs whenever the row is
    missing (a journal entry for it may stem from an earlier run with more --rounds)."""
    if key in done:
        return False
    return round_ == rounds or not journal.has(key, round_)


def _expected_cost(key, round_, rounds):
    """Rough relative cost of one point for the ETA: grows with ranks and bytes; round r spends
    1/R of the repetition budget (the samples of the rounds before it count too)."""
    n, m = key[3], key[4]
    return n * (1.0 + m / 32768.0) / rounds


def _memory_record(journal):
    def record(key, round_, samples, wall):
        journal.rounds.setdefault(key, {})[round_] = (list(samples), wall)
    return record


def _measure_comm_size(MPI, world, spec, library, methods, n, round_, pending, journal, results, progress,
                       send, recv, datatype, dtype_size, watchdog=None, layout=None, groups=None):
    rank = world.Get_rank()
    wanted = [meth for meth in methods if any((k[1], k[2]) == meth for k in pending)]
    comms = MethodComms(MPI, world, library, spec.collective, n, wanted, spec.alpha_levels,
                        place=groups.place(layout) if layout else None)
    tail = layout or ()              # a layout's keys end in (nodes, ppn)
    where = f"layout {layout}" if layout else f"comm size {n}"
    if comms.member:
        todo = set(pending)
        for m in spec.msg_sizes:
            at_point = [meth for meth in wanted if (spec.collective, meth[0], meth[1], n, m) + tail in todo]
            if not at_point:
                continue
            prior, prior_time = {}, {}
            for meth in at_point:
                earlier = journal.prior((spec.collective, meth[0], meth[1], n, m) + tail, round_)
                prior[meth], prior_time[meth] = earlier if earlier else ([], 0.0)
            rng = random.Random(f"{spec.seed}:{round_}:{n}:{m}" + (f":{layout}" if layout else ""))
            call = call_for(MPI, spec.collective, send, recv, m, datatype, dtype_size, n)
            samples, spent = time_point(spec, comms, at_point, call, rng,
                                        heartbeat(watchdog, f"{where}, message size {m}"),
                                        prior=prior, prior_time=prior_time, share=round_ / spec.rounds)
            for meth in at_point:
                key = (spec.collective, meth[0], meth[1], n, m) + tail
                if round_ < spec.rounds:
                    journal.record(key, round_, samples[meth][len(prior[meth]):], spent[meth])
                elif rank == 0:
                    results.append(key, *spec.rule.summarize(samples[meth]))
            if POINT_DELAY:
                time.sleep(POINT_DELAY)
            shown = f"layout={layout}" if layout else f"n={n}"
            progress.advance(1, f"[round {round_}/{spec.rounds} {shown} msg={m}: {len(at_point)} method(s)]",
                             weight=sum(_expected_cost((None, None, None, n, m), round_, spec.rounds)
                                        for _ in at_point))
        comms.free()
        if spec.common_start is not None:
            spec.common_start.forget()   # a new communicator may reuse a freed one's address: calibrate again
    wait_quietly(world)


def _abort(world, message):
    """A write of rank 0 failed (a full disk): one line, then the whole job ends (the others wait in a call)."""
    sys.stderr.write(f"Error: {message}\n")
    sys.stderr.flush()
    world.Abort(2)
