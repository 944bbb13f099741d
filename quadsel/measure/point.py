"""Measuring at one point on the first n ranks, for the full sweep (runner.py) and the adaptive one
(adaptive_run.py): one communicator per method, since Open MPI binds the forced algorithm when a
communicator is created, and the interleaved timing loop over the methods wanted there.
"""

import os
import time

from ..libraries.base import DEFAULT_ALGORITHM
from .timing import Method, time_methods

# Test aid: seconds to pause after each point, so that a test can kill -9 a run in its middle.
POINT_DELAY = float(os.environ.get("QUADSEL_MEASURE_POINT_DELAY") or 0)


class MethodComms:
    """Sub-communicator of the first n ranks of `world` and, on its members, one Dup per method.
    Collective over `world` (non-members get no communicator)."""

    def __init__(self, MPI, world, library, collective, n, methods):
        rank = world.Get_rank()
        self.library, self.collective = library, collective
        self.member = rank < n
        self.base = world.Split(0 if self.member else MPI.UNDEFINED, rank)
        self.comms = {}
        if not self.member:
            return
        for label, seg in methods:
            library.activate(collective, label, seg)   # Open MPI binds it at creation:
            self.comms[(label, seg)] = self.base.Dup()  # hence a new communicator per method
        if library.carries_forcing:
            library.activate(collective, DEFAULT_ALGORITHM, 0)

    def contenders(self, methods):
        library, collective = self.library, self.collective
        return [Method(meth, self.comms[meth], None if library.carries_forcing else
                       (lambda meth=meth: library.activate(collective, meth[0], meth[1])))
                for meth in methods]

    def free(self):
        if not self.member:
            return
        for comm in self.comms.values():
            comm.Free()
        self.base.Free()
        if self.library.carries_forcing is False:
            self.library.activate(self.collective, DEFAULT_ALGORITHM, 0)


def time_point(spec, comms, methods, call, rng, heartbeat=None, **options):
    """time_methods for `methods` at one point with the spec's rule, warm-up, batch and timing."""
    span = spec.timing == "span"
    return time_methods(comms.contenders(methods), call, spec.rule, rng, warmup=spec.warmup, batch=spec.batch,
                        span=span, clock=time.perf_counter if span else None, heartbeat=heartbeat, **options)


def heartbeat(watchdog, where):
    """What time_methods calls after every batch: the hang watchdog's beat (None without a watchdog)."""
    if watchdog is None:
        return None
    watchdog.beat(f"{where} (warm-up)")
    return lambda name: watchdog.beat(f"{where}, method {name[0]}:{name[1]}")
