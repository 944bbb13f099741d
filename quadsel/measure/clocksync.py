"""One time across hosts: SKaMPI's clock-offset method, and a start of every timed call at a common time.

Offsets (`measure_offsets`): world rank 0 ping-pongs with the first rank of every other node group. In one
exchange rank 0 reads its clock (t0), the remote rank answers with its clock reading (r), rank 0 reads its clock
again (t1); r - (t0 + t1) / 2 is the remote clock's offset if the two legs took the same time, wrong by at most
(t1 - t0) / 2 otherwise. The estimate of the exchange with the smallest round trip is kept (min-RTT estimator;
SKaMPI, Worsch/Reussner/Augustin 2002; Hoefler et al. "Accurately measuring collective operations at massive
scale" 2008). The ranks of a node share one CLOCK_MONOTONIC (one kernel), so one offset per host serves them all;
`GlobalClock` subtracts it.

Common start (`CommonStart`): before every timed call, rank 0 of the communicator reads the global clock and
broadcasts T = now + slack; every rank sleeps, then spins, until the global clock reaches T, and the call starts
then. `span` timing on the global clock is then latest end - earliest start over ranks, on every host. The slack
is calibrated per communicator: 2 x the second-slowest of 11 broadcasts of T on the slowest rank (50 µs to
20 ms), so that the broadcast
reaches every rank before T; a rank that gets T late starts late, and the start spread records it.
"""

import os
import time

import numpy as np

EXCHANGES = 100


def measure_offsets(MPI, world, groups, clock=time.perf_counter, exchanges=EXCHANGES):
    """[(offset_s, min_rtt_s)] per node group (node 0: (0, 0)), known on every rank; collective over `world`."""
    from .timing import wait_quietly
    rank = world.Get_rank()
    out = [(0.0, 0.0)] * groups.count
    buf = np.zeros(1)
    if rank == 0:
        for node, leader in enumerate(groups.leaders):
            if node == groups.node:
                continue
            best = (float("inf"), 0.0)
            for _ in range(exchanges):
                t0 = clock()
                world.Send(np.array([t0]), dest=leader, tag=77)
                world.Recv(buf, source=leader, tag=78)
                t1 = clock()
                if t1 - t0 < best[0]:
                    best = (t1 - t0, float(buf[0]) - (t0 + t1) / 2)
            out[node] = (best[1], best[0])
    elif rank in groups.leaders and groups.node != 0:
        for _ in range(exchanges):
            world.Recv(buf, source=0, tag=77)
            world.Send(np.array([clock()]), dest=0, tag=78)
    wait_quietly(world)          # the other ranks sleep meanwhile (oversubscribed nodes)
    return world.bcast(out, root=0)


class GlobalClock:
    """This host's clock moved onto rank 0's: perf_counter() - offset of this rank's node."""

    def __init__(self, offset):
        self.offset = offset

    def __call__(self):
        return time.perf_counter() - self.offset


class CommonStart:
    """The `sync` of time_methods that starts every rank of the communicator at one time of the global clock.
    Records this rank's lateness (start - T, seconds) of every call in `late`."""

    origin = None

    def __init__(self, MPI, clock):
        self.MPI, self.clock = MPI, clock
        self.slack = {}
        self.late = []
        self.buf = np.zeros(1)

    def forget(self):
        """Drop the calibrations (the communicators are freed; every member calls this alike)."""
        self.slack.clear()

    def _calibrate(self, comm):
        took = []
        for _ in range(11):
            comm.Barrier()
            t0 = self.clock()
            comm.Bcast(self.buf, root=0)
            took.append(self.clock() - t0)
        typical = comm.allreduce(sorted(took)[-2], op=self.MPI.MAX)   # the slowest rank's second-slowest
        return min(max(2 * typical, 50e-6), 20e-3)

    def __call__(self, comm):
        key = self.MPI._addressof(comm)
        slack = self.slack.get(key)
        if slack is None:
            slack = self.slack[key] = self._calibrate(comm)
        if comm.Get_rank() == 0:
            self.buf[0] = self.clock() + slack
        comm.Bcast(self.buf, root=0)
        target = float(self.buf[0])
        now = self.clock()
        while now < target:
            if target - now > 100e-6:
                os.sched_yield()     # leave the core to a rank still waiting for T (oversubscribed); a sleep
            now = self.clock()       # would wake up late by a time slice
        self.late.append(now - target)


def lateness_summary(MPI, world, late):
    """Over every timed call of every rank: the median, 90th percentile and maximum of start - T (µs), and
    the share of calls that started more than 10 µs late; collective over `world` (result on rank 0)."""
    values = world.gather(np.asarray(late, dtype=float), root=0)
    if world.Get_rank() != 0:
        return None
    data = np.concatenate([v for v in values if len(v)]) * 1e6 if any(len(v) for v in values) else np.zeros(0)
    if not len(data):
        return {"calls": 0}
    return {"calls": int(len(data)), "median_us": round(float(np.median(data)), 2),
            "p90_us": round(float(np.percentile(data, 90)), 2), "max_us": round(float(data.max()), 2),
            "late_over_10us": round(float(np.mean(data > 10.0)), 4)}


def setup(MPI, world, groups, timing, sync):
    """(CommonStart or None, the metadata's clock_sync or None) of a run: the offsets for --timing offset (one
    clock per host otherwise: offset 0), the common start's state for --sync start."""
    if timing != "offset" and sync != "start":
        return None, None
    offsets = measure_offsets(MPI, world, groups) if timing == "offset" else [(0.0, 0.0)] * groups.count
    start = CommonStart(MPI, GlobalClock(offsets[groups.node][0]))
    if timing != "offset":
        return start, None
    return start, {"method": "SKaMPI ping-pong with each host's first rank, min-RTT estimator", "exchanges": EXCHANGES,
                   "hosts": [{"host": h, "offset_us": round(o * 1e6, 3), "min_rtt_us": round(r * 1e6, 3)}
                             for h, (o, r) in zip(groups.hostnames, offsets)]}


def finish(MPI, world, groups, start, clock_sync, started_at_common_time):
    """Add to clock_sync (on rank 0) the offsets measured again on the corrected clocks after the run (drift and
    estimator error) and, with --sync start, how late the starts were; collective over `world`."""
    residual = measure_offsets(MPI, world, groups, clock=start.clock)
    starts = lateness_summary(MPI, world, start.late) if started_at_common_time else None
    if world.Get_rank() != 0:
        return
    for entry, (o, r) in zip(clock_sync["hosts"], residual):
        entry.update(residual_offset_us_at_end=round(o * 1e6, 3), min_rtt_us_at_end=round(r * 1e6, 3))
    if starts is not None:
        clock_sync["start_minus_common_time"] = starts
