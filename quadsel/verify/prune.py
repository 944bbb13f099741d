"""Prune from verification: the tree without the regions `quadsel verify` found slower than the library default.

`quadsel codegen --verified RESULT.json TREE...` reads the JSON of a verify run (`verify --json -o RESULT.json`)
and, before emitting, hands back to the library default every point verify found significantly slower
(verdict `slower`, verify/statistics.py) -- the point's own cell and the cells between it and its measured
neighbours on both axes (the sizes it decides alone), so that a size just beside a slower point does not keep
the slower method. The pruned cells are painted with the default and the whole map re-encoded as an exact
tree over the same cells, so the query rule, and with it every target, answers the default there; every
other cell answers exactly as before. docs/deploy.md, "Prune".
"""

import json

import numpy as np

from ..errors import InputError, QuadselError
from ..inputs import read_text


def slower_points(path):
    """{collective: [(comm, msg), ...]} of the points a verify JSON found significantly slower."""
    text = read_text(path, what="verify result")
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise InputError(path, getattr(exc, "lineno", None), f"not JSON: {getattr(exc, 'msg', exc)}") from None
    points = doc.get("points") if isinstance(doc, dict) else None
    if not isinstance(points, list) or "statistics" not in doc:
        raise InputError(path, None, "not the JSON of `quadsel verify --json` (no points and statistics)")
    out = {}
    for i, p in enumerate(points):
        try:
            verdict, coll, comm, msg = p["verdict"], p["collective"], int(p["comm_size"]), int(p["msg_size"])
        except (KeyError, TypeError, ValueError):
            raise InputError(path, None, f"point {i} lacks collective, comm_size, msg_size or verdict") from None
        if verdict == "slower":
            out.setdefault(str(coll), []).append((comm, msg))
    return out


def _around(axis, cell):
    """The cell and the unmeasured cells right beside it (the gaps up to its measured neighbours)."""
    cells = [cell]
    for near in (cell - 1, cell + 1):
        if 0 <= near < len(axis) and not axis.is_measured[near] and axis.left[near] >= 0:
            cells.append(near)
    return cells


def prune(fn, points):
    """(the DecisionFunction with `points` handed back to the library default, number of cells pruned)."""
    from ..decision.decision_function import DecisionFunction
    from ..decision.grid import DecisionGrid
    from ..decision.library_default import with_default
    from ..decision.split import grow_exact
    if not points:
        return fn, 0
    methods, default = with_default(fn.methods)
    painted = fn.cell_methods()
    before = painted.copy()
    for comm, msg in points:
        rows = _around(fn.comm_axis, int(fn.comm_axis.cells([comm])[0]))
        cols = _around(fn.msg_axis, int(fn.msg_axis.cells([msg])[0]))
        painted[np.ix_(rows, cols)] = default
    changed = int(np.count_nonzero(painted != before))
    if not changed:
        return fn, 0
    penalty = np.ones(painted.shape + (len(methods),))
    np.put_along_axis(penalty, painted[:, :, None], 0.0, axis=2)
    grid = DecisionGrid(fn.comm_axis, fn.msg_axis, penalty, np.ones(painted.shape), painted)
    tree = grow_exact(grid, "penalty")
    if not np.array_equal(tree.paint(*painted.shape), painted):
        raise QuadselError("pruning failed to re-encode the tree exactly (a bug: please report it)")
    provenance = dict(fn.provenance)
    provenance["pruned"] = [[int(c), int(m)] for c, m in points]
    return DecisionFunction(fn.collective, fn.comm_sizes, fn.msg_sizes, methods, tree, fn.options, provenance,
                            fn.paper_stats), changed


def prune_all(fns, path, echo=None):
    """Every tree pruned by the verify JSON at `path`; `echo` gets one line per collective."""
    slower = slower_points(path)
    out = []
    for fn in fns:
        pruned, cells = prune(fn, slower.get(fn.collective, []))
        if echo is not None:
            where = ", ".join(f"comm {c} msg {m}" for c, m in slower.get(fn.collective, [])) or "none"
            echo(f"{fn.collective}: points slower than the default in {path}: {where}; {cells} cell(s) handed "
                 f"back to the library default")
        out.append(pruned)
    unknown = sorted(set(slower) - {fn.collective for fn in fns})
    if unknown and echo is not None:
        echo(f"note: {path} also found slower points of {', '.join(unknown)}, which no TREE given selects")
    return out
