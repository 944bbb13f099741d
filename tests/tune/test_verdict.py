"""Which collectives `quadsel tune` deploys: verify's decision per collective (no MPI)."""

import math

import numpy as np
from hypothesis import given, settings, strategies as st

from quadsel.tune.verdict import MIN_GAIN, judge, overall
from quadsel.verify.statistics import collective_statistics, interval


def _doc(rows, followed="follows", ran=True, failed=None, collective="bcast"):
    """A verify document of one collective: rows (verdict, per-round log ratios)."""
    points, series = [], []
    for i, (verdict, ratios) in enumerate(rows):
        points.append({"collective": collective, "comm_size": 2, "msg_size": 8 << i, "quadsel": "6:0",
                       "verdict": verdict, "log_ratios": ratios, "followed": followed if ran else None})
        if verdict != "default":
            series.append(ratios)
    rounds = min((len(s) for s in series), default=0)
    if rounds:
        mean, _, _, se, dof = interval(np.array([s[:rounds] for s in series]).mean(axis=0))
    else:
        mean, se, dof = 0.0, 0.0, math.inf
    differs = [{"collective": collective, "comm_size": 2, "msg_size": 8} for _ in range(followed == "differs")]
    proof = {"ran": ran, "why_not": None if ran else "--no-check-rules", "failed": failed or {}, "differs": differs,
             "at_changed_points": {}, "collectives_without_proof":
                 [collective] if (series and (not ran or followed != "follows")) else []}
    finite = lambda x: x if math.isfinite(x) else None  # noqa: E731 (verify writes JSON: null for infinity)
    return {"summary": {collective: {"log_mean": finite(mean), "log_se": finite(se), "dof": finite(dof)}}, "points": points,
            "statistics": {"proof": proof}}


FAST = [0.2, 0.21, 0.19, 0.2, 0.22]     # ln(default / quadsel) per round: about 1.22x, tight
NOISE = [0.3, -0.3, 0.25, -0.2, 0.0]


def test_a_clear_gain_that_the_library_follows_is_deployed():
    j = judge(_doc([("faster", FAST), ("faster", FAST)]))["bcast"]
    assert j.deploy and j.decision == "deploy" and j.low > MIN_GAIN and j.changed == 2


def test_a_file_the_library_does_not_follow_is_never_deployed():
    j = judge(_doc([("faster", FAST)], followed="differs"))["bcast"]
    assert not j.deploy and "does not follow" in j.why


def test_an_unproven_file_is_never_deployed():
    assert judge(_doc([("faster", FAST)], ran=False))["bcast"].decision == "unproven"
    assert judge(_doc([("faster", FAST)], failed={"f": "aborted"}))["bcast"].decision == "unproven"
    assert judge(_doc([("faster", FAST)], followed="indistinguishable"))["bcast"].decision == "unproven"


def test_points_that_keep_the_default_do_not_dilute_the_gain():
    rows = [("faster", FAST)] + [("default", [])] * 9
    j = judge(_doc(rows))["bcast"]
    assert j.changed == 1 and j.points == 10 and math.isclose(j.speedup, math.exp(sum(FAST) / 5))


def test_slower_noise_and_small_gains_are_not_deployed():
    why = judge(_doc([("slower", [-0.2] * 5), ("faster", FAST)]))["bcast"].why
    assert "slower" in why and "prune" not in why     # tune has pruned already: no advice to prune again
    assert not judge(_doc([("indistinguishable", NOISE)]))["bcast"].deploy
    small = [0.03, 0.031, 0.029, 0.03, 0.0305]     # 1.03x, tight: beyond the noise but below verify's minimum
    j = judge(_doc([("faster", small)]))["bcast"]
    assert not j.deploy and "too small" in j.why
    assert judge(_doc([("faster", small)]), min_gain=1.01)["bcast"].deploy


def test_tune_deploys_exactly_what_verify_would_deploy_for_the_collective():
    # the same document through verify's own decision gives the same word
    from quadsel.verify.statistics import overall_statistics
    from quadsel.verify.verdict import decide
    doc = _doc([("faster", FAST), ("default", [])])
    s = doc["summary"]["bcast"]
    stats = {"points": 1, "all_points": 2, "log_mean": s["log_mean"], "log_se": s["log_se"], "dof": s["dof"]}
    proof = dict(doc["statistics"]["proof"], at_changed_points={"follows": 1})
    assert decide(doc["points"], overall_statistics({"bcast": stats}), proof)[0] == judge(doc)["bcast"].decision


def test_a_tree_that_keeps_the_default_everywhere_is_kept_at_the_default():
    j = judge(_doc([("default", [])] * 3))["bcast"]
    assert not j.deploy and j.changed == 0 and "keeps the library default" in j.why


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["faster", "slower", "indistinguishable", "default"]),
                          st.lists(st.floats(-1, 1), min_size=2, max_size=6)), min_size=1, max_size=6),
       st.sampled_from(["follows", "differs", "indistinguishable"]), st.floats(1.0, 1.5))
def test_deploy_means_followed_no_slower_point_and_a_gain_beyond_the_minimum(rows, followed, min_gain):
    rows = [(v, [] if v == "default" else r) for v, r in rows]
    j = judge(_doc(rows, followed=followed), min_gain=min_gain)["bcast"]
    if j.deploy:
        assert followed == "follows" and all(v != "slower" for v, _ in rows)
        assert j.low > min_gain and j.speedup >= min_gain and j.changed > 0
        o = overall({"bcast": j})
        assert math.isclose(o["geomean_speedup"], j.speedup)   # one collective: the same number


def test_collective_statistics_are_what_tune_reads():
    point = {"default": ["1", 0], "quadsel": ["6", 0],
             "times": {"1:0": {"rounds_us": [2.0, 2.0, 2.2]}, "6:0": {"rounds_us": [1.0, 1.1, 1.0]}}}
    stats = collective_statistics([point], lambda arm: f"{arm[0]}:{arm[1]}")
    assert {"log_mean", "log_se", "dof"} <= set(stats)


def test_verify_documents_are_strict_json_when_nothing_changes():
    # a collective whose selection keeps the default everywhere has an infinite dof: verify writes null there, and
    # the strict reader of `codegen --verified` (quadsel/schemas.py) and tune read the document back
    import json
    from quadsel.verify.speed import _key
    from quadsel.verify.statistics import annotate
    arm = ["default", 0]
    point = {"comm": 2, "msg": 8, "default": arm, "quadsel": arm,
             "times": {_key(arm): {"mean_us": 1.0, "rounds_us": [1.0, 1.0]}}}
    rows = [{"collective": "bcast", "comm_size": 2, "msg_size": 8, "quadsel": "default", "speedup": 1.0}]
    summaries = {"bcast": {}}
    annotate({"bcast": {"points": [point]}}, rows, summaries)
    json.dumps({"summary": summaries, "points": rows}, allow_nan=False)
    assert summaries["bcast"]["dof"] is None and judge({"summary": summaries, "points": [
        dict(rows[0], verdict="default")]})["bcast"].changed == 0


def _two(first, second):
    """One verify document of two collectives, from two of one collective each."""
    doc = {"summary": {**first["summary"], **second["summary"]}, "points": first["points"] + second["points"],
           "statistics": {"proof": dict(first["statistics"]["proof"], differs=first["statistics"]["proof"]["differs"]
                                        + second["statistics"]["proof"]["differs"])}}
    return doc


def test_a_collective_pruning_left_as_it_was_keeps_the_first_verify_and_a_pruned_one_takes_the_second():
    """tune verifies again only what pruning changed (tune/run.py): each collective is judged on its last verify."""
    from quadsel.tune.verdict import final_document, judge_rounds
    first = _two(_doc([("faster", FAST)], collective="bcast"),
                 _doc([("faster", FAST), ("slower", [-0.3] * 5)], collective="reduce"))
    second = _doc([("faster", FAST), ("default", [])], collective="reduce")     # reduce's slower point handed back
    judged = judge_rounds(first, second)
    assert judged["bcast"].deploy and judged["bcast"].points == 1               # the first verify's
    assert judged["reduce"].deploy and judged["reduce"].changed == 1            # the second's: no slower point left
    assert not judge(first)["reduce"].deploy
    last = final_document(first, second)
    assert [(p["collective"], p["verdict"]) for p in last["points"]] == [("bcast", "faster"), ("reduce", "faster"),
                                                                        ("reduce", "default")]
    assert judge_rounds(first, None)["reduce"].why == judge(first)["reduce"].why    # nothing changed: the first
    differs = _two(_doc([("faster", FAST)], collective="bcast"),
                   _doc([("faster", FAST), ("slower", [-0.3] * 5)], followed="differs", collective="reduce"))
    j = judge_rounds(differs, second)["reduce"]       # not followed before pruning: never deployed
    assert not j.deploy and j.why.endswith("(first verify)")
