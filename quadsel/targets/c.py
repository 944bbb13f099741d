"""§3.2: generate the decision function as nested if/else-if C from a quadtree (Jinja2 template)."""

import re
from typing import NamedTuple, Optional

from .. import __version__
from ..decision.decision_map import Method
from ..errors import QuadselError, escaped
from ..libraries.base import DEFAULT_ALGORITHM
from .escape import C_IDENTIFIER, C_KEYWORDS, comment_text, identifier_part, reserved_c_name  # noqa: F401
from .templating import render

LIBRARIES = ("openmpi", "mpich")


class AlgorithmId(NamedTuple):
    expr: str                 # the C expression a function returns (a number or a #define's name)
    define: Optional[dict]    # the #define entry, or None
    number: int               # its value


def library_of(fn, library=None):
    """The MPI library whose algorithm ids fn's C returns: `library`, else the tree's provenance, else None."""
    text = re.sub(r"[^a-z]", "", str(library or fn.provenance.get("library") or "").lower())
    if text.startswith(("openmpi", "ompi")):
        return "openmpi"
    return "mpich" if text.startswith("mpich") else None


def algorithm_ids(methods, collective, library=None):
    """Algorithm name -> AlgorithmId: the id the generated C returns for it.

    library "openmpi": coll/tuned ids (numeric names as they are, names through openmpi.algorithm_id);
    "mpich": the value of MPIR_CVAR_<COLL>_INTRA_ALGORITHM's enum (0 = auto, then MPICH's algorithm list in
    order). Unknown library: numeric names are Open MPI ids and used as they are; otherwise every algorithm
    gets an id 1..n in method-table order and a #define with a sanitized identifier.
    """
    names = list(dict.fromkeys(m.algorithm for m in methods))
    if DEFAULT_ALGORITHM in names:     # a region handed back to the library: 0, "no decision" (Open MPI 0, MPICH auto)
        names.remove(DEFAULT_ALGORITHM)
        return {DEFAULT_ALGORITHM: _plain_id(0), **algorithm_ids([Method(n) for n in names], collective, library)}
    if library == "openmpi":
        from ..libraries import openmpi
        return {name: _plain_id(openmpi.algorithm_id(collective, name)) for name in names}
    if library == "mpich":
        from ..libraries import mpich
        return {name: _plain_id(1 + mpich.ALGORITHMS[collective].index(mpich.container(collective, name)[0]))
                for name in names}
    if library is not None:
        raise QuadselError(f"unknown library {library!r} (choose from {', '.join(LIBRARIES)})")
    if all(name.isdigit() for name in names):
        return {name: _plain_id(int(name)) for name in names}
    prefix = f"QUADSEL_{identifier_part(collective)}_ALG_"
    ids, used = {}, set()
    for number, name in enumerate(names, start=1):
        macro = prefix + identifier_part(name)
        candidate, n = macro, 2
        while candidate in used:
            candidate, n = f"{macro}_{n}", n + 1
        used.add(candidate)
        ids[name] = AlgorithmId(candidate, {"macro": candidate, "id": number, "comment": comment_text(name)}, number)
    return ids


def _plain_id(number):
    return AlgorithmId(str(int(number)), None, int(number))


def id_legend(ids, library, collective):
    """One comment line naming what every returned id is (no names from input files but escaped)."""
    scheme = {"openmpi": f"Open MPI coll_tuned_{identifier_part(collective).lower()}_algorithm",
              "mpich": f"MPICH MPIR_CVAR_{identifier_part(collective)}_INTRA_ALGORITHM"}.get(library)
    names = {name: name for name in ids}
    if DEFAULT_ALGORITHM in ids:
        rest = {n: a for n, a in ids.items() if n != DEFAULT_ALGORITHM}
        text = id_legend(rest, library, collective) if rest else "Algorithm ids: ."
        return text[:-1] + (", " if rest else "") + "0 = no decision: the library's own choice (Open MPI's " \
            "algorithm 0, MPICH's auto)."
    if scheme is None and any(aid.define for aid in ids.values()):
        scheme = "quadsel's numbering"
    elif scheme is None:
        from ..libraries import openmpi
        known = openmpi.ALGORITHMS.get(collective, {})
        if all(aid.number in known for aid in ids.values()):     # numeric names read as coll/tuned ids
            scheme = "the input's numeric names, Open MPI coll/tuned ids"
            names = {name: known[aid.number] for name, aid in ids.items()}
        else:
            scheme = "the input's numeric names"
    elif library == "openmpi":
        from ..libraries import openmpi
        names = {name: openmpi.algorithm_name(collective, aid.number) for name, aid in ids.items()}
    pairs = ", ".join(f"{aid.number} = {comment_text(names[name])}" for name, aid in ids.items())
    return f"Algorithm ids ({scheme}): {pairs}."


def function_name(collective, name=None):
    name = name or f"quadsel_{identifier_part(collective).lower()}_decision"
    why = reserved_c_name(name)
    if why:
        raise QuadselError(f"--name {escaped(name)!r} {why}: choose another function name")
    return name


def measured_range(fn):
    """The header line that says which sizes the tree was measured on and who decides outside them."""
    outside = ("the library decides (0 is returned)" if fn.options.outside == "default"
               else "the nearest measured size decides (extrapolated)")
    return (f"measured: comm sizes {int(fn.comm_sizes[0])}-{int(fn.comm_sizes[-1])}, message sizes "
            f"{int(fn.msg_sizes[0])}-{int(fn.msg_sizes[-1])} bytes; outside them {outside}")


def size_argument(fn):
    """The header line that says which message size the function takes (the decision map's, libraries/sizes.py)."""
    from ..libraries.sizes import PER_RANK
    meaning = PER_RANK.get(fn.collective, "bytes per rank")
    return (f"msg_size: bytes per rank, as the benchmarks print it -- {comment_text(meaning)} "
            f"(docs/collectives.md); not the total some rules files match on")


def common_context(fn, name, ids, library):
    """What every C template's header needs."""
    return {"name": function_name(fn.collective, name),
            "collective_title": comment_text(fn.collective.capitalize()),
            "version": __version__,
            "constraint": comment_text(fn.constraint),
            "stats": fn.tree.stats(),
            "between": fn.options.between,
            "outside": fn.options.outside,
            "source_lines": [size_argument(fn), measured_range(fn)] +
                            [f"source: {comment_text(s)}" for s in fn.provenance.get("sources", [])],
            "id_legend": id_legend(ids, library, fn.collective),
            "id_defines": [aid.define for aid in ids.values() if aid.define]}


def generate_c(fn, name=None, merge=True, library=None):
    """C source of `int NAME(int comm_size, size_t msg_size, int *segsize)` for a DecisionFunction.

    merge=True: the merged if/else-if (c_branches.py); False: the paper's one `if` per quadrant. With a known
    `library` the function returns that library's own algorithm ids (algorithm_ids).
    """
    from .c_branches import emit_branches, function_size
    library = library_of(fn, library)
    ids = algorithm_ids(fn.methods, fn.collective, library)
    size = function_size(fn, merge)
    return render("c_decision.c.j2", body=emit_branches(fn, ids, merge), merge=merge, size=size,
                  paper_size=function_size(fn, False) if merge else size, **common_context(fn, name, ids, library))
