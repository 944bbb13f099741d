"""verify of a layout forest (decision/layouts.py): every (nodes, ppn) layout timed and proved on its own
communicator, formed from the node groups exactly as `quadsel measure` forms it (measure/layouts.py).

A point of a forest carries `layout` [nodes, ppn] (comm = nodes x ppn); its `quadsel` arm is the forest's choice
for that ppn. The follow check loads the rules file a deployment would load (`forest_rules`): one file for every
layout where the library's format has a ppn key, else one file per ppn the checked layouts have, each the
forest's member for that ppn: what a job script picking the file from its allocation deploys
(docs/deploy.md, "Verify a layout forest").
"""

from ..layout import Layout
from ..libraries import CLASSES
from ..measure.layouts import NodeGroups
from .selection import TreeSelection

# Libraries whose rules file verify writes for a whole forest with the ppn key (one file for every layout): MPICH's
# comm_avg_ppn, Intel MPI's impi-json `ppn=` blocks (docs/cluster.md, "Intel MPI's ppn level").
# Open MPI 5.0.x has no ppn key in the classic file: one file per ppn, loaded with coll/han's rules file of the same
# member (verify/han.py), as tune deploys the pair. (Its main/6.x tuned JSON has comm_rank_distribution; not loaded by 5.0.x.)
ONE_FILE = {cls.name for cls in CLASSES if not cls.per_ppn_files}


def point_layout(point):
    """The Layout of a speed point (a dict) or a fingerprint point ([comm, msg(, nodes, ppn)]); () for none, and
    a tuple of the ranks for an uneven spread ([comm, msg, "r0,r1,..."], quadsel.testbed.fingerprints)."""
    found = tuple(point.get("layout") or ()) if isinstance(point, dict) else tuple(point[2:4])
    return Layout(*found) if len(found) == 2 else found


def units_of(MPI, world, points, hostname):
    """([(comm size, layout or ())] in order, NodeGroups or None): the communicators of a job's points. Layouts are
    checked against the job's node groups (QuadselError naming the first that does not fit)."""
    units = sorted({(int(p["comm"] if isinstance(p, dict) else p[0]), point_layout(p)) for p in points},
                   key=lambda unit: (unit[0], [str(v) for v in unit[1]]))
    if not any(len(layout) == 2 for _, layout in units):
        return units, None
    groups = NodeGroups(MPI, world, hostname)
    groups.check([layout for _, layout in units if len(layout) == 2])
    return units, groups


def split_unit(MPI, world, n, layout, groups):
    """(member?, communicator or None) of one unit: the first n ranks, the layout's ranks in node-major order, or
    for a layout ("r0,r1,...",) those world ranks (quadsel.testbed.fingerprints)."""
    rank = world.Get_rank()
    if len(layout) == 1:      # ("0,1,3",): those world ranks in that order (an uneven spread, benchmarks)
        ranks = [int(r) for r in str(layout[0]).split(",")]
        member, order = rank in ranks, ranks.index(rank) if rank in ranks else rank
    else:
        member, order = groups.place(layout) if layout else (rank < n, rank)
    base = world.Split(0 if member else MPI.UNDEFINED, order)
    return member, base


def chosen_layouts(selections, layouts):
    """{collective: [Layout]} to verify: --layouts (a list of Layout), else each forest's measured layouts."""
    given = list(layouts) if layouts else None
    return {s.collective: (given or s.layouts) for s in selections if s.has_layout}


def forest_rules(library, selections, points):
    """[(source, [DecisionFunction], [selections], {collective: [checked points]})]: the files the follow
    check loads for the trees' decision functions (points: {collective: [(comm, msg) or (comm, msg, nodes, ppn)]}).

    The caller writes each file (run.emit_rules) and checks its selections at its points. A library in ONE_FILE gets one file with
    every forest whole; any other one file per ppn among the checked layouts, each with the forests' member for
    that ppn (and the 2-D trees, the same in every file)."""
    forests = [s for s in selections if s.has_layout]
    trees = [s for s in selections if not s.has_layout]
    if not forests or library in ONE_FILE:
        fns = [s.fn for s in trees] + [s.fn for s in forests]
        return [("emitted from the trees", fns, selections, points)]
    ppns = sorted({p[3] for s in forests for p in points.get(s.collective, [])})
    out = []
    for k, ppn in enumerate(ppns):
        members = [TreeSelection(s.fn.at_ppn(ppn), s.library, s.path) for s in forests]
        mine = {s.collective: [p for p in points.get(s.collective, []) if p[3] == ppn] for s in forests}
        if k == 0:   # the 2-D trees are checked once, with the first file
            mine.update({s.collective: points.get(s.collective, []) for s in trees})
        extra = trees if k == 0 else []
        out.append((f"emitted from the trees, ppn {ppn} (the forest member for ppn {ppn})",
                    [s.fn for s in members + extra], forests + extra, mine))
    return out


def layout_summary(rows, checks):
    """[{collective, layout, nodes, ppn, points, changed, geomean_speedup, followed}] per verified layout:
    the speed-up is the geometric mean over its changed points (None without one), `followed` the follow
    check's counts at its points (None without the check)."""
    import math
    from .verdict import point_key
    status = {}
    for file_checks in (checks or {}).values():
        for c in file_checks:
            status.setdefault(point_key(c), c.status)
    out = {}
    for r in rows:
        if r.get("nodes") is None:
            continue
        entry = out.setdefault((r["collective"], r["nodes"], r["ppn"]), {
            "collective": r["collective"], "layout": str(Layout(r["nodes"], r["ppn"])), "nodes": r["nodes"],
            "ppn": r["ppn"], "points": 0, "changed": 0, "log_sum": 0.0, "followed": None if checks is None else {}})
        entry["points"] += 1
        if r.get("verdict") != "default":
            entry["changed"] += 1
            entry["log_sum"] += math.log(r["speedup"])
        if checks is not None:
            s = status.get(point_key(r), "not checked")
            entry["followed"][s] = entry["followed"].get(s, 0) + 1
    for entry in out.values():
        total = entry.pop("log_sum")
        entry["geomean_speedup"] = math.exp(total / entry["changed"]) if entry["changed"] else None
    return list(out.values())


def format_layout_lines(summary):
    """One line per layout for verify's table."""
    lines = []
    for e in summary:
        gain = f"{e['geomean_speedup']:.3f}x on them" if e["geomean_speedup"] is not None else "nothing to compare"
        followed = ("follow check not run" if e["followed"] is None else
                    "followed: " + ", ".join(f"{v} {k}" for k, v in sorted(e["followed"].items())))
        lines.append(f"{e['collective']} layout {e['layout']} ({e['nodes']} node(s) x {e['ppn']} ppn): changes "
                     f"{e['changed']} of {e['points']} points; {gain}; {followed}")
    return lines
