"""Tables of the per-rank breakdown (terminal text, Markdown, JSON) and the side-by-side comparison of
configurations traced at the same message size (two algorithms, or two rank mappings in two files)."""

from ..errors import printable
from ..libraries import trees
from .breakdown import METRICS, algorithm_title, analyse, configs

_COLUMNS = [("rank", None), ("depth", None), ("subtree", None), ("inside", "inside"),
            ("arrival wait", "arrival_wait"), ("sender wait", "sender_wait"), ("receiver wait", "receiver_wait"),
            ("gate", None),
            ("transfer", "transfer"), ("departure wait", "departure_wait"), ("last in", None),
            ("last out", None), ("crit. path", None)]


def analyses(named_docs, select=None, tolerance=0.10):
    """[Breakdown] of every configuration of the trace files (`select`: labels or 0-based indices to keep)."""
    found = configs(named_docs)
    if select:
        keep = []
        for item in select:
            matches = [c for i, c in enumerate(found) if item == str(i) or item == c.label]
            if not matches:
                from ..errors import QuadselError
                known = "; ".join(f"{i}: {c.label}" for i, c in enumerate(found))
                raise QuadselError(f"no configuration {printable(item)!r} (known: {printable(known)})")
            keep += [m for m in matches if m not in keep]
        found = keep
    return [analyse(c, tolerance) for c in found]


def _table(headers, rows, fmt):
    rows = [[str(v) for v in row] for row in rows]
    if fmt == "markdown":
        out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(headers))) + "|"]
        return "\n".join(out + ["| " + " | ".join(r) + " |" for r in rows])
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _pct(x):
    return f"{100 * x:.0f} %"


def _us(x):
    return f"{x:.1f}"


def describe(b):
    """The heading lines of one configuration."""
    c = b.config
    h = c.header
    lines = [f"{printable(c.label)}: {printable(c.collective)} {printable(algorithm_title(c))} on "
             f"{printable(c.library)}, {c.ranks} ranks, "
             f"{len(c.entry)} calls" + (f" ({b.dropped_calls} outlier call{'s' if b.dropped_calls != 1 else ''} fenced off)"
                                   if b.dropped_calls else "")
             + ("; every rank depends on every other" if c.shape is None else "")
             + (f" [{c.shape.note}]" if c.shape and c.shape.note else ""),
             f"  hosts {len(set(h.get('hosts') or []))}, {h.get('cpus')} CPUs, "
             f"{'oversubscribed' if h.get('oversubscribed') else 'not oversubscribed'}, map-by "
             f"{printable(h.get('map_by') or 'default')}{_binding(h.get('cpu_affinity'))}, load average at start "
             f"{c.load_average}",
             f"  span of a call (last exit - first entry): {_us(b.span_us)} ± {_us(b.span_ci)} µs; critical path: "
             f"{_us(b.critical['arrival_to_gate_us'])} µs of arrival spread up to its gate + "
             f"{_us(b.critical['transfer_along_path_us'])} µs of transfer along it; commonest: "
             + ", ".join(f"{'→'.join(map(str, p['ranks']))} ({_pct(p['share'])})" for p in b.critical["paths"])]
    if c.library_ran is not None:
        lines.append("  the library default ran: " + library_ran_text(c.library_ran))
    lines.append("  " + overhead_line(b.overhead, h))
    return lines


def library_ran_text(ran):
    """What `library_ran` (verify/default_ran.py's DefaultRan.as_json) says, in words."""
    from ..libraries import with_name
    algs = [with_name(a.get("label"), a.get("name")) for a in ran.get("algorithms") or [] if isinstance(a, dict)]
    evidence = printable(str(ran.get("evidence") or ""))
    status = ran.get("status")
    if status == "identified" and algs:
        return f"{printable(algs[0])} (told apart by {evidence})"
    if status == "ambiguous" and algs:
        return f"one of {printable(', '.join(algs))} (equal {evidence} here)"
    if status == "unknown":
        return f"not identified ({evidence})"
    return f"cannot be told here ({evidence})"


def overhead_line(o, header):
    """The tracing overhead, printed as a cost only when its 95 % interval lies above 0 (trace/breakdown.py)."""
    probe = header.get("probe_cost_us")
    alone = f"; the two clock readings alone: {probe:.2f} µs" if isinstance(probe, (int, float)) else ""
    if not o:
        return "tracing overhead: not recorded" + alone
    pairs = f"{o['blocks']} block pair{'s' if o['blocks'] != 1 else ''}"
    ci = o.get("ci_us")
    if o.get("resolved"):
        return (f"tracing overhead: {o['per_call_us']:+.2f} µs per call, 95 % interval [{ci[0]:+.2f}, {ci[1]:+.2f}] "
                f"(median of traced - untraced over {pairs}; untraced barrier + call {o['untraced_us']:.1f} µs"
                + (f"; {100 * o['share_of_span']:.1f} % of the span" if o.get("share_of_span") is not None else "")
                + ")" + alone)
    if ci is None:
        return (f"tracing overhead: not measurable: only {pairs}, too few to bound it (trace more --calls, or a "
                f"smaller --batch)" + alone)
    return (f"tracing overhead: not measurable in this run: traced - untraced is {o['per_call_us']:+.2f} µs per call "
            f"with a 95 % interval of [{ci[0]:+.2f}, {ci[1]:+.2f}] over {pairs}, which shows no cost above the "
            f"machine's noise" + alone)


def _binding(affinity):
    """", bound: 0 1 | 0 1" (each rank's CPUs) when the trace recorded them."""
    if not isinstance(affinity, list) or not all(isinstance(a, list) for a in affinity):
        return ""
    cpus = [",".join(str(x) for x in a[:8]) + ("…" if len(a) > 8 else "") for a in affinity[:16]]
    return ", CPUs per rank " + " | ".join(cpus) + (" …" if len(affinity) > 16 else "")


def rank_rows(b):
    rows = []
    for r in b.rows:
        m = r.means
        rows.append([r.rank, "—" if r.depth is None else r.depth, "—" if r.subtree is None else r.subtree,
                     f"{_us(m['inside'])} ± {_us(r.ci['inside'])}", _us(m["arrival_wait"]), _us(m["sender_wait"]),
                     _us(m["receiver_wait"]),
                     r.gate, _us(m["transfer"]), _us(m["departure_wait"]), _pct(r.last_arrival),
                     _pct(r.last_departure), _pct(r.on_critical_path)])
    return rows


def findings(b):
    """The sentences docs/trace.md quotes: who waits most, what the groups are."""
    most = max(b.rows, key=lambda r: r.means["dependency_wait"])
    slow = max(b.rows, key=lambda r: r.means["exit_after_start"])
    relation = _relation(b.config.shape, most.rank, most.gate)
    out = [f"  waits most: rank {most.rank} ({_us(most.means['dependency_wait'])} µs of its "
           f"{_us(most.means['inside'])} µs inside: {_us(most.means['sender_wait'])} for its senders, "
           f"{_us(most.means['receiver_wait'])} for its receivers; most often for rank {most.gate}{relation}); "
           f"leaves last on average: rank "
           f"{slow.rank} ({_us(slow.means['exit_after_start'])} µs after the first entry)",
           f"  ranks alike (within {_us(b.cluster_tolerance_us)} µs): " + "; ".join(
               "{" + ", ".join(map(str, g)) + "}" for g in b.clusters)]
    if b.similar_subtrees:
        out.append("  subtrees alike (roots): " + "; ".join("{" + ", ".join(map(str, g)) + "}" for g in b.similar_subtrees))
    if b.by_depth:
        out.append("  by depth (mean inside / dep. wait / transfer µs): " + "; ".join(
            f"{d}: {_us(v['inside'])} / {_us(v['dependency_wait'])} / {_us(v['transfer'])}" for d, v in b.by_depth.items()))
    return out


def _relation(shape, rank, other):
    """How `other` stands to `rank` in the tree, as words (" (its parent)")."""
    if shape is None or other == rank:
        return " (itself: it arrived after all it depends on)" if other == rank else ""
    parents = shape.parents
    if parents[rank] == other:
        return " (its parent)"
    if parents[other] == rank:
        return " (its child)"
    if other in trees.ancestors(parents)[rank]:
        return " (an ancestor)"
    return " (in its subtree)" if other in trees.descendants(parents)[rank] else ""


def side_by_side(group, fmt):
    """Per rank, the time inside, dependency wait and departure wait of every configuration of `group`."""
    headers = ["rank"]
    for i, b in enumerate(group):
        tag = chr(ord("A") + i)
        headers += [f"{tag} inside", f"{tag} dep. wait", f"{tag} departure"]
    rows = []
    for r in range(group[0].config.ranks):
        row = [r]
        for b in group:
            m = b.rows[r].means
            row += [_us(m["inside"]), _us(m["dependency_wait"]), _us(m["departure_wait"])]
        rows.append(row)
    span = ["span"] + sum([[_us(b.span_us), "", ""] for b in group], [])
    legend = [f"{chr(ord('A') + i)} = {printable(b.config.label)}: {printable(algorithm_title(b.config))}"
              for i, b in enumerate(group)]
    base = group[0].span_us
    ratios = ", ".join(f"{chr(ord('A') + i)} / A {b.span_us / base:.2f}x" if base > 0 else f"{chr(ord('A') + i)} / A —"
                       for i, b in enumerate(group) if i)
    return "\n".join(legend + [_table(headers, rows + [span], fmt), f"span: {ratios}"])


def comparisons(results):
    """Groups of configurations to show side by side: those of one message size and communicator size."""
    groups = {}
    for b in results:
        groups.setdefault((b.config.msg_size, b.config.ranks, b.config.collective), []).append(b)
    return [g for g in groups.values() if len(g) >= 2]


def render(results, fmt="text"):
    out = []
    for b in results:
        out += describe(b) + ["", _table([h for h, _ in _COLUMNS], rank_rows(b), fmt), ""] + findings(b) + [""]
    for group in comparisons(results):
        out += ["Side by side:", side_by_side(group, fmt), ""]
    out.append("µs, means over the calls (± 95 % CI). sender / receiver wait: waiting inside the call for the latest "
               "arrival among the ranks its data comes from / it sends to in the tree; dep. wait: the larger "
               "(gate: that rank, most often); transfer: time inside - dep. wait; last in/out: "
               "share of calls it entered/left last; crit. path: share of calls it was on the critical path.")
    return "\n".join(out)


def render_text(named_docs, select=None, fmt="text"):
    return render(analyses(named_docs, select), fmt)


def as_json(results):
    docs = []
    for b in results:
        c = b.config
        docs.append({"label": c.label, "collective": c.collective, "library": c.library, "algorithm": c.algorithm,
                     "name": c.name, "segsize": c.segsize, "msg_size": c.msg_size, "ranks": c.ranks,
                     "calls": len(c.entry), "dropped_calls": b.dropped_calls, "tree": None if c.shape is None else {
                         "name": c.shape.name, "parents": c.shape.parents, "flow": c.shape.flow},
                     "span_us": b.span_us, "span_ci_us": b.span_ci, "critical": b.critical,
                     "overhead": b.overhead, "library_ran": c.library_ran, "clusters": b.clusters, "cluster_tolerance_us": b.cluster_tolerance_us,
                     "similar_subtrees": b.similar_subtrees,
                     "by_depth": {str(k): v for k, v in b.by_depth.items()},
                     "ranks_table": [{"rank": r.rank, "depth": r.depth, "subtree": r.subtree, "children": r.children,
                                      "gate": r.gate, "last_arrival": r.last_arrival,
                                      "last_departure": r.last_departure, "on_critical_path": r.on_critical_path,
                                      **{f"{m}_us": r.means[m] for m in METRICS},
                                      **{f"{m}_ci_us": r.ci[m] for m in METRICS}} for r in b.rows]})
    return {"configurations": docs,
            "comparisons": [[b.config.label for b in g] for g in comparisons(results)]}
