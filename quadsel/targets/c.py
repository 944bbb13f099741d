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


def _uniform_methods(fn):
    """Per node: its method when every leaf below it has the same one, else -1."""
    tree, uniform = fn.tree, np.full(fn.tree.n_nodes, -1)
    for node in range(tree.n_nodes - 1, -1, -1):     # children come after their parent
        kids = [int(k) for k in tree.children[node] if k >= 0]
        if not kids:
            uniform[node] = tree.method[node]
        else:
            below = {int(uniform[k]) for k in kids}
            uniform[node] = below.pop() if len(below) == 1 else -1
    return uniform


def emit_branches(fn, ids):
    """The nested if/else body (§3.2), one statement per line, indented for a function body.

    Each internal node tests its communicator cut, then in each half its message cut, on the real sizes
    (`comm_size < 5`, `msg_size < (size_t)4097`); a subtree (or a half) whose leaves all carry one method
    becomes a single assignment.
    """
    tree, uniform, out = fn.tree, _uniform_methods(fn), []
    comm_lo, msg_lo = fn.comm_axis.lo, fn.msg_axis.lo

    def assign(method_index, pad):
        method = fn.methods[int(method_index)]
        out.append(f"{pad}alg = {ids[method.algorithm][0]}; seg = {method.segsize}; /* {comment_text(method.label)} */")

    def emit(node, indent):
        if uniform[node] >= 0:
            assign(uniform[node], "    " * indent)
            return
        kids, comm_cut, msg_cut = tree.children[node], int(tree.comm_cut[node]), int(tree.msg_cut[node])
        halves = [(kids[0], kids[1]), (kids[2], kids[3])] if comm_cut >= 0 else [(kids[0], kids[1])]
        pad = "    " * indent
        if comm_cut >= 0:
            out.append(f"{pad}if (comm_size < {int(comm_lo[comm_cut])}) {{ /* north */")
        for h, (west, east) in enumerate(halves):
            inner = indent + (comm_cut >= 0)
            if h == 1:
                out.append(f"{pad}}} else {{ /* south */")
            same = {int(uniform[k]) for k in (west, east) if k >= 0}
            if msg_cut < 0 or (len(same) == 1 and same != {-1}):
                emit(int(west), inner)
                continue
            ipad = "    " * inner
            out.append(f"{ipad}if (msg_size < (size_t){int(msg_lo[msg_cut])}) {{ /* west */")
            emit(int(west), inner + 1)
            out.append(f"{ipad}}} else {{ /* east */")
            emit(int(east), inner + 1)
            out.append(f"{ipad}}}")
        if comm_cut >= 0:
            out.append(f"{pad}}}")

    emit(0, 1)
    return "\n".join(out)


def _common_context(fn, name, ids):
    return {"name": function_name(fn.collective, name),
            "collective_title": comment_text(fn.collective.capitalize()),
            "version": __version__,
            "constraint": comment_text(fn.constraint),
            "stats": fn.tree.stats(),
            "between": fn.options.between,
            "source_lines": [f"source: {comment_text(s)}" for s in fn.provenance.get("sources", [])],
            "id_defines": [entry for _, entry in ids.values() if entry]}


def generate_c(fn, name=None):
    """C source of `int NAME(int comm_size, size_t msg_size, int *segsize)` for a DecisionFunction."""
    ids = algorithm_ids(fn.methods, fn.collective)
    return render("c_decision.c.j2", body=emit_branches(fn, ids), **_common_context(fn, name, ids))


def generate_c_table(fn, name=None):
    """The same function as a node table walked at run time (§3.3, emlearn's second C form)."""
    ids = algorithm_ids(fn.methods, fn.collective)
    t = fn.tree
    nodes = [list(map(int, t.children[n])) + [int(fn.comm_axis.lo[t.comm_cut[n]]) if t.comm_cut[n] >= 0 else -1,
                                              int(t.msg_cut[n]), int(t.method[n])] for n in range(t.n_nodes)]
    methods = [{"alg": ids[m.algorithm][0], "seg": int(m.segsize)} for m in fn.methods]
    return render("c_table.c.j2", msg_lo=[f"(size_t){int(v)}" for v in fn.msg_axis.lo], nodes=nodes,
                  methods=methods, **_common_context(fn, name, ids))
