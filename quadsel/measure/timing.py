"""The SKaMPI-style timing loop: warm-up, a barrier before every timed call, time of a call taken over
all ranks (see `resolve_timing`: the span on a shared clock when all ranks share one, else the maximum
of the ranks' own durations), repeat until the 95 % confidence interval of the mean is within a relative precision (model-based
paper §6: 95 % CI, precision 0.025), or a repetition / time budget is spent.

`time_methods` times several methods at one point *interleaved*: each pass visits the still-active
methods in a shuffled order for a short batch, so a slow drift of the machine hits all methods alike.
It is the reusable core (`quadsel measure` now, `quadsel verify` later).
"""

import functools
import math
import socket
import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ..errors import QuadselError


from .grid import TIMINGS

BOOT_ID = "/proc/sys/kernel/random/boot_id"


def clock_domain(processor_name=None, boot_id_path=BOOT_ID):
    """What identifies the CLOCK_MONOTONIC this process reads: its host name and the running kernel's
    boot id (Linux). Two processes with the same domain read the same monotonic clock; host names alone
    can repeat across machines (containers), the boot id does not."""
    name = processor_name or socket.gethostname()
    try:
        with open(boot_id_path) as handle:
            boot = handle.read().strip()
    except OSError:
        boot = ""
    return f"{name}/{boot}" if boot else name


def resolve_timing(requested, domains, wtime_is_global=False, offsets=False):
    """(mode, reason): the timing a run uses, from `--timing` and the clock domains of all ranks.

    `auto` is `span` when every rank reads the same clock (one host): latest end - earliest start on that
    clock is the time of the collective call, and it is not fooled by ranks leaving the barrier at
    different moments (a late rank that finds its data already there would time almost nothing). With
    ranks on several hosts the clocks are not synchronised, so `auto` is `local`: each rank's own
    duration, maximum over ranks. MPI_WTIME_IS_GLOBAL does not change that: the standard promises no
    accuracy for it, and Open MPI and MPICH report false anyway. Forcing `span` across hosts is an error.
    offsets=True (quadsel measure): across hosts `auto` is `offset`, span on clocks moved onto rank 0's by
    SKaMPI's clock offsets, every call started at a common time (clocksync.py); `offset` on one host is `span`.
    """
    if requested not in TIMINGS:
        raise ValueError(f"unknown timing {requested!r} (known: {', '.join(TIMINGS)})")
    hosts = len(set(domains))
    ranks = len(domains)
    if requested == "span" and hosts > 1:
        raise QuadselError(f"--timing span needs all ranks on one host (they are on {hosts}): it compares "
                           "clock readings across ranks")
    if requested == "offset" and not offsets:
        raise QuadselError("--timing offset is measure's (clock offsets across hosts)")
    if requested == "offset" and hosts <= 1:
        return "span", f"--timing offset: all {ranks} ranks on one host, which has one CLOCK_MONOTONIC: span"
    if requested != "auto":
        return requested, f"--timing {requested}"
    if hosts <= 1:
        return "span", f"auto: all {ranks} ranks on one host, which has one CLOCK_MONOTONIC"
    if offsets:
        return "offset", (f"auto: ranks on {hosts} hosts: span on clocks corrected by SKaMPI clock offsets, "
                          "every call started at a common time")
    note = " (MPI_WTIME_IS_GLOBAL is set, but without a stated accuracy)" if wtime_is_global else ""
    return "local", f"auto: ranks on {hosts} hosts, whose clocks are not synchronised{note}"


@functools.lru_cache(maxsize=4096)
def t_quantile(confidence, dof):
    """Two-sided Student-t quantile of a `confidence` interval with `dof` degrees of freedom."""
    from scipy import stats   # lazy: SciPy costs most of the start-up time of every command
    return float(stats.t.ppf(0.5 + confidence / 2, dof))


@dataclass(frozen=True)
class StoppingRule:
    precision: float = 0.025    # half-width of the CI / mean
    confidence: float = 0.95
    min_reps: int = 5           # samples every visit of a point must add (per round)
    max_reps: int = 200         # total samples of one method at one point, all rounds together
    max_time: float = 2.0       # seconds of wall time for one method at one point, all rounds together
    fence: float = 3.0          # drop samples above Q3 + fence*IQR (0: keep all); see `valid`

    def __post_init__(self):
        if not 0 < self.precision < 1:
            raise ValueError("precision must be in (0, 1)")
        if not 0 < self.confidence < 1:
            raise ValueError("confidence must be in (0, 1)")
        if self.min_reps < 2 or self.max_reps < self.min_reps:
            raise ValueError("need 2 <= min_reps <= max_reps")
        if self.max_time <= 0:
            raise ValueError("max_time must be positive")
        if self.fence < 0:
            raise ValueError("fence must be >= 0")

    def valid(self, samples):
        """The samples kept for statistics: all but far-out slow outliers (Tukey's fence Q3 + 3 IQR).

        A rank descheduled for a few ms (more ranks than cores, daemons) adds one huge sample that would
        dominate the mean; timing noise only ever adds time, so only the upper side is fenced.
        SKaMPI likewise reports the number of *valid* repetitions.
        """
        data = np.asarray(samples, dtype=float)
        if self.fence == 0 or len(data) < 4:
            return data
        q1, q3 = np.percentile(data, [25, 75])
        return data[data <= q3 + self.fence * (q3 - q1)]

    def half_width(self, samples):
        """Half-width of the Student-t confidence interval of the mean (inf below 2 samples)."""
        samples = self.valid(samples)
        n = len(samples)
        if n < 2:
            return math.inf
        sd = float(np.std(samples, ddof=1))
        return t_quantile(self.confidence, n - 1) * sd / math.sqrt(n)

    def precise(self, samples):
        """True when the CI of the mean is within `precision` of the mean."""
        kept = self.valid(samples)
        if len(kept) < 2:
            return False
        return self.half_width(kept) <= self.precision * float(np.mean(kept))

    def summarize(self, samples):
        """(mean, sample stddev, number of valid samples) of per-call times."""
        return summarize(self.valid(samples))

    def interval(self, samples):
        """(mean, CI half-width) of the valid samples (half-width inf below 2 samples)."""
        kept = self.valid(samples)
        return (float(np.mean(kept)) if len(kept) else math.inf), self.half_width(kept)


# Adaptive measurement's indifference zone: two methods whose 95 % intervals lie within 15 % of each other (the
# upper end of both at most 1.15 x the lower end of both) are a tie, and stop. Chosen on the replayed sweeps with
# their measuring noise put back (docs/benchmarks.md, *Measuring strategies*): the same penalty as without it,
# mpich5-bcast's time 32.8 -> 26.3 % of the full sweep. 0 turns it off (benchmarks/adaptive.py --indifference).
INDIFFERENCE = 0.15


def ranking_settled(intervals, candidates=None):
    """The methods at one point whose place in the decision is clear (adaptive measurement).

    `intervals` maps every method at the point to (mean, CI half-width). The leader is the candidate
    with the lowest mean (`candidates`: the methods a decision may choose; default all). Another
    method is settled once its interval lies wholly above the leader's (it cannot be the best), or once both
    intervals lie within INDIFFERENCE of each other (a tie: whichever the decision takes loses little; without it
    near-ties within the noise run to the full precision or the caps); the leader is settled once every other
    candidate is. A method not among the candidates (the library's `default`) is settled once its interval is
    clear of the leader's on either side, or tied with it.
    """
    names = list(intervals)
    candidates = names if candidates is None else [n for n in names if n in candidates]
    if not candidates:
        return set(names)
    leader = min(candidates, key=lambda n: intervals[n][0])
    top = intervals[leader][0] + intervals[leader][1]
    bottom = intervals[leader][0] - intervals[leader][1]
    settled = set()
    for name in names:
        mean, half = intervals[name]
        if name != leader and mean - half > top:
            settled.add(name)
        elif name not in candidates and mean + half < bottom:
            settled.add(name)
        elif INDIFFERENCE and name != leader and 0 < bottom and 0 < mean - half and max(
                mean + half, top) <= (1 + INDIFFERENCE) * min(mean - half, bottom):
            settled.add(name)
    if all(n in settled for n in candidates if n != leader):
        settled.add(leader)
    return settled


def summarize(samples):
    """(mean, sample stddev, n) of per-call times."""
    n = len(samples)
    mean = float(np.mean(samples))
    sd = float(np.std(samples, ddof=1)) if n > 1 else 0.0
    return mean, sd, n


@dataclass
class Method:
    """One contender at a point: its name, the communicator it runs on, and what to do before its calls."""
    name: object
    comm: object                              # an mpi4py communicator (all ranks of it take part)
    activate: Optional[Callable[[], None]] = None   # e.g. MPICH: write the algorithm cvar
    call: Optional[Callable[[object], None]] = None  # its own call (quadsel's α-tree), else time_methods' `call`


def time_methods(methods, call, rule, rng, warmup=2, batch=5, prior=None, prior_time=None, share=1.0, clock=None,
                 reduce_max=None, span=False, heartbeat=None, candidates=None, decisive=False, sync=None):
    """Time `call(comm)` for every method at one point, interleaved; returns {name: [µs per call]}.

    Every rank of the methods' communicators must call this with the same arguments (same `rng`
    state): the order of visits and every stopping decision are derived from data all ranks share
    (per-call maxima, all-reduced), so all ranks run the same sequence of collectives.
    `rng` is a random.Random seeded alike on all ranks. `prior` / `prior_time` hold samples and wall
    seconds from earlier rounds ({name: [µs]}, {name: s}); `share` (0..1] is how much of the
    max_reps/max_time budget may be used so far, so that a round does not spend the next rounds' share.
    Returns ({name: all samples in µs, prior ones first}, {name: wall seconds spent in this call}).
    `clock` and `reduce_max(comm, array)` default to MPI_Wtime and an in-place MAX all-reduce.

    span=False: time of a call = max over ranks of (own end - own start), each rank starting when it
    leaves the barrier; a rank that leaves it late can find its data there already, so this
    underestimates, by an amount that depends on the algorithm. span=True: time = latest end - earliest
    start over the ranks, which needs a clock that all ranks share (one host: CLOCK_MONOTONIC); it
    includes how much later than the first rank the others start, about alike for every method.
    `resolve_timing` chooses between them.
    `heartbeat(name)`, if given, is called after every batch (the runner's hang watchdog).
    decisive=True (adaptive measurement) also stops a method once `ranking_settled` says its place in
    the decision is clear (`candidates`: the names a decision may choose; default all), and resumes it
    when that is no longer so (its interval overlaps a new leader's) while its caps allow.
    `sync(comm)` replaces the barrier before every call (measure --sync ring: the paper's ring semi-barrier);
    when it has an `origin` rank, span times a call from that rank's start (the root leaves the ring last).
    """
    if clock is None or reduce_max is None:
        from mpi4py import MPI
        clock = clock or MPI.Wtime
        reduce_max = reduce_max or (lambda comm, array: comm.Allreduce(MPI.IN_PLACE, array, op=MPI.MAX))
    prior = prior or {}
    samples = {m.name: list(prior.get(m.name, [])) for m in methods}
    spent = {m.name: 0.0 for m in methods}     # wall seconds in this call, all-reduced (max)
    added = {m.name: 0 for m in methods}
    rep_cap = max(rule.min_reps, math.ceil(rule.max_reps * share))
    time_cap = rule.max_time * share
    used_before = {m.name: float((prior_time or {}).get(m.name, 0.0)) for m in methods}

    sync = sync or (lambda comm: comm.Barrier())
    origin = getattr(sync, "origin", None)
    for m in methods:   # warm-up: connections, buffers, caches, the algorithm's own setup
        if m.activate:
            m.activate()
        for _ in range(warmup):
            (m.call or call)(m.comm)
        m.comm.Barrier()

    active = [m for m in methods]
    while active:
        order = list(active)
        rng.shuffle(order)
        for m in order:
            if m.activate:
                m.activate()
            n = batch
            local = np.zeros(2 * n + 1)
            this_call = m.call or call
            starts = origin is None or m.comm.Get_rank() == origin
            start = clock()
            for i in range(n):
                sync(m.comm)              # everyone starts together (SKaMPI/IMB "barrier before")
                t0 = clock()
                this_call(m.comm)
                t1 = clock()
                if span:   # max of -start = -(earliest start), or of the origin's start
                    local[i], local[n + i] = t1, (-t0 if starts else -math.inf)
                else:
                    local[i] = t1 - t0
            local[2 * n] = clock() - start
            # time of a call = max over ranks; the wall time too, so all ranks agree on budgets
            reduce_max(m.comm, local)
            times = local[:n] + local[n:2 * n] if span else local[:n]
            samples[m.name].extend((times * 1e6).tolist())
            spent[m.name] += float(local[2 * n])
            added[m.name] += n
            if heartbeat:
                heartbeat(m.name)
        settled = ranking_settled({name: rule.interval(s) for name, s in samples.items()},
                                  candidates) if decisive else ()
        still = []
        # decisive: a method stopped against a leader that has since fallen back takes part again
        for m in (methods if decisive else active):
            s = samples[m.name]
            done = added[m.name] >= rule.min_reps and (
                m.name in settled or rule.precise(s) or len(s) >= rep_cap
                or spent[m.name] + used_before[m.name] >= time_cap)
            if not done:
                still.append(m)
        active = still
    return samples, spent


def wait_quietly(comm, poll=0.002):
    """Barrier that sleeps between polls: on an oversubscribed node a busy-polling idle rank would steal the
    CPU from the ranks being measured (idle ranks, and members once their part is done, wait here)."""
    request = comm.Ibarrier()
    while not request.Test():
        time.sleep(poll)
