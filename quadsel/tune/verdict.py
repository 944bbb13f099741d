"""Which collectives `quadsel tune` deploys: verify's own decision (verify/verdict.py), taken per collective.

A collective is deployed only when verify's rule says `deploy` for it alone: the follow check ran and the library
follows the file at every checked point of that collective (and was seen running the file's choice at one of
them), no point is significantly slower than the default, the selection changes something, and the geometric-mean
speed-up over the points it changes has its whole interval above the minimum gain (--min-gain, verify's
MIN_GAIN by default). One rule for one thing: what `quadsel verify` calls deployable for a collective is what tune
deploys. Every other collective keeps the library's own choice (it is left out of the deployed file).
"""

from dataclasses import dataclass
from typing import Optional

from ..verify.verdict import MIN_GAIN  # noqa: F401 (tune's default: verify's)


@dataclass
class Judgement:
    collective: str
    deploy: bool
    why: str
    decision: str = "do not deploy"   # verify's word: deploy | do not deploy | unproven
    speedup: Optional[float] = None
    low: Optional[float] = None
    high: Optional[float] = None
    changed: int = 0            # verified points where the selection is not the default
    points: int = 0
    log_mean: Optional[float] = None
    log_se: Optional[float] = None
    dof: Optional[float] = None


def judge(document, min_gain=MIN_GAIN, busy_ok=False):
    """{collective: Judgement} of every collective a verify document timed."""
    from ..verify.statistics import overall_statistics
    from ..verify.verdict import decide
    rows = document.get("points") or []
    evidence = (document.get("statistics") or {}).get("proof") or {
        "ran": False, "why_not": "no follow check in this result", "failed": {}, "differs": [],
        "at_changed_points": {}, "collectives_without_proof": []}
    out = {}
    for coll, s in (document.get("summary") or {}).items():
        mine = [r for r in rows if r.get("collective") == coll]
        changed = [r for r in mine if r.get("verdict") != "default"]
        inf = float("inf")    # verify writes an infinite standard error or dof as null (JSON)
        stats = {"points": len(changed), "all_points": len(mine), "log_mean": s.get("log_mean") or 0.0,
                 "log_se": inf if s.get("log_se", 0.0) is None else s.get("log_se", 0.0),
                 "dof": inf if s.get("dof") is None else s["dof"]}
        overall = overall_statistics({coll: stats})
        at_changed = {}
        for r in changed:
            status = r.get("followed") or "not checked"
            at_changed[status] = at_changed.get(status, 0) + 1
        own = dict(evidence, differs=[d for d in evidence.get("differs", []) if d.get("collective") == coll],
                   at_changed_points=at_changed,
                   collectives_without_proof=[c for c in evidence.get("collectives_without_proof", [])
                                             if c == coll or c.startswith(f"{coll} layout ")])
        decision, why = decide(mine, overall, own, min_gain, prune_advice=False, rounds_option="--verify-rounds",
                               interference=(document.get("statistics") or {}).get("interference"),
                               busy_ok=busy_ok)   # tune has pruned already
        out[coll] = Judgement(coll, decision == "deploy", why, decision, overall["geomean_speedup"],
                              overall["geomean_low"], overall["geomean_high"], len(changed), len(mine),
                              stats["log_mean"], stats["log_se"], stats["dof"])
    return out


def judge_rounds(first, second, min_gain=MIN_GAIN, busy_ok=False):
    """{collective: Judgement} from each collective's last verify: the second (of the collectives pruning changed)
    where it ran, else the first. A collective the library did not follow in the first is never deployed."""
    judged = judge(first, min_gain, busy_ok)
    if second is None:
        return judged
    again = judge(second, min_gain, busy_ok)
    differs = {d.get("collective") for d in first["statistics"]["proof"]["differs"]}
    for coll, j in again.items():
        if coll in differs:
            j.deploy, j.why = False, judged[coll].why + " (first verify)"
        judged[coll] = j
    return judged


def final_document(first, second):
    """{"points", "layouts"}: each collective's rows and per-layout lines from its last verify (judge_rounds)."""
    again = set((second or {}).get("summary") or {})
    out = {"points": [], "layouts": []}
    for doc, keep in ((first, lambda c: c not in again), (second or {}, lambda c: True)):
        out["points"] += [p for p in doc.get("points") or [] if keep(p.get("collective"))]
        out["layouts"] += [e for e in (doc.get("statistics") or {}).get("layouts") or [] if keep(e["collective"])]
    return out


def overall(judgements):
    """The changed-point-weighted geometric mean over the deployed collectives, with verify's interval rule."""
    from ..verify.statistics import overall_statistics
    deployed = {c: {"points": j.changed, "log_mean": j.log_mean, "log_se": j.log_se, "dof": j.dof}
                for c, j in judgements.items() if j.deploy}
    return overall_statistics(deployed) if deployed else {"geomean_speedup": None, "geomean_low": None,
                                                          "geomean_high": None}
