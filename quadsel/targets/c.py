"""§3.2: generate the decision function as nested if/else-if C from a quadtree (Jinja2 template)."""

import re

import numpy as np

from .. import __version__
from ..errors import QuadselError, printable
from .templating import render

C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
C_KEYWORDS = frozenset("auto break case char const continue default do double else enum extern float for goto if "
                       "inline int long register restrict return short signed sizeof static struct switch typedef "
                       "union unsigned void volatile while _Bool _Complex _Imaginary".split())


def comment_text(text):
    """Text safe inside a C block comment: printable ASCII only, no comment terminator."""
    return printable(text).replace("*/", "* /").replace("/*", "/ *")


def identifier_part(text):
    """An upper-case C identifier fragment from an arbitrary algorithm name."""
    part = re.sub(r"[^A-Za-z0-9]+", "_", str(text)).strip("_").upper()
    return part or "ALG"


def algorithm_ids(methods, collective):
    """Algorithm name -> (C expression for its id, #define entry or None).

    Numeric names are Open MPI coll/tuned ids and are used as they are; otherwise every algorithm gets
    an id 1..n in method-table order and a #define with a sanitized identifier.
    """
    names = list(dict.fromkeys(m.algorithm for m in methods))
    if all(name.isdigit() for name in names):
        return {name: (str(int(name)), None) for name in names}
    prefix = f"QUADSEL_{identifier_part(collective)}_ALG_"
    ids, used = {}, set()
    for number, name in enumerate(names, start=1):
        macro = prefix + identifier_part(name)
        candidate, n = macro, 2
        while candidate in used:
            candidate, n = f"{macro}_{n}", n + 1
        used.add(candidate)
        ids[name] = (candidate, {"macro": candidate, "id": number, "comment": comment_text(name)})
    return ids


def function_name(collective, name=None):
    name = name or f"quadsel_{identifier_part(collective).lower()}_decision"
    if not C_IDENTIFIER.match(name) or name in C_KEYWORDS:
        raise QuadselError(f"--name {name!r} is not a valid C identifier")
    return name


def _conditions(fn, node, quadrant):
    """C condition of one quadrant of `node`, in real communicator and message sizes."""
    (a, b), (c, d) = fn.node_ranges(node)
    (ca, cb), (ma, mb) = fn.node_ranges(int(fn.tree.children[node, quadrant]))
    terms = []
    south, east = quadrant >= 2, quadrant % 2 == 1
    if a < ca or cb < b:   # the node's comm range is split between north and south
        threshold = int(fn.comm_sizes[ca if south else cb])
        terms.append(f"comm_size {'>=' if south else '<'} {threshold}")
    if c < ma or mb < d:
        threshold = int(fn.msg_sizes[ma if east else mb])
        terms.append(f"msg_size {'>=' if east else '<'} (size_t){threshold}")
    return " && ".join(terms)


def _uniform_methods(fn):
    """Per node: its method when every reachable leaf below it has the same one, else -1."""
    tree, uniform = fn.tree, np.full(fn.tree.n_nodes, -1)
    for node in range(tree.n_nodes - 1, -1, -1):     # children come after their parent
        if tree.children[node, 0] < 0:
            uniform[node] = tree.method[node]
        else:
            below = {int(uniform[child]) for _, child in fn.reachable_children(node)}
            uniform[node] = below.pop() if len(below) == 1 else -1
    return uniform


def emit_branches(fn, ids):
    """The nested if/else-if body (§3.2), one statement per line, indented for a function body.

    Quadrants that hold only padding copies are left out, and a subtree whose reachable leaves all carry
    one method becomes a single assignment (the merge of same-colour conditions §3.2 leaves as future work).
    """
    uniform, out = _uniform_methods(fn), []

    def emit(node, indent):
        pad = "    " * indent
        if uniform[node] >= 0:
            method = fn.methods[int(uniform[node])]
            out.append(f"{pad}alg = {ids[method.algorithm][0]}; seg = {method.segsize}; /* {comment_text(method.label)} */")
            return
        branches = fn.reachable_children(node)
        if len(branches) == 1:   # the other quadrants hold only padding copies: no test needed
            emit(branches[0][1], indent)
            return
        for i, (quadrant, child) in enumerate(branches):
            keyword = "if" if i == 0 else "} else if"
            out.append(f"{pad}{keyword} ({_conditions(fn, node, quadrant)}) {{ /* {('NW', 'NE', 'SW', 'SE')[quadrant]} */")
            emit(child, indent + 1)
        out.append(f"{pad}}}")

    emit(0, 1)
    return "\n".join(out)


def _common_context(fn, name, ids):
    return {"name": function_name(fn.collective, name),
            "collective_title": comment_text(fn.collective.capitalize()),
            "version": __version__,
            "constraint": comment_text(fn.constraint),
            "stats": fn.tree.stats(),
            "source_lines": [f"source: {comment_text(s)}" for s in fn.provenance.get("sources", [])],
            "id_defines": [entry for _, entry in ids.values() if entry]}


def generate_c(fn, name=None):
    """C source of `int NAME(int comm_size, size_t msg_size, int *segsize)` for a DecisionFunction."""
    ids = algorithm_ids(fn.methods, fn.collective)
    return render("c_decision.c.j2", body=emit_branches(fn, ids), **_common_context(fn, name, ids))


def generate_c_table(fn, name=None):
    """The same function as a loadable node table walked at run time (§3.3, emlearn's second C form)."""
    ids = algorithm_ids(fn.methods, fn.collective)
    t = fn.tree
    nodes = [list(map(int, t.children[n])) + [int(t.row[n]), int(t.col[n]), int(t.size[n]), int(t.method[n])]
             for n in range(t.n_nodes)]
    methods = [{"alg": ids[m.algorithm][0], "seg": int(m.segsize)} for m in fn.methods]
    return render("c_table.c.j2", comm_sizes=[int(v) for v in fn.comm_sizes],
                  msg_sizes=[f"(size_t){int(v)}" for v in fn.msg_sizes], first_row=fn.first_row.tolist(),
                  first_col=fn.first_col.tolist(), nodes=nodes, methods=methods, **_common_context(fn, name, ids))
