"""report.md of `quadsel tune` and its last line: what was tuned, how sure, what to do."""

import os
import shlex


def summary(library, wanted, built, judged, overall, budget_cut, measured, spec, seconds, left_out=None, verified=None):
    deployed = sorted(c for c, j in judged.items() if j.deploy)
    return {
        "library": library.name, "library_version": library.version, "np": spec.np,
        "collectives": list(wanted), "deployed": deployed,
        "kept_default": sorted(c for c in wanted if c not in deployed),
        "overall": overall, "budget_cut": budget_cut, "seconds": round(seconds, 1),
        "left_out": dict(left_out or {}),       # not tuned at all, decided before measuring, and why
        # what else ran on this host while each verify timed (verify/interference.py): the verdict's conditions
        "interference": {label: (doc.get("statistics") or {}).get("interference")
                         for label, doc in (verified or {}).items()},
        "per_collective": {c: {"deploy": j.deploy, "why": j.why, "speedup": j.speedup, "low": j.low, "high": j.high,
                               "changed_points": j.changed, "points": j.points, "spread": spread(j),
                               **(built[c][1] if c in built else {}),
                               "measure_seconds": measured.get(c, {}).get("seconds"),
                               "measure_strategy": measured.get(c, {}).get("strategy")}
                           for c, j in judged.items()},
        "oversubscribed": spec.np > (os.cpu_count() or 1) and not getattr(spec, "mpiexec_args", None),
        "across_hosts": bool(getattr(spec, "mpiexec_args", None)),
        # the Slurm allocation tuned (measure/allocation.py): its job, nodes and tasks per node
        "allocation": spec.allocation.describe() if getattr(spec, "allocation", None) is not None else None,
        "hosts_from": (f"the {spec.allocation.nodes} nodes of Slurm job {spec.allocation.job_id}"
                       if getattr(spec, "hosts_from_allocation", False) else None),
    }


def last_line(s, folder):
    """`deploy: 9 of 14 collectives tuned, 1.18x [1.09, 1.27]; 5 kept at the library default; . DIR/tuned.env`.
    The folder's name is printed escaped (no control character reaches the terminal) and, in the command to paste,
    quoted for the shell; a name no shell quote can carry as typed (a control character in it) is said so."""
    from ..errors import escaped
    n, total = len(s["deployed"]), len(s["collectives"])
    o = s["overall"]
    if not n:
        return (f"do not deploy: none of {total} collectives beats the library default beyond the noise here "
                f"(report: {escaped(os.path.join(folder, 'report.md'))}); nothing to source")
    gain = f"{o['geomean_speedup']:.2f}x [{o['geomean_low']:.2f}, {o['geomean_high']:.2f}]"
    kept = total - n
    env = os.path.join(folder, "tuned.env")
    source = f". {shlex.quote(env)}" if escaped(env) == env else \
        f"source {escaped(env)} (its name holds control characters: type it as it is)"
    return f"deploy: {n} of {total} collectives tuned, {gain}; {kept} kept at the library default; {source}"


def spread(judgement):
    """The speed-up's spread from round to round of the last verify, in % (its per-round standard deviation), or
    None with fewer than two rounds."""
    import math
    if judgement.log_se is None or judgement.dof is None or not math.isfinite(judgement.log_se) or \
            not math.isfinite(judgement.dof) or judgement.dof < 1:
        return None
    return round((math.exp(judgement.log_se * math.sqrt(judgement.dof + 1)) - 1) * 100, 1)


def _conditions(interference):
    """What else ran on this host while verify timed, per verify run (the verdict depends on it)."""
    from ..verify.interference import busier_than_the_job, describe
    said = [(label, describe(found), busier_than_the_job(found)) for label, found in interference.items()]
    said = [(label, text, busy) for label, text, busy in said if text]
    if not said:
        return []
    out = ["Timing conditions (other runnable tasks on this host, sampled while verify timed): "
           + "; ".join(f"{label} verify: {text}" + (" -- **busier than the job itself**" if busy else "")
                       for label, text, busy in said) + "."]
    if any(busy for _, _, busy in said):
        out.append("A gain timed on a host busier than the job is not deployed (it may be the load's) unless "
                   "tune is given --busy-ok.")
    return out + [""]


def _x(value):
    return "—" if value is None else f"{value:.3f}"


def markdown(s, folder, built, figures, echo, layouts=None, notes=()):
    """The report: per collective the tree, the verify verdict and why, the decision maps as figures. `folder`:
    tune's Folder (its figures are written through it)."""
    lines = [f"# quadsel tune: {s['library_version']}", "",
             f"{len(s['deployed'])} of {len(s['collectives'])} collectives deployed; "
             + (f"{s['np']} ranks across hosts ({s.get('hosts_from') or '--mpiexec-args'}; this host has {os.cpu_count()} cores: on hosts that "
                "share them, as the namespace cluster's, the times are oversubscribed)" if s.get("across_hosts") else
                f"{s['np']} ranks on {os.cpu_count()} cores")
             + ("" if s.get("across_hosts") else " (**oversubscribed**: times of more ranks than cores are the scheduler's as much as the "
                "algorithms')" if s["oversubscribed"] else " (not oversubscribed)")
             + f"; {s['seconds']:.0f} s.", ""]
    if s.get("allocation"):
        lines += [f"Tuned in the allocation of {s['allocation']}: every layout measured and verified is one of its "
                  "nodes x tasks per node; deploy it to jobs of that shape (tuned.env picks the file of the job's "
                  "own layout).", ""]
    o = s["overall"]
    if s["deployed"]:
        lines += [f"Overall speed-up of the deployed collectives over the library default, on the points their "
                  f"selection changes: **{_x(o['geomean_speedup'])}x** [{_x(o['geomean_low'])}, "
                  f"{_x(o['geomean_high'])}] (95 % interval, geometric mean).", ""]
    lines += _conditions(s.get("interference") or {})
    if s.get("left_out"):
        lines += ["Not tuned (decided before measuring): " + "; ".join(f"{c}: {why}" for c, why in
                                                                        s["left_out"].items()) + ".", ""]
    if s["budget_cut"]:
        lines += [f"The time budget cut the measurement of: {', '.join(s['budget_cut'])} (their trees are built "
                  "on what was measured, or they were not measured at all).", ""]
    lines += ["| collective | deployed | why | speed-up [95 %] on changed points | spread between rounds % | "
              "changed / verified points | tree leaves | penalty on measured points (mean / max %) | "
              "measuring (s, strategy) |",
              "|---|---|---|---|---|---|---|---|---|"]
    for coll in s["collectives"]:
        p = s["per_collective"].get(coll)
        if p is None:
            lines.append(f"| {coll} | no | not measured (budget) | — | — | — | — | — | — |")
            continue
        lines.append(f"| {coll} | {'**yes**' if p['deploy'] else 'no'} | {p['why']} | {_x(p['speedup'])} "
                     f"[{_x(p['low'])}, {_x(p['high'])}] | {'—' if p.get('spread') is None else p['spread']} | "
                     f"{p['changed_points']} / {p['points']} | "
                     f"{p.get('leaves', '—')} | {p.get('penalty_mean', '—')} / {p.get('penalty_max', '—')} | "
                     f"{p.get('measure_seconds') or '—'}{', ' + p['measure_strategy'] if p.get('measure_strategy') else ''} |")
    lines += ["", "Files: `tuned.env` (source it before mpiexec), the library's file, `trees/` (one tree per "
              "collective), `measurements/` (reusable by `quadsel build`), `verify/` (the verify runs as JSON: `first`, and "
              "`pruned` of the collectives pruning changed).", ""]
    if layouts:     # across hosts: each collective's last verify per layout (verify/layouts.py)
        from ..verify.layouts import format_layout_lines
        lines += ["## Per layout (each collective's last verify, nodes x ranks per node)", ""]
        lines += [f"- {line}" for line in format_layout_lines(layouts)] + [""]
    lines += [f"{note}" for note in notes if note] + ([""] if any(notes) else [])
    if figures:
        lines += _figures(folder, built, echo)
    return "\n".join(lines) + "\n"


def _figures(folder, built, echo):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return ["(No figures: matplotlib is not installed; `pip install quadsel[figures]`.)"]
    from ..evaluate.comparators import QuadtreeSelector, choice_on
    from ..evaluate.figure_maps import decision_maps
    from ..output import make_folder
    out = ["## Decision maps of the built trees (every collective, before pruning; only the deployed ones are in the file)", ""]
    make_folder(folder("figures"))
    for coll, (fn, summary, maps) in built.items():
        for ppn, dmap in maps.maps.items():   # one map per layer of the layout key
            name = coll if ppn is None else f"{coll}-ppn{ppn}"
            tree = fn.at_ppn(ppn or 1).size_tree
            panel = (f"{tree.stats()['leaves']} leaves", choice_on(QuadtreeSelector.of(tree), dmap))
            title = f"{coll}: the default build" + ("" if ppn is None else f", {ppn} ranks per node")
            path = folder("figures", f"{name}.png")
            folder.claim(path)       # tune replaces its own figure only
            decision_maps(dmap, [panel], path, title)
            folder.record(path)
            out += [f"![{name}](figures/{name}.png)", ""]
    return out
