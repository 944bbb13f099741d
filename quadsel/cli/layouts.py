"""The layout axis on the command line: `build` of measurements with layouts (a layout forest) and `query` of a
forest (--ppn / --nodes). decision/layouts.py holds the forest and its query rule."""

import json
import os
import shlex

import click

from ..errors import QuadselError, escaped
from ..output import check as check_output, write_text
from .options import echo_notes, file_identity


def build_forest(files, rows, groups, collective, settings, paper, keep_default, extrapolate, model, output,
                 as_json):
    """`quadsel build` of rows with layouts: one 2-D tree per ppn with the same settings, written as one forest."""
    from ..decision.decision_function import build_decision_function
    from ..decision.forest_file import dumps, from_json
    from ..decision.layouts import build_forest as forest_of
    from ..ingest.names import normalise_collective
    if model:
        raise QuadselError("--model builds one 2-D map: it does not take measurements with layouts (nodes, ppn) yet")
    found = sorted({m.collective for m in rows})
    if collective is None and len(found) != 1:
        raise QuadselError(f"the input holds several collectives ({', '.join(found)}): choose one with --collective")
    wanted = normalise_collective(collective) if collective else found[0]
    groups = {ppn: [m for m in group if m.collective == wanted] for ppn, group in groups.items()}
    groups = {ppn: group for ppn, group in groups.items() if group}
    if not groups:
        raise QuadselError(f"no measurements of collective '{wanted}' in the input (found: {', '.join(found)})")
    default_file = output is None
    output = output or f"{wanted}.qt.json"
    if default_file:
        if os.path.lexists(output):
            raise QuadselError(f"{output} exists and is not replaced without -o: give -o {output} to replace it")
        check_output(output)
    if keep_default is None:
        keep_default = False if paper else "auto"
    provenance = {"sources": [os.path.basename(f) for f in files], "inputs": [file_identity(f, output) for f in files]}

    def build_one(dmap):
        return build_decision_function(dmap, **settings,
                                       keep_default=keep_default if dmap.default_cost is not None else False,
                                       outside="extrapolate" if extrapolate else "auto", provenance=provenance)

    forest, maps = forest_of(groups, wanted, build_one, rows, provenance)
    echo_notes(rows)
    text = dumps(forest)
    try:
        from_json(json.loads(text), "the forest built", text)
    except QuadselError as exc:
        raise QuadselError(f"not written: {exc} (quadsel's own loader would refuse the file)") from None
    write_text(output, text, exclusive=default_file)
    score = forest_penalty(forest, maps)
    layouts = sum(len(m.nodes) for m in forest.members)
    click.echo(f"{forest.collective}: {layouts} layouts ({len(maps)} ppn: {', '.join(map(str, maps))}), "
               f"{len(set().union(*(d.methods for d in maps.values())))} methods; layout forest of {len(forest.members)} trees: "
               f"{forest.leaf_line()}; penalty on the measured points: mean {score['penalty_mean']:.2f} %, max "
               f"{score['penalty_max']:.2f} % ({score['points']} points, {score['charged']} charged, "
               f"{score['unscored']} unscored)" + (f"; wrote {output}" if output != "-" else ""), err=True)
    from ..ingest.replaced import replaced_note
    note = replaced_note(files, forest.collective, extra=tuple(p for d in maps.values() for p in d.replaced))
    if note:
        click.echo(f"note: {note}", err=True)
    if as_json:
        click.echo(json.dumps({"collective": forest.collective, "tree": output, "format": "quadsel-layout-forest",
                               **forest.stats(), **score}))


def forest_penalty(forest, maps):
    """The forest's penalty on every measured point of every layout (each ppn's map scored by its member)."""
    import numpy as np
    from ..evaluate.comparators import QuadtreeSelector, choice_on
    from ..evaluate.penalty import charged_grid, penalty_grid
    values, charged, unscored = [], 0, 0
    for ppn, dmap in maps.items():
        fn = forest.members[int(forest.member_of(np.array([ppn]))[0])].fn
        choice = choice_on(QuadtreeSelector.of(fn), dmap)
        grid = penalty_grid(dmap, choice)[dmap.measured]
        values.append(grid[~np.isnan(grid)])
        unscored += int(np.isnan(grid).sum())
        charged += int(charged_grid(dmap, choice).sum())
    scored = np.concatenate(values)
    return {"penalty_mean": float(scored.mean()) if scored.size else 0.0,
            "penalty_max": float(scored.max()) if scored.size else 0.0,
            "points": int(scored.size), "charged": charged, "unscored": unscored}


def query_forest(forest, tree, pairs, ppn, nodes, as_json):
    """The lines `quadsel query` prints for a forest, and the stderr note on sizes outside a member's range."""
    import numpy as np
    from ..decision.layouts import member_label, query_ppn
    if ppn is None and nodes is None:
        raise QuadselError(f"{tree} is a layout forest (one tree per ranks per node): give the query's layout, "
                           "--ppn P or --nodes N")
    ppns = np.array([query_ppn(c, ppn, nodes) for c, _ in pairs], dtype=np.int64)
    which = forest.member_of(ppns)
    chosen = forest.choices(ppns, np.array([c for c, _ in pairs]), np.array([m for _, m in pairs]))
    lines, outside = [], 0
    for (c, m), p, k, method in zip(pairs, ppns.tolist(), which.tolist(), chosen):
        fn = forest.members[k].fn
        beyond = not (fn.comm_sizes[0] <= c <= fn.comm_sizes[-1] and fn.msg_sizes[0] <= m <= fn.msg_sizes[-1])
        outside += beyond
        if as_json:
            lines.append(json.dumps({"collective": forest.collective, "comm_size": c, "msg_size": m, "ppn": p,
                                     **({"nodes": nodes} if nodes is not None else {}),
                                     "layout": member_label(forest.members, k), "algorithm": method.algorithm,
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
        click.echo(note, err=True)


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
