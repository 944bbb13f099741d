"""Measuring at one point on the first n ranks, for the full sweep (runner.py) and the adaptive one
(adaptive_run.py): one communicator per method, since Open MPI binds the forced algorithm when a
communicator is created, and the interleaved timing loop over the methods wanted there.
"""

import os
import time

from ..libraries import alphatree
from ..libraries.base import DEFAULT_ALGORITHM
from .timing import Method, time_methods

# Test aid: seconds to pause after each point, so that a test can kill -9 a run in its middle.
POINT_DELAY = float(os.environ.get("QUADSEL_MEASURE_POINT_DELAY") or 0)


class MethodComms:
    """Sub-communicator of the first n ranks of `world` (or, with `place` = (member?, rank in it), of the ranks a
    layout picks: layouts.NodeGroups.place) and, on its members, one Dup per method.
    Collective over `world` (non-members get no communicator).

    Where the library's multi-node component takes the collective and the communicator spans 2+ nodes (`spans`:
    Open MPI's coll/han, measure/multinode.py), the default runs on a Dup it takes and every forced method on one it
    may not take."""

    def __init__(self, MPI, world, library, collective, n, methods, alpha_levels="auto", place=None):
        from .multinode import flat_dup, spans_nodes, taken
        rank = world.Get_rank()
        self.library, self.collective = library, collective
        self.member, order = place if place is not None else (rank < n, rank)
        self.base = world.Split(0 if self.member else MPI.UNDEFINED, order)
        self.comms, self.alpha = {}, {}
        if not self.member:
            self.spans = False
            return
        self.spans = taken(library, collective) and spans_nodes(MPI, self.base)
        for label, seg in methods:
            if alphatree.is_alpha(label):             # quadsel's own: nothing to force
                self.comms[(label, seg)] = self.base.Dup()
                continue
            library.activate(collective, label, seg)   # Open MPI binds it at creation: hence a new communicator each
            flat = self.spans and label != DEFAULT_ALGORITHM
            self.comms[(label, seg)] = flat_dup(MPI, self.base, library) if flat else self.base.Dup()
        if library.carries_forcing:
            library.activate(collective, DEFAULT_ALGORITHM, 0)
        alphas = [meth for meth in methods if alphatree.is_alpha(meth[0])]
        if alphas:
            from ..libraries.alpha_bcast import AlphaBcast, level_keys
            depth = max(len(alphatree.parse(label)) for label, _ in alphas) - 1
            keys, self.levels = level_keys(MPI, self.base, alpha_levels, depth)
            for meth in alphas:
                self.alpha[meth] = AlphaBcast(MPI, self.comms[meth], meth[0], keys)

    def contenders(self, methods, call=None):
        library, collective = self.library, self.collective
        return [Method(meth, self.comms[meth], None if library.carries_forcing or meth in self.alpha else
                       (lambda meth=meth: library.activate(collective, meth[0], meth[1])),
                       _alpha_call(self.alpha[meth], call) if meth in self.alpha else None)
                for meth in methods]

    def free(self):
        if not self.member:
            return
        for comm in self.comms.values():
            comm.Free()
        self.base.Free()
        if self.library.carries_forcing is False:
            self.library.activate(self.collective, DEFAULT_ALGORITHM, 0)


def _alpha_call(alpha, call):
    buffer = call.buffer
    return lambda comm: alpha(comm, buffer)


def time_point(spec, comms, methods, call, rng, heartbeat=None, **options):
    """time_methods for `methods` at one point with the spec's rule, warm-up, batch, timing and sync."""
    span = spec.timing in ("span", "offset")
    sync = None
    clock = time.perf_counter if span else None
    if spec.timing == "offset":      # clocks moved onto rank 0's (clocksync.py)
        clock = spec.common_start.clock
    if getattr(spec, "sync", "barrier") == "start":   # every call started at a common time
        sync = spec.common_start
    elif getattr(spec, "sync", "barrier") == "ring":
        from mpi4py import MPI
        from ..libraries.alpha_bcast import ring_semi_barrier
        sync = ring_semi_barrier(MPI, root=0)
    return time_methods(comms.contenders(methods, call), call, spec.rule, rng, warmup=spec.warmup,
                        batch=spec.batch, span=span, clock=clock,
                        heartbeat=heartbeat, sync=sync, **options)


def heartbeat(watchdog, where):
    """What time_methods calls after every batch: the hang watchdog's beat (None without a watchdog)."""
    if watchdog is None:
        return None
    watchdog.beat(f"{where} (warm-up)")
    return lambda name: watchdog.beat(f"{where}, method {name[0]}:{name[1]}")


def replaced_keys(library_name, spec, methods, dtype_size):
    """{key: (what runs, condition, source)} of the points where the library would run another algorithm than
    the forced one (libraries/fallbacks.py): they are not timed, and recorded as `# replaced` lines."""
    from ..libraries import fallbacks
    out = {}
    for n in spec.comm_sizes:
        for m in spec.msg_sizes:
            for label, seg in methods:
                if label == DEFAULT_ALGORITHM:
                    continue
                call = fallbacks.Call(n, m // dtype_size, dtype_size, segsize=seg)
                runs = fallbacks.replacement(library_name, spec.collective, label, call)
                if runs is not None:
                    first = fallbacks.why(library_name, spec.collective, label, call)
                    out[(spec.collective, label, seg, n, m)] = (runs, first.when, first.source)
    return out
