"""`quadsel report` on measurements with layouts (nodes, ppn): the penalty of each tree given (--tree: a decision function
with the layout key or without) and of the library default, per layout (docs/report.md, "Per layout").

Every layout is scored on its own measured points only (its rows alone make its decision map: layouts are never
pooled); a function answers a layout with its layer for that ppn (the query rule of every target), one without the
layout key with its one size tree. One number per thing: per layout and selector the mean and the worst penalty over the layout's
measured points, and over all layouts the mean of every measured point (each point counted once) and the worst.
"""

import json

import numpy as np

from ..errors import QuadselError


def layout_tables(rows):
    """{(nodes, ppn): ingest Table of that layout's rows} in (comm size, nodes) order."""
    from ..decision.layouts import group_table
    groups = {}
    for m in rows:
        groups.setdefault(m.layout, []).append(m)
    return {k: group_table(v, rows) for k, v in sorted(groups.items(), key=lambda kv: (kv[0][0] * kv[0][1], kv[0][0]))}


def layout_report(rows, trees, collective=None):
    """{"collective", "layouts": [...], "overall": {...}}; trees: [(name, DecisionFunction)], each answering a
    layout with the layer its ppn selects (a function without the layout key: its one size tree)."""
    from ..decision.decision_map import build_decision_map
    from .comparators import QuadtreeSelector, choice_on
    from .penalty import LIBRARY_DEFAULT, penalty_grid
    if not trees:
        raise QuadselError("report of measurements with layouts scores trees per layout: give --tree FOREST (quadsel "
                           "build of the same measurements writes one)")
    out, values = [], {name: [] for name, _ in trees + [("default", None)]}
    for (nodes, ppn), table in layout_tables(rows).items():
        dmap = build_decision_map(table, collective)
        entry = {"nodes": nodes, "ppn": ppn, "comm_size": nodes * ppn, "points": int(dmap.measured.sum()),
                 "penalty": {}}
        for name, fn in trees + [("default", None)]:
            if fn is None:
                if dmap.default_cost is None:
                    continue     # no default rows measured: nothing to compare it with
                choice = np.full(dmap.measured.shape, LIBRARY_DEFAULT)
            else:
                if fn.collective != dmap.collective:
                    raise QuadselError(f"{name} is a {fn.collective} tree and the measurements are {dmap.collective}")
                choice = choice_on(QuadtreeSelector.of(fn.at_ppn(ppn).size_tree), dmap)
            grid = penalty_grid(dmap, choice)[dmap.measured]
            known = grid[~np.isnan(grid)]
            if known.size:
                entry["penalty"][name] = {"mean": float(known.mean()), "max": float(known.max())}
                values[name] += known.tolist()
        out.append(entry)
    overall = {name: {"mean": float(np.mean(v)), "max": float(np.max(v)), "points": len(v)}
               for name, v in values.items() if v}
    return {"collective": dmap.collective, "layouts": out, "overall": overall}


def to_markdown(doc):
    names = list(doc["overall"])
    head = "| layout | comm | points | " + " | ".join(f"{n} mean % | {n} max %" for n in names) + " |"
    lines = [f"## {doc['collective']}: penalty per layout", "", head,
             "|---|---:|---:|" + "---:|---:|" * len(names)]
    for e in doc["layouts"]:
        cells = []
        for n in names:
            p = e["penalty"].get(n)
            cells += [f"{p['mean']:.2f}", f"{p['max']:.2f}"] if p else ["—", "—"]
        lines.append(f"| {e['nodes']}x{e['ppn']} | {e['comm_size']} | {e['points']} | " + " | ".join(cells) + " |")
    cells = []
    for n in names:
        o = doc["overall"][n]
        cells += [f"{o['mean']:.2f}", f"{o['max']:.2f}"]
    total = sum(e["points"] for e in doc["layouts"])
    lines.append(f"| all layouts | | {total} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def to_csv(doc):
    lines = ["layout,nodes,ppn,comm_size,points,selector,mean_penalty_pct,max_penalty_pct"]
    for e in doc["layouts"]:
        for name, p in e["penalty"].items():
            lines.append(f"{e['nodes']}x{e['ppn']},{e['nodes']},{e['ppn']},{e['comm_size']},{e['points']},"
                         f"{json.dumps(name)},{p['mean']:.6g},{p['max']:.6g}")
    return "\n".join(lines) + "\n"


def render(doc, out_format):
    if out_format == "json":
        return json.dumps(doc, indent=1) + "\n"
    return to_csv(doc) if out_format == "csv" else to_markdown(doc)
