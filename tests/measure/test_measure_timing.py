"""The stopping rule and the interleaved timing loop, without MPI (fake communicators and clock)."""

import math
import random

import numpy as np
import pytest
from hypothesis import given, strategies as st

from quadsel.errors import QuadselError
from quadsel.measure.timing import (Method, StoppingRule, clock_domain, ranking_settled, resolve_timing,
                                     summarize, time_methods)


def test_half_width_is_student_t():
    rule = StoppingRule(fence=0)
    samples = [10.0, 12.0, 11.0, 9.0, 13.0]
    sd = np.std(samples, ddof=1)
    # t(0.975, 4) = 2.776
    assert rule.half_width(samples) == pytest.approx(2.7764 * sd / math.sqrt(5), rel=1e-3)
    assert rule.half_width([1.0]) == math.inf


def test_precise_when_interval_within_precision():
    rule = StoppingRule(precision=0.025, fence=0)
    assert rule.precise([100.0, 100.1, 99.9, 100.0, 100.05])
    assert not rule.precise([100.0, 150.0, 60.0, 120.0, 80.0])
    assert not rule.precise([100.0])


def test_fence_drops_only_slow_outliers():
    rule = StoppingRule()
    samples = [10.0, 10.2, 9.9, 10.1, 10.0, 9.8, 10.3, 5000.0]
    kept = rule.valid(samples)
    assert 5000.0 not in kept and len(kept) == 7
    mean, sd, n = rule.summarize(samples)
    assert n == 7 and mean == pytest.approx(10.043, rel=1e-3)
    assert len(StoppingRule(fence=0).valid(samples)) == 8
    assert len(rule.valid([1.0, 1.0, 0.01, 1.0, 1.0])) == 5     # fast samples are kept


@given(st.lists(st.floats(min_value=0.1, max_value=1e6), min_size=2, max_size=50))
def test_summarize_matches_numpy(samples):
    mean, sd, n = summarize(samples)
    assert n == len(samples)
    assert mean == pytest.approx(np.mean(samples))
    assert sd == pytest.approx(np.std(samples, ddof=1), abs=1e-6)


@pytest.mark.parametrize("kwargs", [dict(precision=0), dict(precision=1), dict(confidence=1.5),
                                    dict(min_reps=1), dict(min_reps=10, max_reps=5), dict(max_time=0),
                                    dict(fence=-1)])
def test_rule_rejects_bad_values(kwargs):
    with pytest.raises(ValueError):
        StoppingRule(**kwargs)


class FakeComm:
    """Enough of a communicator for time_methods: Barrier, and calls that take a known time."""

    def __init__(self, name, log):
        self.name, self.log = name, log

    def Barrier(self):
        pass


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _run(costs, rule, noise=None, **kwargs):
    log, clock = [], FakeClock()
    rng_noise = random.Random(1)
    methods = [Method(name, FakeComm(name, log)) for name in costs]

    def call(comm):
        log.append(comm.name)
        clock.now += costs[comm.name] * (1 + (noise * rng_noise.random() if noise else 0))

    samples, spent = time_methods(methods, call, rule, random.Random(7), warmup=1, batch=3, clock=clock,
                                  reduce_max=lambda comm, array: None, **kwargs)
    return samples, spent, log


def test_constant_costs_stop_at_min_reps():
    rule = StoppingRule(min_reps=5, max_reps=100)
    samples, _, log = _run({"a": 1e-6, "b": 5e-6}, rule)
    assert all(len(s) == 6 for s in samples.values())      # two batches of 3 reach min_reps 5
    assert np.mean(samples["a"]) == pytest.approx(1.0) and np.mean(samples["b"]) == pytest.approx(5.0)


def test_methods_are_interleaved_in_shuffled_order():
    rule = StoppingRule(min_reps=30, max_reps=30)
    _, _, log = _run({"a": 1e-6, "b": 1e-6, "c": 1e-6}, rule)
    timed = log[3:]                                      # after one warm-up call each
    visits = [timed[i] for i in range(0, len(timed), 3)]
    assert len(visits) == 30 and set(visits) == {"a", "b", "c"}
    firsts = [tuple(visits[i:i + 3]) for i in range(0, 30, 3)]
    assert len(set(firsts)) > 1                          # the order of a pass changes between passes
    assert all(sorted(p) == ["a", "b", "c"] for p in firsts)


def test_noisy_method_runs_until_max_reps():
    rule = StoppingRule(min_reps=5, max_reps=40, precision=0.01, fence=0)
    samples, _, _ = _run({"quiet": 1e-6, "noisy": 1e-6}, rule, noise=None)
    assert len(samples["quiet"]) == 6
    samples, _, _ = _run({"noisy": 1e-6}, rule, noise=5.0)
    assert 40 <= len(samples["noisy"]) < 43


def test_prior_rounds_and_share():
    rule = StoppingRule(min_reps=5, max_reps=40, precision=0.001, fence=0)
    prior = {"x": [1.0] * 10 + [2.0] * 10}
    samples, _, _ = _run({"x": 1e-6}, rule, noise=1.0, prior=prior, share=0.5)
    assert samples["x"][:20] == prior["x"]
    assert 20 < len(samples["x"]) <= 26                  # the half share of 40 was mostly spent already


def test_time_budget_stops_a_slow_method():
    rule = StoppingRule(min_reps=5, max_reps=10_000, precision=1e-4, max_time=1.0, fence=0)
    samples, spent, _ = _run({"slow": 0.05}, rule, noise=1.0)
    assert len(samples["slow"]) < 40


def test_watchdog_aborts_only_after_the_timeout():
    import io
    from quadsel.measure.watchdog import Watchdog
    clock, aborted, stream = FakeClock(), [], io.StringIO()
    dog = Watchdog(10.0, lambda: aborted.append(True), stream=stream, clock=clock)
    dog.beat("comm size 4, message size 1024")
    clock.now += 9.0
    assert not dog.check() and not aborted
    dog.beat()
    clock.now += 10.5
    assert dog.check() and aborted == [True]
    assert "comm size 4, message size 1024" in stream.getvalue()


def test_heartbeat_after_every_batch():
    beats = []
    log, clock = [], FakeClock()
    methods = [Method(name, FakeComm(name, log)) for name in "ab"]

    def call(comm):
        clock.now += 1e-6

    time_methods(methods, call, StoppingRule(min_reps=6, max_reps=6), random.Random(0), warmup=0, batch=3,
                 clock=clock, reduce_max=lambda comm, array: None, heartbeat=beats.append)
    assert sorted(beats) == ["a", "a", "b", "b"]


# -- which timing a run uses (--timing auto|local|span) ---------------------------------------------------

def test_auto_timing_is_span_on_one_host():
    mode, reason = resolve_timing("auto", ["vm/b44"] * 8)
    assert mode == "span" and "one host" in reason
    assert resolve_timing("auto", ["vm/b44"])[0] == "span"


def test_auto_timing_is_local_across_hosts_even_with_a_global_wtime():
    for wtime_is_global in (False, True):
        mode, reason = resolve_timing("auto", ["a/1", "a/1", "b/2", "b/2"], wtime_is_global)
        assert mode == "local" and "2 hosts" in reason
    assert "MPI_WTIME_IS_GLOBAL" in resolve_timing("auto", ["a", "b"], True)[1]


def test_forced_timing_is_kept_and_span_refused_across_hosts():
    assert resolve_timing("local", ["vm"] * 4) == ("local", "--timing local")
    assert resolve_timing("span", ["vm"] * 4) == ("span", "--timing span")
    assert resolve_timing("local", ["a", "b"])[0] == "local"
    with pytest.raises(QuadselError, match="one host"):
        resolve_timing("span", ["a", "b"])
    with pytest.raises(ValueError):
        resolve_timing("max", ["vm"])


def test_same_host_name_on_two_kernels_is_two_clocks(tmp_path):
    boot_a, boot_b = tmp_path / "a", tmp_path / "b"
    boot_a.write_text("1111\n")
    boot_b.write_text("2222\n")
    a, b = clock_domain("node", str(boot_a)), clock_domain("node", str(boot_b))
    assert a == "node/1111" and a != b
    assert resolve_timing("auto", [a, b])[0] == "local"       # e.g. containers named alike on two machines
    assert clock_domain("node", str(tmp_path / "missing")) == "node"


# -- the decision-aware stopping of adaptive measurement -------------------------------------------
def test_ranking_settled_needs_disjoint_intervals():
    # leader a; b clearly slower; c overlaps a: only b is settled, a waits for c
    assert ranking_settled({"a": (10, 1), "b": (20, 2), "c": (11.5, 1)}) == {"b"}
    # once c is clear of a too, the leader is settled as well
    assert ranking_settled({"a": (10, 1), "b": (20, 2), "c": (12.5, 1)}) == {"a", "b", "c"}
    # a single candidate is settled at once; an infinite interval never separates
    assert ranking_settled({"a": (10, math.inf)}) == {"a"}
    assert ranking_settled({"a": (10, 1), "b": (30, math.inf)}) == set()


def test_ranking_settled_ties_within_the_indifference_zone():
    # a (9.8-10.2) and c (10.3-10.7): overlapping, but both within 15 % of each other: a tie, all settled
    assert ranking_settled({"a": (10, 0.2), "c": (10.5, 0.2)}) == {"a", "c"}
    # wide intervals are no tie (9-11 and 10-13: 13 > 1.15 x 9)
    assert ranking_settled({"a": (10, 1), "c": (11.5, 1.5)}) == set()


def test_ranking_settled_default_is_not_a_candidate():
    # the library default faster than every candidate does not lead; it is settled once clear of the leader
    intervals = {"default": (5, 0.5), "a": (10, 1), "b": (20, 1)}
    assert ranking_settled(intervals, candidates=["a", "b"]) == {"default", "a", "b"}
    assert ranking_settled({"default": (10.5, 1), "a": (10, 1)}, candidates=["a"]) == {"a"}


def test_decisive_loop_stops_clear_losers_at_min_reps_and_near_ties_once_tied(monkeypatch):
    rule = StoppingRule(min_reps=5, max_reps=60, precision=0.001, fence=0)
    costs = {"fast": 1e-6, "tie": 1e-6, "slow": 3e-6}
    plain, _, _ = _run(costs, rule, noise=0.2)
    decisive, _, _ = _run(costs, rule, noise=0.2, decisive=True)
    assert all(len(s) >= 60 for s in plain.values())          # the precision is out of reach: max_reps
    assert len(decisive["slow"]) == 6                          # separated after the first two batches
    # a tie: both intervals within the indifference zone (15 %) of each other, well before max_reps
    assert 6 < len(decisive["fast"]) < 60 and 6 < len(decisive["tie"]) < 60
    intervals = {k: rule.interval(v) for k, v in decisive.items()}
    tied = [intervals["fast"], intervals["tie"]]
    assert max(m + h for m, h in tied) <= 1.15 * min(m - h for m, h in tied)
    from quadsel.measure import timing
    monkeypatch.setattr(timing, "INDIFFERENCE", 0.0)           # without the zone: within noise, keep measuring
    kept, _, _ = _run(costs, rule, noise=0.2, decisive=True)
    assert len(kept["fast"]) >= 60 and len(kept["tie"]) >= 60 and len(kept["slow"]) == 6
    clear, _, _ = _run({"fast": 1e-6, "slow": 3e-6}, rule, noise=0.2, decisive=True)
    assert len(clear["fast"]) == len(clear["slow"]) == 6      # ranking clear: both stop


def test_decisive_loop_resumes_a_method_stopped_against_a_leader_that_fell_back():
    # "lucky" is fast in its first batch only; "steady" (3 µs) is clearly behind it then and stops;
    # "tie" (2.3 µs) overlaps lucky, so the point goes on, lucky falls back to 3.2 µs, and steady's
    # interval overlaps the leader's again: it must be measured on
    log, clock = [], FakeClock()
    first = {"lucky": [0.5, 0.5, 1.5, 1.0]}                 # warm-up, then the first timed batch
    steady = {"lucky": 3.2, "tie": 2.3, "steady": 3.0}

    def call(comm):
        queue = first.get(comm.name)
        base = queue.pop(0) if queue else steady[comm.name] * (1 + 0.02 * (len(log) % 3 - 1))
        clock.now += base * 1e-6
        log.append(comm.name)

    rule = StoppingRule(min_reps=3, max_reps=60, precision=0.001, fence=0)
    methods = [Method(name, FakeComm(name, log)) for name in ("lucky", "tie", "steady")]
    samples, _ = time_methods(methods, call, rule, random.Random(3), warmup=1, batch=3, clock=clock,
                              reduce_max=lambda comm, array: None, decisive=True)
    timed = [name for name in log[3:] if name == "steady"]
    assert log[3:12].count("steady") == 3 and len(timed) > 3      # stopped after one batch, then resumed
    assert np.mean(samples["tie"]) < np.mean(samples["steady"])
