"""The tree file of a decision function with the layout key (format `quadsel-layout-forest`, docs/formats-tree.md):
writing it, and its structure read back checked (after tree_file.read's schema check).

The file lists the layers, each a ppn bound, the measured ppn and node counts it was built from and a complete size
tree document, read by the tree file's own checked reader (tree_file.from_json). Any fault is one InputError
naming the file and, where it can be told, the line of the layer at fault.
"""

import json
import re

from ..errors import InputError
from ..inputs import INT_MAX
from . import tree_file

FORMAT_NAME, FORMAT_VERSION = tree_file.FOREST_FORMAT
MAX_MEMBERS = 4096


def to_json(fn):
    """The document of a DecisionFunction with the layout key."""
    from .. import __version__
    return {"format": FORMAT_NAME, "version": FORMAT_VERSION, "collective": fn.collective,
            "query": "the first layout whose ppn is >= the query's ppn (MPICH comm_avg_ppn<=P), else the last",
            "layouts": [{"ppn": layer.ppn, "measured_ppn": list(layer.measured_ppn), "nodes": list(layer.nodes),
                         "tree": tree_file.to_json(layer.tree)} for layer in fn.layers],
            "stats": fn.stats(),
            "provenance": {"quadsel_version": __version__, **fn.provenance}}


def is_forest(data):
    return isinstance(data, dict) and data.get("format") == FORMAT_NAME


def from_json(data, path="<forest>", text=None):
    """(collective, [(ppn bound, measured ppn, nodes, SizeTree keyword arguments)], provenance) of a parsed file."""
    lines = _member_lines(text) if text is not None else []
    try:
        if not is_forest(data):
            raise ValueError("not a quadsel layout forest")
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(f"unsupported layout forest version {json.dumps(data.get('version'))[:20]} (this quadsel "
                             f"reads {FORMAT_VERSION})")
        collective = data.get("collective")
        if not isinstance(collective, str) or not collective or len(collective) > tree_file.MAX_NAME:
            raise ValueError("`collective` must be a name")
        layouts = data.get("layouts")
        if not isinstance(layouts, list) or not layouts or len(layouts) > MAX_MEMBERS:
            raise ValueError(f"`layouts` must be a non-empty array of at most {MAX_MEMBERS} members")
        provenance = data.get("provenance", {})
        if not isinstance(provenance, dict):
            raise ValueError("`provenance` must be an object")
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(path, None, f"invalid quadsel layout forest: {exc}") from None
    members, previous = [], 0
    for i, entry in enumerate(layouts):
        line = lines[i] if len(lines) == len(layouts) else None
        try:
            members.append(_member(entry, collective, previous, path))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(path, line, f"invalid quadsel layout forest: layout {i + 1}: {exc}") from None
        except InputError as exc:      # the member's tree, refused by the tree file's reader
            raise InputError(path, line, f"layout {i + 1} (ppn {entry.get('ppn')}): {exc.message}") from None
        previous = members[-1][0]
    return collective, members, {k: v for k, v in provenance.items() if k != "quadsel_version"}


def _member(entry, collective, previous, path):
    if not isinstance(entry, dict) or set(entry) - {"ppn", "measured_ppn", "nodes", "tree"}:
        raise ValueError("a layout is an object with ppn, measured_ppn, nodes and tree")
    ppn = tree_file._int(entry.get("ppn"), "ppn", 1, INT_MAX)
    if ppn <= previous:
        raise ValueError("the layouts' ppn must be strictly increasing")
    measured = [tree_file._int(v, "measured_ppn", previous + 1, ppn) for v in tree_file.typed(entry, "measured_ppn", list)]
    nodes = [tree_file._int(v, "nodes", 1, INT_MAX) for v in tree_file.typed(entry, "nodes", list)]
    if not measured or not nodes or measured != sorted(set(measured)) or nodes != sorted(set(nodes)):
        raise ValueError("measured_ppn and nodes must be non-empty and strictly increasing")
    tree = entry.get("tree")
    fn_args = tree_file.from_json(tree, path)
    if fn_args["collective"] != collective:
        raise ValueError(f"its tree is of {fn_args['collective']!r}, the forest of {collective!r}")
    axis = set(int(c) for c in fn_args["comm_sizes"])
    for n in nodes:     # every measured layout is a measured communicator size of the member's tree
        if not any(n * p in axis for p in measured):
            raise ValueError(f"nodes {n} x measured ppn {measured[0] if len(measured) == 1 else measured} is not a "
                             "communicator size of its tree")
    return ppn, measured, nodes, fn_args


def _member_lines(text):
    """The line where each member of the top-level `layouts` array starts ([] when it cannot be told)."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r'"layouts"\s*:\s*\[', text):
        at, lines = match.end(), []
        try:
            while True:
                at = _skip(text, at)
                if text[at] == "]":
                    return lines
                lines.append(text.count("\n", 0, at) + 1)
                _, at = decoder.raw_decode(text, at)
                at = _skip(text, at)
                if text[at] == ",":
                    at += 1
        except (ValueError, IndexError, RecursionError):
            continue
    return []


def _skip(text, at):
    while text[at] in " \t\r\n":
        at += 1
    return at
