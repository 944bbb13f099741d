"""Combine repeated measurements of one point (same collective, method, comm size, msg size and layout)."""

import math
import statistics
from dataclasses import replace


def _key(m):
    # the layout is part of the point: two layouts of one comm size are never pooled
    return (m.collective, m.algorithm, m.segsize, m.comm_size, m.msg_size, m.nodes, m.ppn)


def _order(m):
    # Numeric algorithm ids sort as numbers (2 before 10), names after them.
    algorithm = (0, int(m.algorithm), "") if m.algorithm.isascii() and m.algorithm.isdigit() else (1, 0, m.algorithm)
    return (m.collective, algorithm, m.segsize, m.comm_size, m.msg_size, m.ppn or 0)


def aggregate(measurements):
    """One Measurement per point, sorted by (collective, algorithm, segsize, comm_size, msg_size).

    Repeats get the median time (one disturbed run does not move it) and the sum of their repetition
    counts when every repeat has one; their standard deviation is then the one that gives the pooled point
    its standard error (stddev / sqrt(reps), what decision_map reads): that of the mean of the repeats, from
    their disagreement (sample sd / sqrt(n)) or from their own standard errors, whichever is larger -- two
    runs that disagree are no more certain than their disagreement, however many calls each made. Without
    every repetition count, the sample standard deviation of the repeated times.
    """
    groups = {}
    for m in measurements:
        groups.setdefault(_key(m), []).append(m)
    combined = [_combine(group) for group in groups.values()]
    return sorted(combined, key=_order)


def _combine(group):
    if len(group) == 1:
        return group[0]
    times = [m.time for m in group]
    stddev, reps = pooled_spread(times, [m.stddev for m in group], [m.reps for m in group])
    return replace(group[0], time=statistics.median(times), stddev=stddev, reps=reps,
                   source=f"{group[0].source} (+{len(group) - 1} repeats)")


def pooled_spread(times, stddevs, reps):
    """(stddev, reps) of two or more measurements of one point pooled (aggregate's rule): reps summed when
    every one is known, and the stddev that makes stddev / sqrt(reps) the larger of the standard error of the
    measurements' mean from their disagreement and from their own standard errors; without every repetition
    count, the sample standard deviation of the times (and reps unknown)."""
    spread = statistics.stdev(times)
    total = None if None in reps else sum(reps)
    if not total:
        return spread, total
    n = len(times)
    between = spread / math.sqrt(n)
    within = math.sqrt(sum((s or 0.0) ** 2 / r for s, r in zip(stddevs, reps) if r)) / n
    return max(between, within) * math.sqrt(total), total
