"""Which collectives `quadsel tune` deploys, from verify documents (no MPI)."""

import math

from hypothesis import given, settings, strategies as st

from quadsel.tune.verdict import MIN_GAIN, judge, overall


def _doc(rows, follow_status=("follows",), failed=None, collective="bcast"):
    points = [{"collective": collective, "comm_size": 2, "msg_size": 8 << i, "quadsel": "6:0", "verdict": verdict,
               "log_ratios": ratios} for i, (verdict, ratios) in enumerate(rows)]
    follow = None if follow_status is None else {
        "points": [{"collective": collective, "comm": 2, "msg": 8, "status": s} for s in follow_status],
        "failed": failed or {}}
    return {"summary": {collective: {}}, "points": points, "rules_followed": follow}


FAST = [0.2, 0.21, 0.19, 0.2, 0.22]     # ln(default / quadsel) per round: about 1.22x, tight
NOISE = [0.3, -0.3, 0.25, -0.2, 0.0]


def test_a_clear_gain_that_the_library_follows_is_deployed():
    j = judge(_doc([("faster", FAST), ("faster", FAST)]))["bcast"]
    assert j.deploy and j.low > 1 and j.speedup >= MIN_GAIN and j.changed == 2


def test_a_file_the_library_does_not_follow_is_never_deployed():
    j = judge(_doc([("faster", FAST)], follow_status=("follows", "differs")))["bcast"]
    assert not j.deploy and "does not follow" in j.why


def test_an_unproven_file_is_never_deployed():
    assert not judge(_doc([("faster", FAST)], follow_status=None))["bcast"].deploy
    assert not judge(_doc([("faster", FAST)], failed={"f": "aborted"}))["bcast"].deploy


def test_points_that_keep_the_default_do_not_dilute_the_gain():
    # 1 changed point at 1.22x and 9 that keep the default: judged on the changed point alone
    rows = [("faster", FAST)] + [("default", [])] * 9
    j = judge(_doc(rows))["bcast"]
    assert j.changed == 1 and j.points == 10 and math.isclose(j.speedup, math.exp(sum(FAST) / 5))


def test_slower_noise_and_small_gains_are_not_deployed():
    assert "slower" in judge(_doc([("slower", [-0.2] * 5), ("faster", FAST)]))["bcast"].why
    assert "noise" in judge(_doc([("indistinguishable", NOISE)]))["bcast"].why
    small = [0.01, 0.011, 0.009, 0.01, 0.0105]     # 1.01x, tight: beyond the noise but below the minimum gain
    j = judge(_doc([("faster", small)]))["bcast"]
    assert not j.deploy and "below" in j.why
    assert judge(_doc([("faster", small)]), min_gain=1.005)["bcast"].deploy


def test_a_tree_that_keeps_the_default_everywhere_is_kept_at_the_default():
    j = judge(_doc([("default", [])] * 3))["bcast"]
    assert not j.deploy and j.changed == 0 and "keeps the library default" in j.why


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["faster", "slower", "indistinguishable", "default"]),
                          st.lists(st.floats(-1, 1), min_size=2, max_size=6)), min_size=1, max_size=6),
       st.lists(st.sampled_from(["follows", "differs", "indistinguishable", "unchecked"]), max_size=4),
       st.floats(1.0, 1.5))
def test_deploy_means_followed_no_slower_point_and_a_gain_beyond_the_noise(rows, statuses, min_gain):
    rows = [(v, [] if v == "default" else r) for v, r in rows]
    j = judge(_doc(rows, follow_status=tuple(statuses)), min_gain=min_gain)["bcast"]
    if j.deploy:
        assert "differs" not in statuses
        assert all(v != "slower" for v, _ in rows)
        assert j.low > 1.0 and j.speedup >= min_gain and j.changed > 0
        o = overall({"bcast": j})
        assert math.isclose(o["geomean_speedup"], j.speedup)   # one collective: the same number
