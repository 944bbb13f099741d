"""`--budget` of adaptive measurement: a time (`90m`, `2h`, `1h30m`, `600s`) or a share of the full
sweep's benchmarking time (`25%`), and the estimate of that full sweep when it was never run.

Benchmarking time is the sum over measured (method, point) pairs of the time per call × the timed
calls (docs/measure.md, *Adaptive measurement*). A replay knows the full sweep's exactly (the recorded
rows); a real run estimates it from what it measured (`estimate_full_cost`).
"""

import math
import re
import statistics
from dataclasses import dataclass
from typing import Optional

from ..errors import QuadselError

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd])", re.IGNORECASE)


@dataclass(frozen=True)
class Budget:
    seconds: Optional[float] = None   # wall time of this run (a replay: modelled benchmarking time)
    share: Optional[float] = None     # of the full sweep's benchmarking time
    text: str = ""

    def spent(self, elapsed_s, spent_us, full_us):
        """Is the budget used up? elapsed_s: seconds counted against a time budget; spent_us and
        full_us: benchmarking time so far and (estimated) of the full sweep."""
        if self.seconds is not None:
            return elapsed_s >= self.seconds
        return full_us > 0 and spent_us >= self.share * full_us

    def to_json(self):
        return {"budget": self.text, "seconds": self.seconds, "share": self.share}


def parse_budget(text):
    """`25%` -> a share; `90m`, `2h`, `1h30m`, `45s`, `1.5h` -> seconds."""
    raw = str(text).strip()
    if raw.endswith("%"):
        try:
            share = float(raw[:-1]) / 100.0
        except ValueError:
            share = math.nan
        if not 0 < share <= 1:
            raise QuadselError(f"bad --budget {text!r}: a share must be in (0 %, 100 %]")
        return Budget(share=share, text=raw)
    parts = _PART.findall(raw)
    if not parts or _PART.sub("", raw).strip():
        raise QuadselError(f"bad --budget {text!r}: expected a time such as 90m, 2h, 1h30m or 600s, "
                           "or a share of the full sweep such as 25%")
    seconds = sum(float(value) * _UNITS[unit.lower()] for value, unit in parts)
    if seconds <= 0:
        raise QuadselError(f"bad --budget {text!r}: must be positive")
    return Budget(seconds=seconds, text=raw)


def full_rule_calls(result, rule, rounds=1):
    """Timed calls the full sweep's stopping rule would spend on a pair measured as `result`: enough for
    the CI to reach the precision (normal approximation), within min/max reps and the time cap."""
    if not result.stddev or result.mean <= 0:
        wanted = rule.min_reps * rounds
    else:
        z = statistics.NormalDist().inv_cdf(0.5 + rule.confidence / 2)
        wanted = math.ceil((z * result.stddev / (rule.precision * result.mean)) ** 2)
    calls = min(max(wanted, rule.min_reps * rounds), rule.max_reps)
    return max(1, min(calls, int(rule.max_time * 1e6 / result.mean)))


def estimate_full_cost(plan, rule, rounds=1):
    """Benchmarking time (µs) the full sweep of `plan`'s grid would take, from what the plan measured.

    Measured pairs: their time × the calls of the full rule. A method not measured at a point of a
    measured row: its last ratio to the best (or its closing trend) × the best's time there, at the calls
    of its nearest measured pair, the best's time extrapolated along the row where the row is unfinished;
    the library default: the best's time. Rows not measured: interpolated linearly in comm size between the measured rows around them, or
    beyond them in proportion to the communicator size. Returns 0.0 before anything is measured.
    """
    calls = [full_rule_calls(r, rule, rounds) for r in plan.results.values()]
    if not calls:
        return 0.0
    typical = statistics.median(calls)
    methods = plan.methods + ([plan.default] if plan.default is not None else [])
    rows = {}
    for c in plan.comm_sizes:
        best = _best_times(plan, c)
        if not best:
            continue
        rows[c] = sum(_pair_cost(plan, rule, rounds, c, m, k, best[m], typical)
                      for m in plan.msg_sizes for k in methods)
    measured = sorted(rows)
    total = 0.0
    for c in plan.comm_sizes:
        if c in rows:
            total += rows[c]
            continue
        below = [r for r in measured if r < c]
        above = [r for r in measured if r > c]
        if below and above:
            a, b = below[-1], above[0]
            w = (c - a) / (b - a)
            total += (1 - w) * rows[a] + w * rows[b]
        else:   # outside the measured rows: in proportion to the communicator size
            nearest = below[-1] if below else above[0]
            total += rows[nearest] * c / nearest
    return total


def _best_times(plan, c):
    """{msg size: time of the best method} along row c, extrapolated (log-log) past its last measured size."""
    known = [(m, plan.results[(c, m, plan.winner(c, m))].mean) for m in plan.msg_sizes
             if plan.winner(c, m) is not None]
    if not known:
        return {}
    out = dict(known)
    for m in plan.msg_sizes:
        if m in out:
            continue
        lower = [(s, t) for s, t in known if s < m] or known[:1]
        if len(lower) >= 2:
            (s0, t0), (s1, t1) = lower[-2], lower[-1]
            slope = (math.log(t1) - math.log(t0)) / (math.log(max(s1, 0.5)) - math.log(max(s0, 0.5)))
            out[m] = t1 * math.exp(max(slope, 0.0) * (math.log(max(m, 0.5)) - math.log(max(s1, 0.5))))
        else:
            out[m] = lower[-1][1]
    return out


def _pair_cost(plan, rule, rounds, c, m, k, best, typical):
    result = plan.results.get((c, m, k))
    if result is not None:
        return result.mean * full_rule_calls(result, rule, rounds)
    ratio, calls = 1.0, typical
    if k != plan.default:
        times = plan.predicted_times(c, m, k)   # the first: k keeps its ratio to the best (or its closing)
        ratio = max(1.0, times[0][0] / plan.predicted_best(c, m)) if times else plan.strategy.behind
        nearest = [plan.results[(c, s, k)] for s in plan.msg_sizes if (c, s, k) in plan.results]
        if nearest:   # its relative noise where it was last measured in this row
            nearest.sort(key=lambda r: abs(math.log(r.mean) - math.log(ratio * best)))
            calls = full_rule_calls(nearest[0], rule, rounds)
    time = ratio * best
    return time * max(1, min(calls, int(rule.max_time * 1e6 / time)))
