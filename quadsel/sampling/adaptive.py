"""Adaptive measurement: measure the decision map where the decision needs it (docs/measure.md).

One communicator size (a row of the decision map, §3) is measured at a time, from the smallest message
size up. Rows are taken by bisection: the first and the last communicator size, then the middle of
every gap between measured rows whose decisions do not carry over to each other; a gap whose two rows
agree (the winner of each is within `tolerance` of the best in the other, at every message size) is
not measured, and the quadtree's floor rule gives its communicator sizes the decision of the row below.
The first and the last size, measured beside no other row, are revisited at the end for the methods they
skipped that the nearest measured row has near the best (`_next_revisit`).

Within a row, a method is measured at a point unless it is far behind: slower than `behind` × the best
at the row's previous measured sizes, not closing the gap (the trend of its ratio to the best, over its
last two measured sizes, extrapolated to this size), and not near the best at this message size in the
neighbouring measured rows. A pruned method comes back as soon as a prediction says it may be near the
best, unless its ratio to the best is `hopeless`; and, while its ratio is below that, it is probed 2, 4,
8, ... sizes after its last measurement where the probe costs less than `probe` of the time spent so far.
A method that falls behind at one size after being near the best at the size before is measured once
more before any of this applies: one size behind is a step (a protocol switch), two in a row a trend.

The library's `default` is one more candidate (the default build keeps it where nothing beats it beyond
the noise, and every penalty is measured against the best measured choice, the default included), but a
point is never left with the default alone: the builder would fill such a point from its neighbours, so
the method nearest the best by its ratio is measured beside it (issue 33, docs/measure.md).

The plan holds no MPI and no clock: the MPI sweep and the replay of recorded sweeps ask it what to
measure and tell it what they measured, so both run the very same strategy.
"""

import bisect
import math
from dataclasses import dataclass
from typing import Optional

from ..libraries.base import DEFAULT_ALGORITHM


@dataclass(frozen=True)
class Result:
    """One method at one point as written to the CSV: µs per call, sample stddev and valid repetitions
    (None where a replayed file records none)."""
    mean: float
    stddev: Optional[float] = None
    reps: Optional[int] = None

    @property
    def cost(self):
        """Benchmarking time of the pair, µs: time per call × repetitions (1 where unknown)."""
        return self.mean * (self.reps or 1)


@dataclass(frozen=True)
class Strategy:
    behind: float = 1.3          # a method this many times slower than the best is far behind
    tolerance: float = 0.05      # rows agree when each one's winners are within this of the other's best
    cheap: float = 0.003         # a pair whose cost is below this share of the time spent so far is measured
    hopeless: float = 2.0        # a method this many times the best by its last ratio is not probed
    probe: float = 0.05          # a probe (a pruned method again, 2, 4, 8... sizes on) is measured below this share
    default: bool = True         # measure the library default (when the grid has it) as one more candidate

    def __post_init__(self):
        if not self.behind > 1:
            raise ValueError("behind must be > 1")
        if not 0 <= self.tolerance < 1:
            raise ValueError("tolerance must be in [0, 1)")
        if not 0 <= self.cheap < 1 or not 0 <= self.probe < 1:
            raise ValueError("cheap and probe must be in [0, 1)")
        if not self.hopeless > 1:
            raise ValueError("hopeless must be > 1")


def is_default(method):
    return str(method[0]).strip().lower() == DEFAULT_ALGORITHM


class AdaptivePlan:
    """What to measure next. `methods` are hashable (algorithm, segsize) pairs; `default` among them is
    the library's own choice. Drivers call `next_row()`, then `point(c, m)` and `record(c, m, results)` for
    every message size of that row in ascending order, until `next_row()` returns None."""

    def __init__(self, comm_sizes, msg_sizes, methods, strategy=None):
        self.comm_sizes = sorted(comm_sizes)
        self.msg_sizes = sorted(msg_sizes)
        self.methods = [k for k in methods if not is_default(k)]
        self.default = next((k for k in methods if is_default(k)), None)
        self.strategy = strategy or Strategy()
        # what a point may measure: the methods, and the library default when the grid has it and the strategy
        # measures it (the default build keeps it where nothing beats it: it is a decision like the others)
        self.candidates = self.methods + ([self.default] if self.default is not None and self.strategy.default
                                          else [])
        self.results = {}     # (c, m, method) -> Result
        self._winners = {}    # (c, m) -> the fastest measured method
        self._chosen = {}     # (c, m) -> what point(c, m) chose
        self._spent = 0.0     # benchmarking time of everything in `results`
        self._calls = []      # repetitions of every result, sorted
        self.skips = []       # (comm_size, msg_size or "*", method or None, reason), in decision order
        self.rows_done = []   # row indices fully measured
        self.rows_skipped = []
        last = len(self.comm_sizes) - 1
        self._first = [0] + ([last] if last > 0 else [])
        self._ends = list(self._first)     # measured before any row beside them: revisited at the end
        self._revisits = None
        self.revisiting = None     # the communicator size being revisited (_next_revisit), or None
        if self.default is not None and not self.strategy.default:
            self.skips.append(("*", "*", self.default, "the library default is not measured by this plan; "
                               "measure it with --algorithms default (resume adds its rows to this file)"))
        self._gaps = [(0, last)] if last > 1 else []

    # -- rows ---------------------------------------------------------------------------------------
    def next_row(self):
        """The next communicator size to measure, or None when the plan is done."""
        if self._first:
            return self.comm_sizes[self._first.pop(0)]
        while self._gaps:
            low, high = self._gaps.pop(0)   # breadth first: a cut budget leaves an even coverage
            if high - low < 2:
                continue
            if self._agree(low, high):
                self._skip_rows(low, high)
                continue
            middle = (low + high) // 2
            self._gaps += [(low, middle), (middle, high)]
            return self.comm_sizes[middle]
        return self._next_revisit()

    def _next_revisit(self):
        """The first and the last communicator size again, once every other row is done: each was measured before
        the row beside it, so a method it pruned there as hopeless was never checked against a neighbouring row
        (the one that wins at large messages on many ranks, pruned at 1 B). Its revisit measures, at each message
        size, the methods it skipped that are near the best (within `behind`) at that size in the nearest measured
        row; a row with nothing to add is not visited. None when there is no revisit left."""
        if self._revisits is None:
            self._revisits = [i for i in self._ends if i in self.rows_done and len(self.rows_done) > 1]
        self.revisiting = None
        while self._revisits:
            c = self.comm_sizes[self._revisits.pop(0)]
            if any(self._revisit_methods(c, m) for m in self.msg_sizes):
                self.revisiting = c
                return c
        return None

    def _revisit_methods(self, c, m):
        out = []
        for k in self.methods:
            if (c, m, k) in self.results:
                continue
            for row in self._neighbours(c):
                best, here = self.winner(row, m), self.results.get((row, m, k))
                if best is not None and here is not None and \
                        here.mean <= self.strategy.behind * self.results[(row, m, best)].mean:
                    out.append(k)
                    break
        return out

    def row_finished(self, c):
        i = self.comm_sizes.index(c)
        if i not in self.rows_done:
            self.rows_done.append(i)

    def _agree(self, low, high):
        """Does each row's decision carry over to the other within `tolerance`, at every message size?"""
        a, b = self.comm_sizes[low], self.comm_sizes[high]
        for m in self.msg_sizes:
            for here, there in ((a, b), (b, a)):
                winner = self.winner(here, m)
                best = self.winner(there, m)
                if winner is None or best is None or (there, m, winner) not in self.results:
                    return False
                ratio = self.results[(there, m, winner)].mean / self.results[(there, m, best)].mean
                if ratio > 1 + self.strategy.tolerance:
                    return False
        return True

    def _skip_rows(self, low, high):
        a, b = self.comm_sizes[low], self.comm_sizes[high]
        for i in range(low + 1, high):
            self.rows_skipped.append(i)
            self.skips.append((self.comm_sizes[i], "*", None,
                               f"between comm sizes {a} and {b}, whose decisions agree within "
                               f"{self.strategy.tolerance:.0%}"))

    # -- points -------------------------------------------------------------------------------------
    def winner(self, c, m):
        """The fastest measured method at (c, m), or None."""
        return self._winners.get((c, m))

    def point(self, c, m):
        """The methods to measure at (c, m); the others are recorded in `skips` with the reason."""
        if c == self.revisiting:
            self._chosen[(c, m)] = self._revisit_methods(c, m)
            return self._chosen[(c, m)]
        chosen, reasons = [], {}
        best = self.predicted_best(c, m)
        for k in self.candidates:
            reason = self._far_behind(c, m, k, best)
            if reason is None:
                chosen.append(k)
            else:
                reasons[k] = reason
        if not any(k in self.methods for k in chosen) and self.methods:
            # never leave a point without a method the decision map holds (the library default alone is a hole
            # there: the builder fills the point from its neighbours): the method nearest the best by its ratio to
            # the best (not its own trend, which from a stale measurement can promise any method the point)
            nearest = min((k for k in reasons if k in self.methods),
                          key=lambda k: self.predicted_times(c, m, k, best)[0][0])
            chosen.append(nearest)
            del reasons[nearest]
        self.skips.extend((c, m, k, reason) for k, reason in reasons.items())
        self._chosen[(c, m)] = chosen
        return chosen

    def point_methods(self, c, m):
        """The methods `point(c, m)` chose."""
        return self._chosen[(c, m)]

    def record(self, c, m, results):
        """Results ({method: Result}) of the methods measured at (c, m)."""
        for k, result in results.items():
            old = self.results.get((c, m, k))
            if old is not None:
                self._spent -= old.cost
                self._calls.remove(old.reps or 1)
            self.results[(c, m, k)] = result
            self._spent += result.cost
            bisect.insort(self._calls, result.reps or 1)
        measured = [(self.results[(c, m, k)].mean, i, k) for i, k in enumerate(self.candidates)
                    if (c, m, k) in self.results]
        if measured:
            self._winners[(c, m)] = min(measured)[2]

    def _history(self, c, m, k):
        """(msg size, time) of `k` at the sizes below m measured in row c, ascending."""
        return [(s, self.results[(c, s, k)].mean) for s in self.msg_sizes
                if s < m and (c, s, k) in self.results]

    def predicted_times(self, c, m, k, best=None):
        """Predictions of k's time at (c, m) — [(µs, what it rests on)], empty without a measurement of k
        in row c — under three assumptions: k keeps its ratio to the best from its last measured size,
        or closes it as its last two ratios did (`steady`); k's time follows its own log-log trend
        (slope in [0, 1]: flat latency to linear bandwidth), which notices a best that degrades; k's
        time grows as it did in a neighbouring measured row."""
        history = self._history(c, m, k)
        best = self.predicted_best(c, m) if best is None else best
        if not history or best is None:
            return []
        size, last = history[-1]
        ratios = [(s, t / self.results[(c, s, self.winner(c, s))].mean) for s, t in history[-2:]]
        steady = ratios[-1][1]
        if len(ratios) == 2 and ratios[1][1] < ratios[0][1]:   # closing the gap: extrapolate the closing
            (s0, r0), (s1, r1) = ratios
            steady = r1 * math.exp(math.log(r1 / r0) / (_log(s1) - _log(s0)) * (_log(m) - _log(s1)))
        out = [(steady * best, f"its ratio to the best at {ratios[-1][0]} B"),
               (_own_trend(history, m), f"its own trend from {size} B")]
        for row in self._neighbours(c):
            then, now = self.results.get((row, size, k)), self.results.get((row, m, k))
            if then is not None and now is not None:
                out.append((last * now.mean / then.mean, f"its growth at comm size {row}"))
        return out

    def predicted_best(self, c, m):
        """The best time expected at (c, m): the lowest log-log extrapolation (slope in [0, 1]) of the
        methods measured at the row's previous measured size (None at the row's first point)."""
        before = [s for s in self.msg_sizes if s < m and self.winner(c, s) is not None]
        if not before:
            return None
        out = []
        for k in self.candidates:
            history = self._history(c, m, k)
            if history and history[-1][0] == before[-1]:
                out.append(_own_trend(history, m))
        return min(out)

    def _far_behind(self, c, m, k, best):
        """None when `k` must be measured at (c, m), else the reason it is not: every prediction of its
        time (`predicted_times`) is at least `behind` × the best expected there, and measuring it is
        not cheap (its cost at its last ratio to the best above `cheap` × the benchmarking time so far)."""
        times = self.predicted_times(c, m, k, best)
        if not times or self._stepped(c, m, k):
            return None
        # hopeless: measured twice in this row and still `hopeless` x the best by its ratio (or its closing of the
        # gap): no other prediction brings it back (one measurement says nothing of its growth: the latency-bound
        # method that wins at large messages, the pipeline case, comes back on its flat own trend)
        hopeless = len(self._history(c, m, k)) >= 2 and times[0][0] >= self.strategy.hopeless * best
        if not hopeless and min(t for t, _ in times) < self.strategy.behind * best:
            return None
        cost = times[0][0] * self._typical_calls()      # at its last ratio to the best
        if not hopeless and self._probe(c, m, k) and cost <= self.strategy.probe * self.spent():
            return None
        if cost <= self.strategy.cheap * self.spent():
            return None
        return "far behind: " + "; ".join(f"{t / best:.2f}x the best by {why}" for t, why in times)

    def _stepped(self, c, m, k):
        """Did `k` fall behind (`behind` x the winner) at its last measured size in row c, having been near the best
        at the one before? That is a step — a protocol switch: at Open MPI's 4 KiB eager limit the segmented
        bcasts stay eager and are 2x the others' speed at that size alone (examples/two-ranks) — and says nothing
        yet of the sizes after it: `k` is measured once more. Behind at both, it is a trend, and pruned."""
        history = self._history(c, m, k)[-2:]
        if len(history) < 2:
            return False
        (s0, t0), (s1, t1) = history
        behind = self.strategy.behind
        return (t1 >= behind * self.results[(c, s1, self.winner(c, s1))].mean
                and t0 < behind * self.results[(c, s0, self.winner(c, s0))].mean)

    def _probe(self, c, m, k):
        """Is (c, m) a probe of `k`: 2, 4, 8, ... message sizes after its last measurement in row c? A method
        pruned after a step (a protocol switch that favours another method at one size) is then measured again
        without a neighbouring row to show it, at doubling distances (its probes thin out as it keeps losing)."""
        history = self._history(c, m, k)
        if not history:
            return False
        gap = self.msg_sizes.index(m) - self.msg_sizes.index(history[-1][0])
        return gap >= 2 and gap & (gap - 1) == 0

    def _typical_calls(self):
        return self._calls[len(self._calls) // 2] if self._calls else 1

    def _neighbours(self, c):
        """The nearest fully measured rows below and above communicator size c."""
        i = self.comm_sizes.index(c)
        below = [j for j in self.rows_done if j < i]
        above = [j for j in self.rows_done if j > i]
        return [self.comm_sizes[j] for j in ([max(below)] if below else []) + ([min(above)] if above else [])]

    # -- what was done ------------------------------------------------------------------------------
    def spent(self):
        """Benchmarking time so far (µs): per-call time × timed calls, summed over the measured pairs."""
        return self._spent

    def summary(self):
        measured = set(self.candidates)
        pairs = [key for key in self.results if key[2] in measured]
        return {
            "strategy": {"behind": self.strategy.behind, "tolerance": self.strategy.tolerance,
                         "cheap": self.strategy.cheap, "hopeless": self.strategy.hopeless,
                         "probe": self.strategy.probe, "default": self.default in measured},
            "points_measured": len({(c, m) for c, m, _ in pairs}),
            "points": len(self.comm_sizes) * len(self.msg_sizes),
            "pairs_measured": len(pairs),
            "pairs_skipped": sum(len(self.candidates) * (len(self.msg_sizes) if m == "*" else 1) if k is None
                                 else (1 if k in measured and (c, m, k) not in self.results else 0)
                                 for c, m, k, _ in self.skips),
            "comm_sizes_measured": [self.comm_sizes[i] for i in sorted(self.rows_done)],
            "comm_sizes_skipped": [self.comm_sizes[i] for i in sorted(self.rows_skipped)],
            "benchmarking_time_us": round(self.spent(), 3),
        }


def _own_trend(history, m):
    """The time at m extrapolated log-log from the last two (size, time) of `history`, the slope clamped
    to [0, 1] (flat latency to linear bandwidth); flat from a single measurement."""
    size, last = history[-1]
    slope = 0.0
    if len(history) >= 2:
        size0, first = history[-2]
        slope = min(1.0, max(0.0, math.log(last / first) / (_log(size) - _log(size0))))
    return last * math.exp(slope * (_log(m) - _log(size)))


def _log(size):
    return math.log(max(size, 0.5))   # a 0-byte message sits just left of 1 byte, as in the decision map


class FullSweep(AdaptivePlan):
    """Every method at every point, communicator sizes in order: the sweep `measure` does without
    --adaptive, as a plan (what a replay without --adaptive runs)."""

    def __init__(self, comm_sizes, msg_sizes, methods):
        super().__init__(comm_sizes, msg_sizes, methods)
        self._order = list(self.comm_sizes)
        self.skips = []

    def next_row(self):
        return self._order.pop(0) if self._order else None

    def point(self, c, m):
        self._chosen[(c, m)] = ([self.default] if self.default is not None else []) + list(self.methods)
        return self._chosen[(c, m)]
