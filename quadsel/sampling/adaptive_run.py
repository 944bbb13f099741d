"""`quadsel measure --adaptive` inside the MPI job: rank 0 holds the plan (adaptive.py) and tells the
others, one communicator size at a time, what to measure.

Per row: rank 0 broadcasts the communicator size on the whole job (everyone has just met in the quiet
barrier, so nobody spins), the first n ranks build one communicator per method, and before every point
rank 0 broadcasts the methods to measure there on the row's communicator. Idle ranks sleep in the
quiet barrier meanwhile. A point is measured in one visit with the decision-aware stopping rule
(timing.ranking_settled): rounds are not used, since the plan needs a point's result before the next
(--rounds only describes the full sweep that a share --budget and the estimated share refer to).

Across hosts (layouts, measure/layouts.py) there is one plan per ranks-per-node P, whose rows are the communicator
sizes nodes x P of the layouts with that P, each measured on the communicator the full sweep builds for the layout
(node groups, node-major): exactly the layout forest's member for P (decision/layouts.py), so a plan decides one
tree's map. The plans run one after the other, the smallest P first, under one budget and one clock.
"""

import random
import time

from .adaptive import is_default
from ..measure.point import POINT_DELAY, MethodComms, time_point
from .sample import make_plan
from .sweep import PlanRun
from ..measure.timing import wait_quietly

def sweep_adaptive(world, spec, library, methods, results, replaced, call_at, heartbeat_at, groups=None):
    """Run the adaptive plan (one per ppn across hosts: spec.layouts with `groups`, the job's NodeGroups); returns
    rank 0's PlanRun or Plans (None elsewhere). `call_at(msg_size, comm_size)` is the collective call at that
    point, `heartbeat_at(where)` the watchdog beat for time_methods; `replaced` the keys where the library runs
    another algorithm (runner.replaced_keys): never timed."""
    from mpi4py import MPI
    rank = world.Get_rank()
    layouts = getattr(spec, "layouts", None)
    by_ppn = {}
    for nodes, ppn in layouts or ():
        by_ppn.setdefault(ppn, []).append(nodes * ppn)
    parts = sorted(by_ppn.items()) if layouts else [(None, spec.comm_sizes)]
    started = time.monotonic()
    runs = []
    for ppn, comm_sizes in parts:
        run = None
        if rank == 0:
            plan = make_plan(spec, sorted(comm_sizes), spec.msg_sizes, methods)
            run = PlanRun(plan, spec.collective, results, budget=spec.budget, progress=spec.progress,
                          rule=spec.rule, rounds=spec.rounds,      # the full sweep a share refers to
                          elapsed=lambda: time.monotonic() - started,
                          layout_of=None if ppn is None else (lambda c, p=ppn: (c // p, p)))
            runs.append(run)
        while True:
            n = world.bcast(run.next_row() if rank == 0 else None, root=0)
            if n is None:
                break
            place = None if ppn is None else groups.place((n // ppn, ppn))
            comms = MethodComms(MPI, world, library, spec.collective, n, methods, spec.alpha_levels, place)
            if comms.member and _measure_row(spec, comms, n, run, replaced, call_at, heartbeat_at) and rank == 0:
                run.row_finished(n)
            comms.free()
            if spec.common_start is not None:
                spec.common_start.forget()   # a new communicator may reuse a freed one's address
            wait_quietly(world)
        if run is not None:
            run.close()
        if world.bcast(run.budget_spent if rank == 0 else None, root=0):
            break      # the budget is the whole run's: the larger ppn are not started
    if rank != 0:
        return None
    return runs[0] if not layouts else Plans(runs, sorted(by_ppn))


class Plans:
    """Rank 0's record of the plans of a multi-host run (one per ppn): finished when every plan was, the metadata's
    `adaptive` section per ppn."""

    def __init__(self, runs, ppns):
        self.runs, self.ppns = runs, ppns

    @property
    def finished(self):
        return len(self.runs) == len(self.ppns) and all(r.finished for r in self.runs)

    def summary(self):
        spent = sum(r.plan.spent() for r in self.runs)
        full = sum(r.full_estimate() for r in self.runs)
        return {"per_ppn": {str(p): r.summary() for p, r in zip(self.ppns, self.runs)},
                "finished": self.finished, "budget_spent": any(r.budget_spent for r in self.runs),
                "share_of_full_sweep": round(spent / full, 4) if full else None}


def _measure_row(spec, comms, n, run, replaced, call_at, heartbeat_at):
    """Every message size of row n, ascending; False when the budget stopped it."""
    rank = comms.base.Get_rank()
    for m in spec.msg_sizes:
        todo = comms.base.bcast(run.todo(n, m) if rank == 0 else None, root=0)
        if todo is None:
            return False
        todo = [k for k in todo if (spec.collective, k[0], k[1], n, m) not in replaced]
        measured = {}
        if todo:
            rng = random.Random(f"{spec.seed}:adaptive:{n}:{m}")
            samples, _ = time_point(spec, comms, todo, call_at(m, n), rng,
                                    heartbeat_at(f"comm size {n}, message size {m}"),
                                    decisive=not spec.sample,   # a model needs the times, not only the ranking
                                    candidates=[k for k in todo if not is_default(k)])
            measured = {k: spec.rule.summarize(samples[k]) for k in todo}
        if rank == 0:
            run.done(n, m, measured)
        if POINT_DELAY:
            time.sleep(POINT_DELAY)
    return True
