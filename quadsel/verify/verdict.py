"""verify's DECISION: what a site admin may deploy (docs/deploy.md, "The decision").

`deploy` promises three things at once, and each is checked here:

1. the library follows the file: the follow check (verify/follow.py) ran and found no point where the library
   runs something other than the file's choice (`differs`), and it saw the file's choice run (`follows`) at a
   point of every collective the selection changes. A file that is not followed at some point is never
   deployed: the timings of the forced method say nothing about what the file makes the library run there, and
   pruning those points from the judgement would still deploy them. Where the check did not run (skipped,
   under mpiexec, failed) or proves nothing for a changed collective, the decision is `unproven`;
2. it changes something: the gain is judged on the points where the selection differs from the library
   default, and the line says how many of the points that is;
3. the gain is worth it: the geometric-mean speed-up on those points, with its whole interval, lies above the
   minimum gain (--min-gain, MIN_GAIN): a gain whose interval reaches down to that threshold is not shown to
   exceed the noise of a verify run on this machine, and a smaller one is not worth a rules file.

Any point significantly slower than the default also means `do not deploy` (prune it: codegen --verified).
"""

from ..layout import Layout

DECISIONS = ("deploy", "do not deploy", "unproven")
# The smallest geometric-mean gain worth deploying, and the lower bound its interval must clear. From the
# A/A runs of docs/deploy.md ("The minimum gain"): a tree forcing the very algorithm the default runs scatters
# its speed-up by a few per cent between runs on this 2-core machine, beyond the interval of one run.
MIN_GAIN = 1.05


def point_key(point):
    """(collective, comm, msg, nodes, ppn) of a verify row (a dict) or a follow.PointCheck; nodes and ppn None
    for a 2-D tree's point (a layout forest's points of one size differ by layout)."""
    if isinstance(point, dict):
        return (point["collective"], point["comm_size"], point["msg_size"], point.get("nodes"), point.get("ppn"))
    layout = tuple(getattr(point, "layout", None) or (None, None))
    return (point.collective, point.comm, point.msg) + layout


def _where_of(key):
    coll, comm, msg, nodes, ppn = key
    return coll if nodes is None else f"{coll} layout {Layout(nodes, ppn)}"


def follow_status(checks):
    """{point_key: status} of every checked point (the first source that checked it)."""
    out = {}
    for file_checks in (checks or {}).values():
        for c in file_checks:
            out.setdefault(point_key(c), c.status)
    return out


def proof(rows, checks, why_not=None, failed=None):
    """What the follow check established, for the document's `statistics.proof`.

    checks: {source: [PointCheck]} or None when the check did not run (`why_not` says why); failed: {source: why}
    of the checks that could not complete."""
    changed = [r for r in rows if r.get("verdict") != "default"]
    status = follow_status(checks)
    at_changed = {}
    for r in changed:
        s = status.get(point_key(r), "not checked")
        at_changed[s] = at_changed.get(s, 0) + 1
    differs = [(c.collective, c.comm, c.msg, c.method, list(c.matches), list(getattr(c, "layout", None) or ()) or None)
               for file_checks in (checks or {}).values() for c in file_checks if c.status == "differs"]
    # a forest's proof is per layout: the file's choice must be seen to run in every layout the selection changes
    changed_colls = sorted({_where_of(point_key(r)) for r in changed})
    seen = {_where_of(key) for key, s in status.items() if s == "follows"}
    return {"ran": checks is not None, "why_not": why_not if checks is None else None, "failed": dict(failed or {}),
            "differs": [dict(zip(("collective", "comm_size", "msg_size", "selected", "library_ran", "layout"), d))
                        for d in differs],
            "at_changed_points": at_changed,
            "collectives_without_proof": [c for c in changed_colls if c not in seen] if checks is not None
            else changed_colls}


def _where(points, limit=4):
    def at(p):
        layout = (f" layout {p['nodes']}x{p['ppn']}" if p.get("nodes") else
                  f" layout {p['layout'][0]}x{p['layout'][1]}" if p.get("layout") else "")
        return f"{p['collective']}{layout} comm {p['comm_size']} msg {p['msg_size']}"
    text = ", ".join(at(p) for p in points[:limit])
    return text + (f" and {len(points) - limit} more" if len(points) > limit else "")


def decide(rows, overall, evidence, min_gain=MIN_GAIN, prune_advice=True, rounds_option="--rounds",
           interference=None, busy_ok=False):
    """("deploy" | "do not deploy" | "unproven", the reason in one line).

    rows: verify's points (verdict per point); overall: statistics.overall_statistics (on the changed points);
    evidence: `proof(...)`; min_gain: the smallest geometric-mean speed-up worth deploying (> 1); prune_advice:
    the reason for slower points ends with how to prune them (not for tune, which has pruned already);
    rounds_option: the option that gives more rounds (tune's is --verify-rounds); interference: the timing jobs'
    (verify/interference.py): a gain measured on a host busier than the job itself is not deployed unless
    busy_ok (--busy-ok), for the load may be what made it (issue 41)."""
    changed, total = overall.get("changed", 0), overall.get("points", len(rows))
    gm, lo, hi = overall.get("geomean_speedup"), overall.get("geomean_low"), overall.get("geomean_high")
    gain = ("—" if gm is None else f"{gm:.3f}x [{_num(lo)}, {_num(hi)}]") + f" on the {changed} of {total} " \
        "points it changes"
    if evidence["differs"]:
        d = evidence["differs"]
        return "do not deploy", (f"the library does not follow the file at {len(d)} point(s) ({_where(d)}): "
                                 "there it runs something else than the method timed as quadsel's")
    slower = [r for r in rows if r.get("verdict") == "slower"]
    if slower:
        return "do not deploy", (f"{len(slower)} point(s) significantly slower than the default ({_where(slower)}); "
                                 f"{gain}" + ("; prune them: quadsel codegen --verified RESULT.json TREE, RESULT.json being this run's "
                                             "`verify --json -o RESULT.json`" if prune_advice else ""))
    if not changed:
        return "do not deploy", f"the selection keeps the library default at all {total} points: nothing to deploy"
    if gm is None or gm < min_gain:
        return "do not deploy", f"gain too small to deploy: {gain}, below --min-gain {min_gain:g}"
    if lo is None or lo <= min_gain:
        proven = evidence["ran"] and not evidence["failed"] and not evidence["collectives_without_proof"]
        more = f"more {rounds_option} narrow it" if proven else "the follow check proves nothing for it either"
        return "do not deploy", (f"gain not shown above --min-gain {min_gain:g}: {gain}, whose interval "
                                 f"reaches down to {min_gain:g} ({more})")
    at = evidence["at_changed_points"]
    followed = f"followed at {at.get('follows', 0)} of {changed} changed points"
    others = ", ".join(f"{v} {k}" for k, v in sorted(at.items()) if k != "follows")
    if not evidence["ran"] or evidence["failed"]:
        why = evidence["why_not"] or "; ".join(f"{k}: {v}" for k, v in evidence["failed"].items())
        return "unproven", (f"faster ({gain}), but the follow check did not "
                            + ("complete" if evidence["ran"] else "run") + f" ({why}): nothing shows that the "
                            "library runs the file's choices")
    if evidence["collectives_without_proof"]:
        return "unproven", (f"faster ({gain}), but the follow check saw the library run the file's choice "
                            f"nowhere for {', '.join(evidence['collectives_without_proof'])} ({followed}"
                            + (f"; {others}" if others else "") + ")")
    from .interference import busier_than_the_job, describe
    if busier_than_the_job(interference) and not busy_ok:
        return "unproven", (f"faster ({gain}), but timed on a host busier than the job itself ({describe(interference)}): "
                            "the load may be what made the gain; verify again on an idle host, or give --busy-ok")
    return "deploy", (f"faster than the default ({gain}), no point significantly slower; {followed}"
                      + (f" ({others})" if others else ""))


def exit_status(evidence, rows):
    """3 for --fail-on-regression: a point significantly slower, or a point where the file is not followed."""
    return 3 if evidence["differs"] or any(r.get("verdict") == "slower" for r in rows) else 0


def _num(x):
    return "—" if x is None else f"{x:.3f}"
