"""verify's DECISION (quadsel/verify/verdict.py): followed, worth it, judged on the points it changes (issue 31)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from quadsel.verify import statistics, verdict
from quadsel.verify.follow import PointCheck
from quadsel.verify.speed import _key


def _point(msg, default_rounds, chosen_rounds, chosen=("6", 0)):
    times = {"default": {"mean_us": float(np.mean(default_rounds)), "rounds_us": list(default_rounds)}}
    times[_key(list(chosen))] = {"mean_us": float(np.mean(chosen_rounds)), "rounds_us": list(chosen_rounds)}
    return {"collective": "bcast", "comm": 2, "msg": msg, "default": ["default", 0], "quadsel": list(chosen),
            "candidates": None, "times": times}


def _judge(points, checks=None, why_not=None, min_gain=verdict.MIN_GAIN, failed=None):
    """(decision, reason, rows) of bcast points as verify's run.py judges them."""
    from quadsel.verify import speed
    result = {"collective": "bcast", "points": points}
    rows, summary = speed.summarize(result)
    stats = statistics.annotate({"bcast": result}, rows, {"bcast": summary}, np_=2)
    evidence = verdict.proof(rows, checks, why_not, failed)
    decision, reason = verdict.decide(rows, stats["overall"], evidence, min_gain)
    return decision, reason, rows, evidence


def _followed(points):
    return {"emitted": [PointCheck("bcast", p["comm"], p["msg"], _key(p["quadsel"]),
                                   "follows" if p["quadsel"][0] != "default" else "indistinguishable", [])
                        for p in points]}


ROUNDS = 5


def _issue_example(gain=1.026):
    """Issue 31: 63 points, 53 keep the default; the 10 it changes gain 2.6 % in every round."""
    rng = np.random.default_rng(1)
    points = []
    for i in range(63):
        d = list(10 * (1 + 0.002 * rng.standard_normal(ROUNDS)))
        if i < 10:
            points.append(_point(i, d, [x / gain for x in d]))
        else:
            points.append(_point(i, d, d, chosen=("default", 0)))
    return points


def test_the_gain_is_judged_on_the_points_the_selection_changes():
    # today's code: geometric mean over all 63 points 1.004x with a narrow interval above 1 -> "deploy"
    points = _issue_example()
    decision, reason, rows, _ = _judge(points, _followed(points))
    assert decision == "do not deploy", reason
    assert "gain too small to deploy" in reason and "on the 10 of 63 points it changes" in reason
    assert "1.026x" in reason


def test_a_clear_gain_on_a_followed_file_is_deployed_and_says_how_many_points_it_changes():
    points = _issue_example(gain=1.3)
    decision, reason, _, _ = _judge(points, _followed(points))
    assert decision == "deploy", reason
    assert "10 of 63 points it changes" in reason and "followed at 10 of 10 changed points" in reason


def test_a_gain_whose_interval_reaches_the_minimum_is_not_deployed():
    rng = np.random.default_rng(3)
    points = [_point(i, [10.0] * ROUNDS, list(10 / (1.08 * np.exp(0.08 * rng.standard_normal(ROUNDS)))))
              for i in range(4)]
    decision, reason, _, _ = _judge(points, _followed(points))
    assert decision == "do not deploy" and "gain not shown above --min-gain 1.05" in reason, reason


@settings(max_examples=60, deadline=None)
@given(st.floats(1.0, 1.5), st.floats(0.0, 0.2), st.integers(0, 2 ** 31 - 1), st.floats(1.0, 1.3))
def test_never_deploy_when_the_interval_includes_the_minimum_gain(gain, spread, seed, min_gain):
    rng = np.random.default_rng(seed)
    points = [_point(i, [10.0] * 3, list(10 / (gain * np.exp(spread * rng.standard_normal(3))))) for i in range(3)]
    decision, reason, rows, _ = _judge(points, _followed(points), min_gain=min_gain)
    o = statistics.overall_statistics({"bcast": statistics.collective_statistics(points, _key)})
    if decision == "deploy":
        assert o["geomean_low"] > min_gain, reason


def test_a_file_the_library_does_not_follow_is_never_deployed():
    points = _issue_example(gain=1.3)
    checks = _followed(points)
    checks["emitted"][3] = PointCheck("bcast", 2, 3, "6", "differs", ["1"])
    decision, reason, rows, evidence = _judge(points, checks)
    assert decision == "do not deploy" and "does not follow the file at 1 point(s) (bcast comm 2 msg 3)" in reason
    assert verdict.exit_status(evidence, rows) == 3          # --fail-on-regression
    assert verdict.exit_status(_judge(points, _followed(points))[3], rows) == 0


def test_without_the_follow_proof_the_decision_is_unproven():
    points = _issue_example(gain=1.3)
    decision, reason, _, evidence = _judge(points, None, "--no-check-rules")
    assert decision == "unproven" and "did not run (--no-check-rules)" in reason
    assert evidence["ran"] is False and evidence["collectives_without_proof"] == ["bcast"]
    decision, reason, _, _ = _judge(points, {}, failed={"emitted from the trees": "fingerprint launch failed"})
    assert decision == "unproven" and "did not complete" in reason and "fingerprint launch failed" in reason
    indistinct = {"emitted": [PointCheck("bcast", 2, p["msg"], "6", "indistinguishable", []) for p in points]}
    decision, reason, _, _ = _judge(points, indistinct)
    assert decision == "unproven" and "nowhere for bcast" in reason and "10 indistinguishable" in reason


def test_slower_points_and_nothing_changed():
    points = [_point(0, [10.0, 10.1, 9.9], [20.0, 20.2, 19.8]), _point(1, [10.0, 10.1, 9.9], [5.0, 5.05, 4.95])]
    decision, reason, rows, evidence = _judge(points, _followed(points))
    assert decision == "do not deploy" and "1 point(s) significantly slower" in reason
    # the advice names a JSON the user can have (issue 41: verify without --json advised `--verified THIS.json`)
    assert reason.endswith("quadsel codegen --verified RESULT.json TREE, RESULT.json being this run's `verify --json "
                           "-o RESULT.json`") and "THIS.json" not in reason
    assert verdict.exit_status(evidence, rows) == 3
    same = [_point(0, [10.0, 11.0], [10.0, 11.0], chosen=("default", 0))]
    decision, reason, _, _ = _judge(same, _followed(same))
    assert decision == "do not deploy" and "keeps the library default at all 1 points" in reason


def test_the_lines_say_how_many_points_the_selection_changes():
    points = _issue_example(gain=1.3)
    from quadsel.verify import speed
    result = {"collective": "bcast", "points": points}
    rows, summary = speed.summarize(result)
    stats = statistics.annotate({"bcast": result}, rows, {"bcast": summary}, np_=2)
    stats["decision"], stats["reason"] = "deploy", "x"
    text = "\n".join(statistics.format_lines(stats, {"bcast": summary}))
    assert "bcast: changes 10 of 63 points; on them geometric-mean speed-up 1.300x" in text
    assert "overall, on the 10 of 63 points the selection changes" in text
    assert math.isclose(summary["geomean_speedup"], 1.3, rel_tol=1e-3)


def test_a_gain_timed_on_a_host_busier_than_the_job_is_not_deployed_unless_asked():
    """Issue 41: under a load of 6 to 8, one tune deployed gather at 1.129x and the same command elsewhere nothing."""
    from quadsel.verify import speed
    points = _issue_example(gain=1.3)
    rows, summary = speed.summarize({"collective": "bcast", "points": points})
    stats = statistics.annotate({"bcast": {"collective": "bcast", "points": points}}, rows, {"bcast": summary}, np_=2)
    evidence = verdict.proof(rows, _followed(points), None, None)
    busy = {"own_ranks": 2, "samples": 40, "extra_mean": 4.2, "extra_max": 7, "seconds": 4.0}
    idle = dict(busy, extra_mean=0.1, extra_max=1)
    decision, reason = verdict.decide(rows, stats["overall"], evidence, interference=busy)
    assert decision == "unproven" and "busier than the job itself" in reason and "--busy-ok" in reason
    assert "4.2 other runnable tasks on average beside the job's 2 ranks" in reason
    assert verdict.decide(rows, stats["overall"], evidence, interference=busy, busy_ok=True)[0] == "deploy"
    assert verdict.decide(rows, stats["overall"], evidence, interference=idle)[0] == "deploy"


def test_more_rounds_are_advised_with_the_option_that_gives_them_and_only_where_they_can_help():
    points = _issue_example(gain=1.12)
    for p in points[:10]:    # a gain of about 1.08x whose interval reaches below the minimum
        p["times"][_key(["6", 0])]["rounds_us"][0] *= 1.2
    from quadsel.verify import speed
    rows, summary = speed.summarize({"collective": "bcast", "points": points})
    stats = statistics.annotate({"bcast": {"collective": "bcast", "points": points}}, rows, {"bcast": summary}, np_=2)
    proven = verdict.proof(rows, _followed(points), None, None)
    unproven = verdict.proof(rows, None, "under mpiexec", None)
    said = verdict.decide(rows, stats["overall"], proven, rounds_option="--verify-rounds")[1]
    assert "gain not shown" in said and "more --verify-rounds narrow it" in said
    assert "the follow check proves nothing for it either" in verdict.decide(rows, stats["overall"], unproven)[1]
