"""Running a plan (quadsel.sampling.adaptive) over the grid, the same for the MPI sweep and the replay:
ask the plan what to measure, answer from the CSV what an earlier run already wrote (resume), write
the rows and the `# skipped` lines, count the budget and show the progress.

Every figure the plan sees is the one written to the CSV (rounded as written), so a resumed run takes
exactly the decisions the interrupted one took and measures only what is missing.
"""

import time

from .adaptive import Result
from .budget import estimate_full_cost
from ..measure.progress import Progress


class PlanRun:
    """Rank 0's (or the replay's) side of a planned sweep. `full_cost`: the full sweep's benchmarking
    time when known (a replay); else it is estimated from the measurements (`rule`, `rounds`)."""

    def __init__(self, plan, collective, results, budget=None, progress=True, label="measure",
                 full_cost=None, rule=None, rounds=1, elapsed=None, layout_of=None):
        self.plan, self.collective, self.results, self.budget = plan, collective, results, budget
        # across hosts, one plan per ranks-per-node: its rows' communicator sizes -> (nodes, ppn), which every
        # key of the CSV ends in (the rows and the `# skipped` lines); () on one host
        self.layout_of = layout_of or (lambda c: ())
        self.full_cost, self.rule, self.rounds = full_cost, rule, rounds
        self.started = time.monotonic()
        self.elapsed = elapsed or (lambda: time.monotonic() - self.started)
        self.budget_spent = False
        self.finished = False
        self._written = 0            # plan.skips already written
        self._estimate = None        # (rows done, full sweep estimate) of a real run
        sizes = [(c, m) for c in plan.comm_sizes for m in plan.msg_sizes]
        self._per_point = len(plan.methods) + (plan.default is not None)
        self.progress = Progress(len(sizes), f"{label} {collective}", enabled=progress,
                                 total_weight=sum(self._weight(c, m) for c, m in sizes))

    def _weight(self, c, m):
        # expected relative cost of a point for the ETA (as the sweep's): grows with ranks and bytes
        return self._per_point * c * (1.0 + m / 32768.0)

    def key(self, c, m, method):
        return (self.collective, method[0], method[1], c, m) + tuple(self.layout_of(c))

    def full_estimate(self, fresh=True):
        """The full sweep's benchmarking time: recorded (a replay), or estimated — again only when a row
        was finished since the last estimate, unless `fresh` (the estimate reads the whole plan)."""
        if self.full_cost is not None:
            return self.full_cost
        rows = len(self.plan.rows_done)
        if fresh or self._estimate is None or self._estimate[0] != rows:
            self._estimate = (rows, estimate_full_cost(self.plan, self.rule, self.rounds))
        return self._estimate[1]

    def _over_budget(self):
        if self.budget is None:
            return False
        full = 0.0
        if self.budget.share is not None:
            if self.full_cost is None and len(self.plan.rows_done) < min(2, len(self.plan.comm_sizes)):
                return False   # no estimate of the full sweep before its smallest and largest comm sizes
            full = self.full_estimate(fresh=False)
        return self.budget.spent(self.elapsed(), self.plan.spent(), full)

    # -- rows ---------------------------------------------------------------------------------------
    def next_row(self):
        """The next communicator size, or None (plan done, or budget spent)."""
        if self._over_budget():
            return self._stop()
        c = self.plan.next_row()
        self._write_skips()
        if c is None:
            self.finished = True
        return c

    def row_finished(self, c):
        self.plan.row_finished(c)

    # -- points -------------------------------------------------------------------------------------
    def todo(self, c, m):
        """Methods to measure now at (c, m), or None when the budget is spent. A point whose rows are all
        in the CSV already is not measured again; one cut by a kill is measured again whole (its methods
        stop on each other's intervals), and only its missing rows are written."""
        if self._over_budget():
            return self._stop()
        wanted = self.plan.point(c, m)
        missing = [k for k in wanted if self.key(c, m, k) not in self.results.values]
        return wanted if missing else []

    def done(self, c, m, measured):
        """measured: {method: (mean µs, stddev µs or None, reps or None)} of the methods just measured."""
        answers = {}
        for k in self.plan.point_methods(c, m):
            key = self.key(c, m, k)
            if key in self.results.values:
                answers[k] = Result(*self.results.values[key])
            elif k in measured:
                answers[k] = Result(*self.results.append(key, *measured[k]))
        self.plan.record(c, m, answers)
        self._write_skips()
        if c == self.plan.revisiting:     # an end row measured again (adaptive.py): its points were counted
            self.progress.advance(0, f"[{self._where(c)} msg={m}: revisited, {len(measured)} method(s) added]",
                                  weight=0)
            return
        self.progress.advance(1, f"[{self._where(c)} msg={m}: {len(answers)} method(s)]", weight=self._weight(c, m))

    def _where(self, c):
        layout = self.layout_of(c)
        return f"layout={layout[0]}x{layout[1]}" if layout else f"n={c}"

    def _write_skips(self):
        for c, m, k, reason in self.plan.skips[self._written:]:
            algorithm, segsize = k if k is not None else ("*", "*")
            self.results.append_skipped((self.collective, algorithm, segsize, c, m) + tuple(self.layout_of(c)), reason)
            if k is None:   # a whole communicator size decided at once
                self.progress.advance(len(self.plan.msg_sizes), f"[{self._where(c)} skipped]",
                                      weight=sum(self._weight(c, s) for s in self.plan.msg_sizes))
        self._written = len(self.plan.skips)

    def _stop(self):
        if not self.budget_spent:
            self.budget_spent = True
            self.results.append_note(f"budget {self.budget.text} spent: measurement stopped here")
        return None

    def close(self):
        self.progress.close()

    def summary(self):
        """The `adaptive` section of the metadata."""
        out = self.plan.summary()
        full = self.full_estimate()
        out.update(
            finished=self.finished, budget=self.budget.to_json() if self.budget else None,
            budget_spent=self.budget_spent,
            full_sweep_benchmarking_time_us=round(full, 3),
            full_sweep_time_is=("recorded" if self.full_cost is not None else "estimated"),
            share_of_full_sweep=round(self.plan.spent() / full, 4) if full else None)
        return out
