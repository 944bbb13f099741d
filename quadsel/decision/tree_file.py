"""The tree file (`quadsel build` -> `*.qt.json`, docs/formats-tree.md): writing it, and reading it back whole-checked.

A reader trusts nothing: the file must be a regular file (quadsel.inputs: 64 MiB at most) of UTF-8 JSON with no
NaN/Infinity, nested no deeper than the format needs, every number an integer in the range its target can
hold (communicator sizes and segment sizes fit a C `int`, message sizes a signed 64-bit integer), axes
strictly increasing, and the tree a well-formed quadtree over exactly the grid its axes and between rule
define (quadtree.Quadtree.validate). Any failure is one InputError naming the file. Version 1 files (the
paper's padded tree before cuts at measured sizes existed) are read and converted.
"""

import json
import math

import numpy as np

from ..errors import InputError
from ..inputs import BUILD_OPTION_MAX, INT64_MAX, INT_MAX, read_text
from .decision_map import Method
from .grid import COMM_TOP, Axis
from .options import BuildOptions
from .quadtree import Quadtree

FORMAT_NAME = "quadsel-quadtree"
FORMAT_VERSION = 2
SIZE_MAX = INT64_MAX
MAX_NAME = 256
MAX_CELLS = 1 << 22     # a tree over more cells than this is refused (every query paints the grid)


def to_json(fn):
    out = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "collective": fn.collective,
        "axes": {"comm_sizes": fn.comm_sizes.tolist(), "msg_sizes": fn.msg_sizes.tolist()},
        "methods": [m.to_json() for m in fn.methods],
        "builder": fn.options.to_json(),
        "tree": fn.tree.to_json(),
        "stats": fn.stats(),
        "provenance": fn.provenance,
    }
    return out


def dumps(fn):
    return json.dumps(to_json(fn), indent=1) + "\n"


def read_json(path, what="tree file"):
    """The parsed JSON of a regular UTF-8 file within quadsel.inputs' limit for `what` (InputError otherwise),
    read by the strict parser every JSON input shares (quadsel/schemas.py: no NaN or Infinity, no number beyond
    a double, no key twice in one object, no nesting too deep)."""
    from ..schemas import parse
    return parse(read_text(path, what), path)


def _int(value, what, lo, hi):
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an integer, not {json.dumps(value)[:40]}")
    if not lo <= value <= hi:
        raise ValueError(f"{what} {value if abs(value) < 10 ** 30 else '(huge)'} is outside {lo}..{hi}")
    return value


def _ints(values, what, lo, hi, shape_of=None):
    if not isinstance(values, list):
        raise ValueError(f"{what} must be an array")
    flat = []
    for value in values:
        if shape_of is not None:
            if not isinstance(value, list) or len(value) != shape_of:
                raise ValueError(f"{what}: every entry must be an array of {shape_of}")
            flat.extend(_int(v, what, lo, hi) for v in value)
        else:
            flat.append(_int(value, what, lo, hi))
    array = np.asarray(flat, dtype=np.int64)
    return array.reshape(-1, shape_of) if shape_of else array


def typed(data, key, kind=dict):
    """data[key], which must be a JSON object (kind dict) or array (kind list): ValueError naming the key."""
    value = data.get(key)
    if not isinstance(value, kind):
        raise ValueError(f"`{key}` must be an {'object' if kind is dict else 'array'}")
    return value


def _axes(data):
    axes = typed(data, "axes")
    comm = _ints(axes.get("comm_sizes"), "axes.comm_sizes", 1, INT_MAX)
    msg = _ints(axes.get("msg_sizes"), "axes.msg_sizes", 0, SIZE_MAX)
    if comm.size == 0 or msg.size == 0:
        raise ValueError("the axes must not be empty")
    if np.any(np.diff(comm) <= 0) or np.any(np.diff(msg) <= 0):
        raise ValueError("axes must be strictly increasing")
    return comm, msg


def _methods(data):
    methods = data.get("methods")
    if not isinstance(methods, list) or not methods:
        raise ValueError("`methods` must be a non-empty array")
    out = []
    for m in methods:
        if not isinstance(m, dict) or not isinstance(m.get("algorithm"), str) or not m["algorithm"].strip():
            raise ValueError("every method needs an `algorithm` name")
        if len(m["algorithm"]) > MAX_NAME:
            raise ValueError(f"an algorithm name is longer than {MAX_NAME} characters")
        out.append(Method(m["algorithm"], _int(m.get("segsize", 0), "a segment size", 0, INT_MAX)))
    if len(set(out)) != len(out):
        raise ValueError("a method appears twice in `methods`")
    return out


def _options(builder):
    known = BuildOptions().__dict__
    if not isinstance(builder, dict) or set(builder) - set(known):
        raise ValueError(f"`builder` must be an object with keys among {', '.join(known)}")
    options = BuildOptions(**{**known, **builder})
    for key in ("split", "between", "pad", "leaf_rule", "outside"):
        if not isinstance(getattr(options, key), str):
            raise ValueError(f"builder.{key} must be a string")
    for key in ("max_depth", "max_leaves"):
        if getattr(options, key) is not None:
            _int(getattr(options, key), f"builder.{key}", 0, BUILD_OPTION_MAX)
    if options.outside_reach is not None:
        if not isinstance(options.outside_reach, dict):
            raise ValueError("builder.outside_reach must be an object")
        options.outside_reach = {side: _int(value, f"builder.outside_reach.{side}", 1, INT64_MAX)
                                 for side, value in options.outside_reach.items()}
    for key in ("accuracy_threshold", "tolerance"):
        value = getattr(options, key)
        if key == "tolerance" and value == "ci":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"builder.{key} must be a finite number")
        setattr(options, key, float(value))
    options.check()
    return options


def _paper_stats(stats):
    """The padded tree's statistics of a midpoint tree, checked (they are shown as they are in reports): `stats.paper`
    (files before it: `stats` itself held them)."""
    if not isinstance(stats, dict):
        raise ValueError("`stats` must be an object")
    if "paper" in stats:
        if not isinstance(stats["paper"], dict):
            raise ValueError("`stats.paper` must be an object")
        stats = stats["paper"]
    out = {key: _int(stats.get(key), f"stats.{key}", 0, INT_MAX) for key in ("depth_min", "depth_max", "leaves",
                                                                            "nodes")}
    mean = stats.get("depth_mean")
    if isinstance(mean, bool) or not isinstance(mean, (int, float)) or not math.isfinite(mean):
        raise ValueError("stats.depth_mean must be a finite number")
    out["depth_mean"] = float(mean)
    return out


def from_json(data, path="<tree>"):
    """The keyword arguments of a SizeTree from a parsed tree file (InputError naming `path`)."""
    try:
        identify(data)
        if data.get("format") != FORMAT_NAME:
            raise ValueError(f"not a quadsel tree file (format is {json.dumps(data.get('format'))[:40]})")
        collective = data.get("collective")
        if not isinstance(collective, str) or not collective or len(collective) > MAX_NAME:
            raise ValueError("`collective` must be a name")
        comm, msg = _axes(data)
        methods = _methods(data)
        provenance = data.get("provenance", {})
        if not isinstance(provenance, dict):
            raise ValueError("`provenance` must be an object")
        sources = provenance.get("sources", [])
        if not isinstance(sources, list) or not all(isinstance(x, str) and len(x) <= 4096 for x in sources):
            raise ValueError("provenance.sources must be a list of file names")
        if not isinstance(provenance.get("library", ""), str):
            raise ValueError("provenance.library must be a name")
        if not isinstance(provenance.get("libmpi", ""), str):
            raise ValueError("provenance.libmpi must be a path")
        if data["version"] == 1:
            tree, options, paper = _from_version_1(data, comm, msg, len(methods))
        else:
            options = _options(data.get("builder"))
            tree_data = typed(data, "tree")
            method = _ints(tree_data.get("method"), "tree.method", 0, len(methods) - 1)
            n = method.size
            tree = Quadtree(_ints(tree_data.get("children"), "tree.children", -1, n - 1, shape_of=4),
                            _ints(tree_data.get("comm_cut"), "tree.comm_cut", -1, INT_MAX),
                            _ints(tree_data.get("msg_cut"), "tree.msg_cut", -1, INT_MAX),
                            method,
                            _ints(tree_data.get("depth"), "tree.depth", 0, INT_MAX))
            paper = _paper_stats(data.get("stats")) if options.split == "midpoint" else None
        outside = options.outside == "default"
        rows = len(Axis.of(comm, options.between, outside, top=COMM_TOP, reach=options.reach("comm")))
        cols = len(Axis.of(msg, options.between, outside, reach=options.reach("msg")))
        if rows * cols > MAX_CELLS:
            raise ValueError(f"a grid of {rows} x {cols} cells: more than {MAX_CELLS} cells")
        tree.validate(rows, cols, len(methods))
        return {"collective": collective, "comm_sizes": comm, "msg_sizes": msg, "methods": methods, "tree": tree,
                "options": options, "provenance": provenance, "paper_stats": paper}
    except (KeyError, TypeError, ValueError, IndexError, OverflowError) as exc:
        raise InputError(path, None, f"invalid quadsel tree file: {exc}") from None


def _from_version_1(data, comm, msg, n_methods):
    """A version-1 file: the paper's padded tree with its padding maps -> the quadtree over the grid's cells."""
    from .midpoint import paper_stats, region_tree
    padding, constraints, tree = typed(data, "padding"), typed(data, "constraints"), typed(data, "tree")
    padded = {key: _ints(tree.get(key), f"tree.{key}", -1, INT_MAX) for key in ("method", "depth", "row", "col", "size")}
    padded["children"] = _ints(tree.get("children"), "tree.children", -1, len(padded["method"]) - 1, shape_of=4)
    padded["row_map"] = _ints(padding.get("row_map"), "padding.row_map", 0, len(comm) - 1)
    padded["col_map"] = _ints(padding.get("col_map"), "padding.col_map", 0, len(msg) - 1)
    side = len(padded["row_map"])
    if len(padded["col_map"]) != side or side & (side - 1) or side < max(len(comm), len(msg)):
        raise ValueError("padding maps must have one power-of-two length covering both axes")
    for name, index, n in (("row_map", padded["row_map"], len(comm)), ("col_map", padded["col_map"], len(msg))):
        if np.any(np.diff(index) < 0) or set(index.tolist()) != set(range(n)):
            raise ValueError(f"padding.{name} must be non-decreasing and cover every axis value")
    if len({len(padded[key]) for key in ("method", "depth", "row", "col", "size", "children")}) != 1:
        raise ValueError("tree arrays are of unequal length")
    _check_padded(padded, side, n_methods)
    options = BuildOptions(split="midpoint", between="floor", pad=str(padding.get("mode", "spread")),
                           max_depth=constraints.get("max_depth"),
                           accuracy_threshold=float(constraints.get("accuracy_threshold", 1.0)),
                           leaf_rule=str(constraints.get("leaf_rule", "majority")))
    options.check()
    return region_tree(padded, len(comm), len(msg)), options, paper_stats(padded)


def _check_padded(padded, side, n_methods):
    """A version-1 tree: children forward, blocks the exact quadrants of their parent, methods in the table."""
    kids, n = padded["children"], len(padded["method"])
    if n and np.any(np.bincount(kids[kids >= 0], minlength=n)[1:] != 1) or (n and np.any(kids == 0)):
        raise ValueError("every node but the root must be the child of exactly one node")
    if n == 0 or padded["row"][0] != 0 or padded["col"][0] != 0 or padded["size"][0] != side:
        raise ValueError("the root must cover the whole padded map")
    if np.any((padded["method"] < 0) | (padded["method"] >= n_methods)):
        raise ValueError("tree refers to a method that is not in the method table")
    for node in range(n):
        row = kids[node]
        if row[0] == -1:
            if np.any(row != -1):
                raise ValueError(f"node {node}: a leaf with children")
            continue
        if np.any(row <= node) or padded["size"][node] < 2:
            raise ValueError("tree children must point forward to existing nodes inside a block of 2 or more")
        h = padded["size"][node] // 2
        for q, child in enumerate(row):
            want = (padded["row"][node] + h * (q // 2), padded["col"][node] + h * (q % 2), h)
            if (padded["row"][child], padded["col"][child], padded["size"][child]) != want:
                raise ValueError(f"node {child}: its block is not quadrant {q} of its parent's")


FOREST_FORMAT = ("quadsel-layout-forest", 1)     # forest_file.py's format and version


def read(path):
    """(the parsed document, its text) of a tree file of either shape: a regular UTF-8 file within its size limit,
    strict JSON, a format and version this quadsel reads, checked against docs/schemas/tree.schema.json -- the one
    checked path of every tree file; what a schema cannot state is checked by from_json and forest_file.from_json."""
    from ..schemas import check_doc, parse
    text = read_text(path, "tree file")
    data = parse(text, path)
    try:
        identify(data)
    except ValueError as exc:
        raise InputError(path, None, f"invalid quadsel tree file: {exc}") from None
    return check_doc(data, path, "tree", text=text), text


def identify(data):
    """ValueError unless `data` is an object of a tree file format and version this quadsel reads."""
    if not isinstance(data, dict):
        raise ValueError("the top level is not an object")
    if data.get("format") == FOREST_FORMAT[0]:
        if data.get("version") != FOREST_FORMAT[1]:
            raise ValueError(f"unsupported layout forest version {json.dumps(data.get('version'))[:20]} (this quadsel "
                             f"reads {FOREST_FORMAT[1]})")
        return
    if data.get("format") != FORMAT_NAME:
        raise ValueError(f"not a quadsel tree file (format is {json.dumps(data.get('format'))[:40]})")
    if data.get("version") not in (1, FORMAT_VERSION):
        raise ValueError(f"unsupported tree file version {json.dumps(data.get('version'))[:20]} "
                         f"(this quadsel reads 1 and {FORMAT_VERSION})")
