"""What every C form shares (if/else-if, grid table, node table, blob, Open MPI's fixed decision): the algorithm ids a
function returns, their legend, the function's name, size argument and measured range, the template context."""

from typing import NamedTuple, Optional

from .. import __version__
from ..decision.decision_map import Method
from ..errors import QuadselError, escaped
from ..libraries.base import DEFAULT_ALGORITHM
from .escape import comment_text, identifier_part, reserved_c_name
from ..libraries import alphatree, get as get_library


class AlgorithmId(NamedTuple):
    expr: str                 # the C expression a function returns (a number or a #define's name)
    define: Optional[dict]    # the #define entry, or None
    number: int               # its value


def tree_library(fn):
    """The MPI library a tree's measurements came from (its provenance), normalised; None when unknown."""
    from ..libraries import library_name
    text = fn.provenance.get("library")
    return library_name(text, where="tree provenance") if text else None


def library_of(fn, library=None):
    """The MPI library whose algorithm ids fn's C returns: `library`, else the tree's provenance, else None.

    A `library` other than the tree's own is an error: the tree's ids and names are its library's."""
    from ..libraries import library_name, title
    own = tree_library(fn)
    wanted = library_name(library) if library else None
    if wanted and own and wanted != own:
        raise QuadselError(f"the {fn.collective} tree was built from {title(own)} measurements; --library "
                           f"{title(wanted)} differs (its ids would name other algorithms)")
    return wanted or own


def algorithm_ids(methods, collective, library=None):
    """Algorithm name -> AlgorithmId: the id the generated C returns for it.

    A library quadsel has tables for: its class's `c_id` (Open MPI coll/tuned ids, numeric names as they are;
    MPICH the value of MPIR_CVAR_<COLL>_INTRA_ALGORITHM's enum, 0 = auto, then its algorithm list in order; Intel
    MPI's presets). Unknown library: numeric names are Open MPI ids and used as they are; otherwise every
    algorithm gets an id 1..n in method-table order and a #define with a sanitized identifier.
    """
    names = list(dict.fromkeys(m.algorithm for m in methods))
    if DEFAULT_ALGORITHM in names:     # a region handed back to the library: 0, "no decision" (Open MPI 0, MPICH auto)
        names.remove(DEFAULT_ALGORITHM)
        return {DEFAULT_ALGORITHM: _plain_id(0), **algorithm_ids([Method(n) for n in names], collective, library)}
    alphas = {name: _plain_id(alphatree.method_id(alphatree.parse(name))) for name in names
              if alphatree.is_alpha(name)}
    if alphas:    # quadsel's α-trees: their own ids (libraries/alphatree.py), the library's ids for the rest
        rest = algorithm_ids([Method(n) for n in names if n not in alphas], collective, library)
        return {name: alphas.get(name) or rest[name] for name in names}
    own = get_library(library)
    if own.known:
        return {name: _plain_id(own.c_id(collective, name)) for name in names}
    if all(name.isascii() and name.isdigit() for name in names):   # unknown or another library: ids as they are
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
    own = get_library(library)
    scheme = own.id_scheme(identifier_part(collective))
    names = {name: name for name in ids}
    if DEFAULT_ALGORITHM in ids:
        rest = {n: a for n, a in ids.items() if n != DEFAULT_ALGORITHM}
        text = id_legend(rest, library, collective) if rest else "Algorithm ids: ."
        return text[:-1] + (", " if rest else "") + "0 = no decision: the library's own choice (Open MPI's " \
            "algorithm 0, MPICH's auto)."
    if scheme is None and any(aid.define for aid in ids.values()):
        scheme = "quadsel's numbering"
    elif scheme is None and library is not None:
        scheme = f"{comment_text(library)}'s own ids, as measured"
    elif scheme is None:
        from ..libraries import openmpi
        known = openmpi.ALGORITHMS.get(collective, {})
        if all(aid.number in known for aid in ids.values()):     # numeric names read as coll/tuned ids
            scheme = "the input's numeric names, Open MPI coll/tuned ids"
            names = {name: known[aid.number] for name, aid in ids.items()}
        else:
            scheme = "the input's numeric names"
    elif own.numbered:
        names = {name: own.algorithm_name(collective, aid.number) for name, aid in ids.items()}
    alphas = {name: aid for name, aid in ids.items() if alphatree.is_alpha(name)}
    if alphas:
        rest = {name: aid for name, aid in ids.items() if name not in alphas}
        legend = id_legend(rest, library, collective) + " " if rest else ""
        pairs = ", ".join(f"{aid.number} = {name}" for name, aid in alphas.items())
        return (legend + f"quadsel alpha-tree ids (no MPI library ships this algorithm; QUADSEL_ALPHA_* below "
                f"decode them): {pairs}.")
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
    from ..decision.library_default import handed_words
    words = handed_words(fn)      # some sides handed back, or beyond a bound (decision/library_default.py, issue 39)
    if words:
        outside += f" {words}, the nearest measured size elsewhere (extrapolated)"
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
            "outside": "sides" if fn.options.outside_sides or fn.options.outside_reach else fn.options.outside,
            "source_lines": [size_argument(fn), measured_range(fn)] +
                            [f"source: {comment_text(s)}" for s in fn.provenance.get("sources", [])],
            "id_legend": id_legend(ids, library, fn.collective),
            "id_defines": [aid.define for aid in ids.values() if aid.define],
            "alpha_macros": alphatree.C_MACROS if any(alphatree.is_alpha(name) for name in ids) else ()}
