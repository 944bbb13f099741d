"""Which collectives `quadsel tune` deploys, from a verify run's JSON document.

A collective is deployed only when all of these hold (docs/tune.md):
- the library follows the file there: the follow proof found no point where it ran another algorithm than the
  file says (`differs`), and the proof ran (a failed proof deploys nothing);
- no point is significantly slower than the library default (those are pruned first, and verified again);
- the selection changes something: at least one verified point runs another method than the default;
- its geometric-mean speed-up over the points the selection changes is a gain beyond the noise: the lower end
  of its interval is above 1, and its centre at least `min_gain`.
Every other collective keeps the library's own choice (it is left out of the deployed file).
"""

import math
from dataclasses import dataclass
from typing import Optional

MIN_GAIN = 1.02   # a 2 % gain: below it a deployment is not worth the file (docs/tune.md)


@dataclass
class Judgement:
    collective: str
    deploy: bool
    why: str
    speedup: Optional[float] = None
    low: Optional[float] = None
    high: Optional[float] = None
    changed: int = 0            # verified points where the selection is not the default
    points: int = 0
    log_mean: Optional[float] = None
    log_se: Optional[float] = None
    dof: Optional[float] = None


def judge(document, min_gain=MIN_GAIN):
    """{collective: Judgement} of every collective verify timed."""
    from ..verify.statistics import interval
    rows = document.get("points") or []
    follow = document.get("rules_followed")
    out = {}
    for coll in document.get("summary", {}):
        mine = [r for r in rows if r.get("collective") == coll]
        changed = [r for r in mine if r.get("verdict") != "default"]
        j = Judgement(coll, False, "", changed=len(changed), points=len(mine))
        differs = [] if follow is None else [p for p in follow.get("points", [])
                                             if p.get("collective") == coll and p.get("status") == "differs"]
        slower = [r for r in mine if r.get("verdict") == "slower"]
        per_round = _changed_rounds(changed)
        if per_round is not None:
            mean, low, high, se, dof = interval(per_round)
            j.speedup, j.low, j.high = _exp(mean), _exp(low), _exp(high)
            j.log_mean, j.log_se, j.dof = mean, se, dof
        shown = "" if j.speedup is None else f" ({j.speedup:.3f}x [{j.low:.3f}, {j.high:.3f}] on {len(changed)} points)"
        if follow is None or follow.get("failed"):
            j.why = "the follow proof did not run: unproven"
        elif differs:
            j.why = f"the library does not follow the file at {len(differs)} point(s)"
        elif not changed:
            j.why = "the tree keeps the library default at every verified point"
        elif slower:
            j.why = f"{len(slower)} point(s) slower than the default{shown}"
        elif j.low is None or not j.low > 1.0:
            j.why = f"no gain beyond the noise{shown}"
        elif j.speedup < min_gain:
            j.why = f"gain below the {min_gain:g}x worth deploying{shown}"
        else:
            j.deploy, j.why = True, f"faster than the default{shown}"
        out[coll] = j
    return out


def _changed_rounds(changed):
    """Per round, the mean over the changed points of ln(default / quadsel) (verify's `log_ratios` of each
    point); None without changed points."""
    import numpy as np
    series = [np.asarray(r["log_ratios"], dtype=float) for r in changed if r.get("log_ratios")]
    if not series:
        return None
    rounds = min(len(s) for s in series)
    return np.array([s[:rounds] for s in series]).mean(axis=0)


def _exp(x):
    if x is None or not math.isfinite(x):
        return math.inf if x == math.inf else (0.0 if x == -math.inf else None)
    return math.exp(x)


def overall(judgements):
    """The point-weighted geometric mean over the deployed collectives, with its interval (verify's rule)."""
    from ..verify.statistics import overall_statistics
    deployed = {c: {"points": j.changed, "log_mean": j.log_mean, "log_se": j.log_se, "dof": j.dof}
                for c, j in judgements.items() if j.deploy}
    return overall_statistics(deployed) if deployed else {"geomean_speedup": None, "geomean_low": None,
                                                          "geomean_high": None}
