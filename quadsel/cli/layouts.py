"""The layout key on the command line: `query` of a decision function with it (--ppn / --nodes), `report` of one
per layout. decision/decision_function.py holds its query rule."""

import json
import shlex

from .echo import say
from ..errors import QuadselError, escaped
from ..output import write_text


def query_forest(forest, tree, pairs, ppn, nodes, as_json):
    """The lines `quadsel query` prints for a function with the layout key, and the stderr note on sizes outside a
    layer's range."""
    import numpy as np
    from ..decision.decision_function import query_ppn
    if ppn is None and nodes is None:
        raise QuadselError(f"{tree} is a layout forest (one tree per ranks per node): give the query's layout, "
                           "--ppn P or --nodes N")
    ppns = np.array([query_ppn(c, ppn, nodes) for c, _ in pairs], dtype=np.int64)
    which = forest.layer_index(ppns)
    chosen = forest.methods_at(ppns, np.array([c for c, _ in pairs]), np.array([m for _, m in pairs]))
    lines, outside = [], 0
    for (c, m), p, k, method in zip(pairs, ppns.tolist(), which.tolist(), chosen):
        fn = forest.layers[k].tree
        beyond = not (fn.comm_sizes[0] <= c <= fn.comm_sizes[-1] and fn.msg_sizes[0] <= m <= fn.msg_sizes[-1])
        outside += beyond
        if as_json:
            lines.append(json.dumps({"collective": forest.collective, "comm_size": c, "msg_size": m, "ppn": p,
                                     **({"nodes": nodes} if nodes is not None else {}),
                                     "layout": forest.layer_label(k), "algorithm": method.algorithm,
                                     "segsize": method.segsize, "outside_measured_range": bool(beyond)}))
        elif len(pairs) == 1:
            lines.append(f"{shlex.quote(escaped(method.algorithm))} {method.segsize}")
        else:
            lines.append(f"{c} {m} {shlex.quote(escaped(method.algorithm))} {method.segsize}")
    note = None
    if outside:
        note = (f"note: {outside} of {len(pairs)} queries lie outside the measured sizes of their layout's tree: "
                "answered by that tree's rule outside its range (the library default where it hands them back)")
    return lines, note


def write_query(output, lines, note):
    write_text(output, "\n".join(lines) + "\n")
    if note:
        say(note, err=True)


def report_forest(files, collective, fmt, comm_size, column_map, trees, out_format, output):
    """`quadsel report FILES --tree FOREST`: the penalty per layout of every tree and of the default."""
    from ..decision.layouts import layout_groups
    from ..evaluate import report_layouts
    from ..output import write_text
    from .options import echo_notes, load_measurements
    rows = load_measurements(files, collective or trees[0][1].collective, fmt, comm_size, column_map)
    if layout_groups(rows) is None:
        raise QuadselError("a layout forest is scored per layout: its measurements need nodes/ppn columns (or "
                           "--layout NODESxPPN)")
    echo_notes(rows)
    doc = report_layouts.layout_report(rows, trees, collective or trees[0][1].collective)
    write_text(output, report_layouts.render(doc, out_format))
