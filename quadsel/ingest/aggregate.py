"""Combine repeated measurements of one point (same collective, method, comm size and msg size)."""

import statistics
from dataclasses import replace


def _key(m):
    return (m.collective, m.algorithm, m.segsize, m.comm_size, m.msg_size)


def _order(m):
    # Numeric algorithm ids sort as numbers (2 before 10), names after them.
    algorithm = (0, int(m.algorithm), "") if m.algorithm.isascii() and m.algorithm.isdigit() else (1, 0, m.algorithm)
    return (m.collective, algorithm, m.segsize, m.comm_size, m.msg_size)


def aggregate(measurements):
    """One Measurement per point, sorted by (collective, algorithm, segsize, comm_size, msg_size).

    Repeats get the median time (one disturbed run does not move it), the sample standard deviation
    of the repeated times, and the sum of their repetition counts when every repeat has one.
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
    reps = [m.reps for m in group]
    return replace(
        group[0],
        time=statistics.median(times),
        stddev=statistics.stdev(times),
        reps=None if None in reps else sum(reps),
        source=f"{group[0].source} (+{len(group) - 1} repeats)",
    )
