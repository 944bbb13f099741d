"""Prune from verification: the tree without the regions `quadsel verify` found slower than the library default.

`quadsel codegen --verified RESULT.json TREE...` reads the JSON of a verify run (`verify --json -o RESULT.json`)
and, before emitting, hands back to the library default every point verify found significantly slower
(verdict `slower`, verify/statistics.py) -- the point's own cell and the cells between it and its measured
neighbours on both axes (the sizes it decides alone), so that a size just beside a slower point does not keep
the slower method. The pruned cells are painted with the default and the whole map re-encoded as an exact
tree over the same cells, so the query rule, and with it every target, answers the default there; every
other cell answers exactly as before. docs/deploy.md, "Prune".
"""

import numpy as np

from ..decision.decision_map import DEFAULT_METHOD
from ..errors import QuadselError, one_line

DEFAULT_ALGORITHM = DEFAULT_METHOD.algorithm


def read_result(path):
    """The JSON of a verify run, checked whole against docs/schemas/verify-result.schema.json (quadsel/schemas.py):
    sizes within the tree's limits (never 0 ranks, a negative size, a boolean, infinity), a known verdict, the
    library it ran on and the method it timed at each point."""
    from ..schemas import load_json
    doc = load_json(path, "verify-result")
    for k, p in enumerate(doc["points"]):   # what the schema cannot say: a layout is both numbers, their product
        if (p.get("nodes") is None) != (p.get("ppn") is None) or (
                p.get("ppn") is not None and p["nodes"] * p["ppn"] != p["comm_size"]):
            raise QuadselError(f"{one_line(path)}: points[{k}]: a layout needs nodes and ppn with nodes x ppn = "
                               f"comm_size")
    return doc


def slower_points(path, doc=None):
    """{collective: [(comm, msg), ...]} of the points a verify JSON found significantly slower."""
    doc = read_result(path) if doc is None else doc
    out = {}
    for p in doc["points"]:
        if p["verdict"] == "slower":
            out.setdefault(p["collective"], []).append((p["comm_size"], p["msg_size"]))
    return out


def check_result(fn, doc, path, keep=None):
    """Refuse (one line) a result that is not about this tree: another library's, or a run of another tree (the
    method it timed at a slower point is not the one this tree picks there: a stale result). keep(point): which
    of the result's points are this tree's (a forest member's: those of its layouts)."""
    from ..libraries import label_of
    library = fn.provenance.get("library")
    shown = one_line(path)
    if library and library != doc["library"]:
        raise QuadselError(f"{shown} verified {doc['library']} and the {fn.collective} tree was built from {library} "
                           f"measurements: a verify result prunes only trees of its own library")
    for p in doc["points"]:
        if p["collective"] != fn.collective or p["verdict"] != "slower" or (keep is not None and not keep(p)):
            continue
        method = fn.query(p["comm_size"], p["msg_size"])
        if method.algorithm == DEFAULT_ALGORITHM:
            continue
        try:
            label = label_of(doc["library"], fn.collective, method)
        except QuadselError:
            label = method.algorithm
        timed = p["quadsel"].split(" (", 1)[0].split("/seg", 1)[0]
        if timed != label:
            raise QuadselError(f"{shown}: at comm {p['comm_size']} msg {p['msg_size']} verify timed {fn.collective} "
                               f"method {one_line(p['quadsel'], 60)} and this tree picks {one_line(method.label, 60)}: "
                               f"the result is of another tree or an older build (verify this tree again)")


def _around(axis, cell):
    """The cell and the unmeasured cells right beside it (the gaps up to its measured neighbours)."""
    cells = [cell]
    for near in (cell - 1, cell + 1):
        if 0 <= near < len(axis) and not axis.is_measured[near] and axis.left[near] >= 0:
            cells.append(near)
    return cells


def prune(fn, points, whole_rows=False):
    """(the SizeTree with `points` handed back to the library default, number of cells pruned). whole_rows: each
    point's communicator cells at every message size (a library that matches on no message size there)."""
    from ..decision.library_default import with_default
    if not points:
        return fn, 0
    methods, default = with_default(fn.methods)
    painted = fn.cell_methods()
    before = painted.copy()
    for comm, msg in points:
        rows = _around(fn.comm_axis, int(fn.comm_axis.cells([comm])[0]))
        cols = list(range(len(fn.msg_axis))) if whole_rows else _around(fn.msg_axis, int(fn.msg_axis.cells([msg])[0]))
        painted[np.ix_(rows, cols)] = default
    changed = int(np.count_nonzero(painted != before))
    if not changed:
        return fn, 0
    from ..targets.written import repainted
    return repainted(fn, painted, methods, pruned=[[int(c), int(m)] for c, m in points]), changed


def prune_all(fns, path, echo=None):
    """Every decision function pruned by the verify JSON at `path`; `echo` gets one line per layer."""
    doc = read_result(path)
    shown = one_line(path)
    out = []
    for fn in fns:
        layered = any(p.get("ppn") is not None for p in doc["points"] if p["collective"] == fn.collective)
        if fn.has_layout != layered and any(p["collective"] == fn.collective for p in doc["points"]):
            what = "a layout forest" if fn.has_layout else "a 2-D tree"
            raise QuadselError(f"{shown}: {fn.collective} was verified {'per layout' if layered else 'without layouts'}"
                               f" and {what} is given: prune with the result of verifying this very file")
        out.append(prune_function(fn, doc, path, echo))
    unknown = sorted(set(slower_points(path, doc)) - {fn.collective for fn in fns})
    if unknown and echo is not None:
        echo(f"note: {shown} also found slower points of {one_line(', '.join(unknown), 200)}, which no TREE given "
             f"selects")
    return out


def prune_function(fn, doc, path, echo=None):
    """The decision function with each layer pruned by the slower points of the layouts it answers (its layer_index
    of their ppn, the query rule of every target): a slower point of layout 2x1 prunes the layer for ppn 1 only."""
    from ..libraries import sizes
    from ..targets.written import as_written
    shown = one_line(path)
    fn = as_written(fn, doc["library"])    # what verify timed: the file the library loads (targets/written.py)
    whole_rows = sizes.written_form(doc["library"], fn.collective) == sizes.NONE   # one method per row there
    slower = [p for p in doc["points"] if p["collective"] == fn.collective and p["verdict"] == "slower"]
    trees = []
    for i, layer in enumerate(fn.layers):
        def mine(p, i=i):
            return not fn.has_layout or int(fn.layer_index([p["ppn"]])[0]) == i
        check_result(layer.tree, doc, path, keep=mine if fn.has_layout else None)
        points = [(p["comm_size"], p["msg_size"]) for p in slower if mine(p)]
        pruned, cells = prune(layer.tree, points, whole_rows)
        trees.append(pruned)
        if echo is not None:
            where = ", ".join((f"layout {p['nodes']}x{p['ppn']} " if fn.has_layout else "")
                              + f"comm {p['comm_size']} msg {p['msg_size']}" for p in slower if mine(p)) or "none"
            label = f" {fn.layer_label(i)}" if fn.has_layout else ""
            echo(f"{one_line(fn.collective)}{label}: points slower than the default in {shown}: {where}; {cells} "
                 f"cell(s) handed back to the library default")
    if all(t is layer.tree for t, layer in zip(trees, fn.layers)):
        return fn           # nothing handed back: the same function (tune verifies again only what pruning changed)
    return fn.with_trees(trees)
