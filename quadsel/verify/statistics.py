"""Is the tuned selection faster than the library default beyond the noise? verify's statistics.

The unit of replication is the *round*: `quadsel verify` visits every point once per round, and within a
visit the default and the selected method are timed interleaved (shuffled batches, speed.py), so one round
gives one paired comparison made under the same state of the machine. Samples within a round are not
independent (consecutive calls share caches, the scheduler's mood, the neighbours' load); rounds, spread over
the whole run, are much closer to it. Hence (docs/deploy.md, "The statistics"):

- per point and round r: d_r = ln(median of the default's calls in r / median of the selected method's calls
  in r) -- the median, because timing noise only ever adds time and one descheduled call must not move it;
- per point: the speed-up exp(mean d_r) and its paired Student-t interval over the R rounds,
  exp(mean ± t(R-1) · sd / √R); verdict `faster` when the whole interval is above 1, `slower` when it is
  below 1, else `indistinguishable`; a point where the selection *is* the library default is `default`
  (speed-up 1 exactly, nothing to test). The times printed beside it are exp(mean ln median_r) of each arm
  (speed.typical_times), so default / quadsel is the speed-up exactly;
- per collective: the geometric mean over the points where the selection changes the default (the others
  are not measured against anything and would dilute it), with the interval of the per-round means over
  those points (so the correlation between points of one round is accounted for, not assumed away);
- overall: the changed-point-weighted mean of the collectives' log speed-ups, its variance the weighted sum
  of theirs, degrees of freedom by Welch-Satterthwaite;
- the deployment line: verify/verdict.py (it also weighs the follow proof and the minimum gain).

With P points at 95 % about 5 % of truly indistinguishable points are flagged by chance; the table says so.
"""

import math
import os

import numpy as np

from .. import speedup

VERDICTS = ("faster", "slower", "indistinguishable", "default")
CONFIDENCE = 0.95
MIN_ROUNDS = 2          # an interval needs at least two rounds


def _t(confidence, dof):
    from ..measure.timing import t_quantile
    return t_quantile(confidence, dof) if dof >= 1 and math.isfinite(dof) else (
        math.inf if dof < 1 else _normal(confidence))


def _normal(confidence):
    from scipy import stats
    return float(stats.norm.ppf(0.5 + confidence / 2))


def log_ratios(point, key):
    """Per round: ln(default / selected) of the rounds' medians, over the rounds every arm of the point has
    (speed.paired_rounds: the same rounds as the printed times); empty when the selection is the default."""
    from .speed import paired_rounds
    default, chosen = key(point["default"]), key(point["quadsel"])
    if default == chosen:
        return np.zeros(0)
    n = paired_rounds(point)
    d = point["times"][default]["rounds_us"][:n] if n else [point["times"][default]["mean_us"]]
    q = point["times"][chosen]["rounds_us"][:n] if n else [point["times"][chosen]["mean_us"]]
    return np.log(np.asarray(d, dtype=float)) - np.log(np.asarray(q, dtype=float))


def interval(values, confidence=CONFIDENCE):
    """(mean, low, high, standard error, dof) of the mean of `values` (Student t); low/high infinite below 2."""
    values = np.asarray(values, dtype=float)
    n = len(values)
    mean = float(values.mean()) if n else 0.0
    if n < MIN_ROUNDS:
        return mean, -math.inf, math.inf, math.inf, 0
    se = float(values.std(ddof=1)) / math.sqrt(n)
    half = _t(confidence, n - 1) * se
    return mean, mean - half, mean + half, se, n - 1


def verdict(low, high, same=False):
    if same:
        return "default"
    if low > 0:
        return "faster"
    if high < 0:
        return "slower"
    return "indistinguishable"


def _exp(x):
    if not math.isfinite(x):
        return None
    try:
        return float(math.exp(x))
    except OverflowError:   # a bound of 2 rounds at a high confidence (t quantile in the hundreds)
        return math.inf


def point_statistics(point, key, confidence=CONFIDENCE):
    """{"speedup", "speedup_low", "speedup_high", "verdict", "rounds"} of one verified point."""
    ratios = log_ratios(point, key)
    same = key(point["default"]) == key(point["quadsel"])
    if same:
        return {"speedup": 1.0, "speedup_low": 1.0, "speedup_high": 1.0, "verdict": "default", "rounds": 0}
    mean, low, high, _, _ = interval(ratios, confidence)
    return {"speedup": _exp(mean), "speedup_low": _exp(low), "speedup_high": _exp(high),
            "verdict": verdict(low, high), "rounds": int(len(ratios))}


def collective_statistics(points, key, confidence=CONFIDENCE):
    """Geometric mean over the points of one collective where the selection *changes* the library default (trimmed:
    quadsel/speedup.py), and its interval over rounds (log mean, se and dof too). Points that keep the default are left out: counted as
    exactly 1 they would pull the mean towards 1 and narrow the interval with nothing measured (issue 31)."""
    rows = [r for r in (log_ratios(p, key) for p in points) if len(r)]
    rounds = min((len(r) for r in rows), default=0)
    if rounds == 0:      # nothing changed: speed-up 1 exactly
        mean, low, high, se, dof = 0.0, 0.0, 0.0, 0.0, math.inf
    else:
        # each round's estimate over the changed points: the one estimator of quadsel/speedup.py (trimmed)
        per_round = np.array([speedup.log_mean(column) for column in np.array([r[:rounds] for r in rows]).T])
        mean, low, high, se, dof = interval(per_round, confidence)
    return {"geomean_speedup": _exp(mean), "geomean_low": _exp(low), "geomean_high": _exp(high),
            "log_mean": mean, "log_se": se, "dof": dof, "points": len(rows), "all_points": len(points)}


def overall_statistics(collectives, confidence=CONFIDENCE):
    """The geometric mean over collectives weighted by their changed points (Welch-Satterthwaite degrees of
    freedom); `changed` and `points`: the points the selection changes, of all points."""
    total = sum(c["points"] for c in collectives.values())
    counts = {"changed": total, "points": sum(c.get("all_points", c["points"]) for c in collectives.values())}
    if not total:
        return dict(counts, geomean_speedup=None, geomean_low=None, geomean_high=None)
    w = {name: c["points"] / total for name, c in collectives.items()}
    mean = sum(w[n] * c["log_mean"] for n, c in collectives.items())
    parts = {n: (w[n] * c["log_se"]) ** 2 for n, c in collectives.items()}
    var = sum(parts.values())
    if not math.isfinite(var):
        low, high = -math.inf, math.inf
    elif var == 0:
        low = high = mean
    else:
        denominator = sum(v ** 2 / collectives[n]["dof"] for n, v in parts.items()
                          if v > 0 and math.isfinite(collectives[n]["dof"]))
        dof = var ** 2 / denominator if denominator > 0 else math.inf
        half = _t(confidence, dof) * math.sqrt(var)
        low, high = mean - half, mean + half
    return dict(counts, geomean_speedup=_exp(mean), geomean_low=_exp(low), geomean_high=_exp(high))


def _num(x):
    return "—" if x is None else f"{x:.3f}"


def cores():
    """Cores this process may run on (the affinity mask, else the CPU count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def oversubscription(ranks, n_cores=None):
    """Ranks per core when more ranks than cores run (None when not oversubscribed)."""
    n_cores = n_cores or cores()
    return round(ranks / n_cores, 2) if ranks > n_cores else None


def load_average():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def annotate(results, rows, summaries, confidence=CONFIDENCE, np_=None, load_before=None):
    """Add the statistics to verify's rows and summaries (in place); return the document's `statistics`, whose
    `decision` and `reason` verify/verdict.py fills in once the follow check has run.

    results: {collective: the speed run's result (points with their per-round medians)}, rows in the same order
    as their points, collective after collective.
    """
    from .speed import _key
    n_cores = cores()
    by_point = [(coll, p) for coll, result in results.items() for p in result["points"]]
    for row, (coll, point) in zip(rows, by_point):
        row.update(point_statistics(point, _key, confidence))
        row["log_ratios"] = [round(float(x), 9) for x in log_ratios(point, _key)]   # per round (quadsel tune)
        row["oversubscription"] = oversubscription(point["comm"], n_cores)
    collectives = {}
    for coll, result in results.items():
        stats = collective_statistics(result["points"], _key, confidence)
        mine = [r for r in rows if r["collective"] == coll]
        counts = {v: sum(r["verdict"] == v for r in mine) for v in VERDICTS}
        collectives[coll] = stats
        summaries[coll].update({k: stats[k] for k in ("geomean_speedup", "geomean_low", "geomean_high")},
                               changed_points=stats["points"], verdicts=counts,
                               # for `quadsel tune`'s per-collective decision; JSON has no infinity: null
                               **{k: stats[k] if math.isfinite(stats[k]) else None for k in ("log_mean", "log_se", "dof")})
        if mine:
            slowest = min(mine, key=lambda r: r["speedup"])
            summaries[coll]["lowest_speedup"] = {k: slowest[k] for k in
                                                 ("comm_size", "msg_size", "quadsel", "speedup")}
            summaries[coll]["faster_than_default"] = counts["faster"] / len(mine)
    overall = overall_statistics(collectives, confidence)
    return {"method": "paired t-interval over rounds of ln(default / selected), per round the median of each arm",
            "confidence": confidence, "overall": overall, "decision": None, "reason": None,
            "machine": {"cores": n_cores, "np": np_, "oversubscription": oversubscription(np_ or 0, n_cores),
                        "load_average_before": load_before, "load_average_after": load_average()}}


def regression(rows):
    """The rows significantly slower than the default (--fail-on-regression exits non-zero on any)."""
    return [r for r in rows if r.get("verdict") == "slower"]


def format_lines(statistics, summaries):
    """The statistics part of verify's table output."""
    out = []
    for coll, s in summaries.items():
        counts = s.get("verdicts", {})
        gain = (f"on them geometric-mean speed-up {s['geomean_speedup']:.3f}x, "
                f"{100 * statistics['confidence']:.0f} % interval [{_num(s['geomean_low'])}, "
                f"{_num(s['geomean_high'])}]" if s.get("changed_points") else "nothing to compare")
        out.append(f"{coll}: changes {s.get('changed_points', 0)} of {s['points']} points; {gain}; points faster "
                   f"{counts.get('faster', 0)}, slower {counts.get('slower', 0)}, indistinguishable "
                   f"{counts.get('indistinguishable', 0)}, the default itself {counts.get('default', 0)}")
    o = statistics["overall"]
    out.append(f"overall, on the {o.get('changed', 0)} of {o.get('points', 0)} points the selection changes: "
               f"geometric-mean speed-up {_num(o['geomean_speedup'])}x, interval "
               f"[{_num(o['geomean_low'])}, {_num(o['geomean_high'])}]")
    m = statistics["machine"]
    over = (f"{m['np']} ranks on {m['cores']} cores: oversubscribed {m['oversubscription']}x (points with comm > "
            f"{m['cores']} share cores)" if m["oversubscription"] else f"{m['np']} ranks on {m['cores']} cores: "
            "not oversubscribed")
    load = m.get("load_average_before")
    out.append(f"machine: {over}; load average (1/5/15 min) before {load}, after {m.get('load_average_after')}")
    from .interference import busier_than_the_job, describe
    seen = describe(statistics.get("interference"))
    if seen:
        out.append(f"interference while timing: {seen}"
                   + ("; busier than the job itself" if busier_than_the_job(statistics["interference"]) else ""))
    out.append(f"method: {statistics['method']}; {100 * statistics['confidence']:.0f} % intervals per point "
               f"(about {100 - 100 * statistics['confidence']:.0f} % of truly equal points are flagged by chance)")
    out.append(f"DECISION: {statistics['decision']}: {statistics['reason']}")
    return out
