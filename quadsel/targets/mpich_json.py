"""MPICH collective selection JSON (csel; MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE): writer and reader.

The writer turns rule lists into `comm_size<=` / `avg_msg_size<=` keys down to `algorithm=` containers,
behind the conditions MPICH itself puts on some algorithms; MPICH replaces its whole selection with the
file, so a deployable file keeps MPICH's own selection (`load_base`) for every other collective.
The reader checks a file the way MPICH's csel parser does (it aborts on what it does not know) and
answers which container MPICH selects for a call: sibling keys in order, the first that holds wins.
"""

import json
import os
import re

from ..errors import InputError, QuadselError, printable
from ..inputs import INT_MAX, fits, read_bytes, shorten
from ..libraries import mpich, sizes
from ..libraries.base import DEFAULT_ALGORITHM
from ..json_lines import JObject
from .layout_rules import layout_rules


def _container(collective, method):
    if method.segsize:
        raise QuadselError(f"MPICH algorithms take no segment size, but the tree has {printable(method.label)!r}")
    key, _ = mpich.container(collective, method.algorithm)
    return _leaf(collective, key, guarded=True)


def _leaf(collective, key, guarded):
    name = mpich.container(collective, key)[1]
    leaf = {f"algorithm={name}": {f"{k}={v}": {} for k, v in mpich.PARAMETERS.get((collective, key), {}).items()}}
    if guarded and key == "smp" and collective in mpich.HIERARCHY_FALLBACK:
        fallback = _leaf(collective, mpich.HIERARCHY_FALLBACK[collective], guarded=False)
        return {"comm_hierarchy=parent": _condition(collective, key, leaf), "comm_hierarchy=any": fallback}
    return _condition(collective, key, leaf) if guarded else leaf


def _condition(collective, key, leaf):
    """`leaf` behind the operation/communicator condition MPICH puts on this algorithm, if any."""
    if (collective, key) not in mpich.GUARDS:
        return leaf
    condition, fallback = mpich.GUARDS[(collective, key)]
    other = _leaf(collective, fallback, guarded=False)
    if condition == "commutative":
        return {"is_commutative=yes": leaf, "is_commutative=no": other}
    if condition == "pow2_comm":
        return {"comm_size=pow2": leaf, "comm_size=any": other}
    return {"is_op_built_in=yes": {"count<pow2": other, "count=any": leaf}, "is_op_built_in=no": other}


def _own_selection(collective, base):
    """MPICH's own intra-communicator selection of `collective` (its `auto`), for a region handed back to it."""
    own = (base or {}).get(f"collective={collective.lower()}", {})
    intra = own.get("comm_type=intra") if isinstance(own, dict) else None
    if isinstance(own, dict) and own and not any(k.startswith("comm_type=") for k in own):
        intra = own          # a selection without a comm_type level (MPICH 4.x's exscan): it holds for intra too
    if not isinstance(intra, dict):
        raise QuadselError(f"the {collective} tree hands regions back to MPICH's own selection: give --mpich-base "
                           "(MPICH's libmpi.so or tuning JSON) so that the file can carry it there")
    return json.loads(json.dumps(intra))


def selection(rl, base=None):
    """The `collective=...` subtree of one rule list: comm_size<= upper ends, then <key><= upper ends where the
    key is what csel computes for the collective (avg_msg_size or total_msg_size, libraries/sizes.py); a
    collective csel keys on no message size gets its container straight under the comm size. A region of the
    library default gets MPICH's own selection from `base` (its `auto`)."""
    by_comm = {}
    key = sizes.key(mpich.NAME, rl.collective).name
    for lo, hi, msgs in rl.ranges():
        inner = {}
        for m_lo, m_hi, method in msgs:
            leaf = (_own_selection(rl.collective, base) if method.algorithm == DEFAULT_ALGORITHM
                    else _container(rl.collective, method))
            if key is None:
                inner = leaf
                break
            if m_hi is not None and m_hi > INT_MAX:
                raise QuadselError(f"{rl.collective}: MPICH reads {key} bounds as a C int, and {m_hi} (comm sizes "
                                   f"{lo}-{hi if hi else 'up'}) is beyond {INT_MAX}: measure smaller messages or "
                                   f"fewer ranks for this file")
            inner[f"{key}=any" if m_hi is None else f"{key}<={m_hi}"] = leaf
        by_comm["comm_size=any" if hi is None else f"comm_size<={hi}"] = inner
    inter = {f"algorithm={mpich.INTER[rl.collective]}": {}} if rl.collective in mpich.INTER else None
    return {"comm_type=intra": by_comm, **({"comm_type=inter": inter} if inter else {})}


def function_selection(fn, base=None):
    """The `collective=...` subtree of a decision function. With the layout key, `comm_avg_ppn<=P` blocks
    outermost, one per layer, the last one `comm_avg_ppn=any`, each holding its layer's comm_size / message rules.
    MPICH's csel takes a block when the communicator is node-aware and comm_size <= P x nodes, i.e.
    ceil(comm_size / nodes) <= P: the function's own rule; a communicator without node information (MPICH's
    internal node and node-roots sub-communicators) takes the last block (docs/formats-output.md)."""
    rules = layout_rules(fn, mpich.NAME)
    if not rules.has_layout:
        return selection(rules.layers[0][1], base)
    blocks, inter = {}, None
    for i, (ppn, rl) in enumerate(rules.layers):
        own = selection(rl, base)
        blocks[f"comm_avg_ppn<={ppn}" if i + 1 < len(rules.layers) else "comm_avg_ppn=any"] = own["comm_type=intra"]
        inter = own.get("comm_type=inter", inter)
    return {"comm_type=intra": blocks, **({"comm_type=inter": inter} if inter else {})}


def document(fns, base=None):
    """The MPICH selection: `base` (MPICH's own selection, a dict) with our collectives replaced.

    MPICH replaces its whole built-in selection with the file and aborts on a collective the file does not
    cover, so a deployable file needs the base; base=None gives our collectives only.
    """
    ours = {}
    for fn in fns:
        if fn.collective.lower() in {key[len("collective="):] for key in ours}:
            raise QuadselError(f"two trees for collective {fn.collective!r}: give one tree per collective")
        ours[f"collective={fn.collective.lower()}"] = function_selection(fn, base)
    if base is None:
        return ours
    merged = {}
    for key, value in base.items():
        merged[key] = ours.pop(key) if key in ours else value
    merged.update(ours)
    return merged


def emit(fns, base=None):
    return json.dumps(document(fns, base), indent=1) + "\n"


MAX_SCRIPT_HOPS = 8    # linker scripts standing in for the library (INPUT(libmpi.so.12)), followed at most so many


def load_base(path, _seen=()):
    """MPICH's own collective selection, from a tuning JSON file or from the libmpi that embeds it, checked whole:
    strict JSON, docs/schemas/mpich-base.schema.json (quadsel/schemas.py), then every key and algorithm as
    MPICH's parser checks them (`check`). Keys are written back without spaces (`collective = bcast` is
    `collective=bcast`, so the tree's own collective replaces it); two keys equal without spaces are refused."""
    real = os.path.realpath(path)
    if real in _seen or len(_seen) >= MAX_SCRIPT_HOPS:
        raise InputError(path, 1, "a linker script that includes itself (or more than "
                                  f"{MAX_SCRIPT_HOPS} scripts deep): give MPICH's libmpi.so or its tuning JSON")
    data = read_bytes(path, what="MPICH library")   # regular files only, size-limited
    if data.lstrip()[:1] == b"{":
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise InputError(path, None, "not a UTF-8 text file") from None
        return checked_base(text, path)
    script = re.match(rb"\s*(?:INPUT|GROUP)\s*\(\s*([^\s)]+)", data)
    if script:   # a linker script standing in for the library (the mpich wheel's libmpi.so)
        name = os.path.basename(script.group(1).decode("latin-1"))
        target = os.path.join(os.path.dirname(os.path.abspath(path)), name)
        return load_base(target, tuple(_seen) + (real,))
    # a shared library: MPICH compiles its MPIR-level selection in as one JSON string
    text, best = data.decode("latin-1"), None
    decoder = json.JSONDecoder()
    for match in re.finditer(r'\{"collective=', text):
        try:
            doc, end = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            continue
        if "algorithm=MPIR_" in json.dumps(doc) and (best is None or len(doc) > len(best[0])):
            best = doc, text[match.start():end]
    if best is None:
        raise InputError(path, None, "found no MPICH collective selection in it (give MPICH's tuning JSON instead)")
    return checked_base(best[1], f"{path} (its embedded selection)")


def checked_base(text, path):
    """The selection in `text`, checked (schema, then MPICH's own rules) and with its keys written without spaces."""
    from ..json_lines import parse_json_lines
    from ..schemas import check_json
    check_json(text, path, "mpich-base")
    doc = parse_json_lines(text, path)
    check(doc, path)

    def plain(node):
        out, lines = {}, {}
        for key, line, child in node.items:
            ckey = key.replace(" ", "")
            if ckey in out:
                raise InputError(path, line, f"the key {shorten(printable(key), 60)!r} stands twice in one object "
                                             f"(line {lines[ckey]} too, spaces aside): MPICH would read only one")
            out[ckey], lines[ckey] = plain(child), line
        return out
    return plain(doc)


BOOLEAN_KEYS = {"is_multi_threaded", "comm_type", "comm_hierarchy", "is_node_consecutive", "is_sendbuf_inplace",
                 "is_block_regular", "is_commutative", "is_op_built_in", "collective"}
_KEY = re.compile(r"^(?P<name>[a-z_]+)(?P<op><=|<|=)(?P<value>.*)$")
_FIXED_VALUES = {
    "is_multi_threaded": ("yes", "no"), "comm_type": ("intra", "inter"),
    "comm_hierarchy": ("parent", "node_roots", "node", "flat"), "is_node_consecutive": ("yes", "no"),
    "is_sendbuf_inplace": ("yes", "no"), "is_block_regular": ("yes", "no"), "is_commutative": ("yes", "no"),
    "is_op_built_in": ("yes", "no"),
}
_NUMERIC_KEYS = {"comm_size", "count", "avg_msg_size", "total_msg_size", "comm_avg_ppn"}
COLLECTIVES = (
    "allgather allgatherv allreduce alltoall alltoallv alltoallw barrier bcast exscan gather gatherv iallgather "
    "iallgatherv iallreduce ialltoall ialltoallv ialltoallw ibarrier ibcast iexscan igather igatherv "
    "ineighbor_allgather ineighbor_allgatherv ineighbor_alltoall ineighbor_alltoallv ineighbor_alltoallw ireduce "
    "ireduce_scatter ireduce_scatter_block iscan iscatter iscatterv neighbor_allgather neighbor_allgatherv "
    "neighbor_alltoall neighbor_alltoallv neighbor_alltoallw reduce reduce_scatter reduce_scatter_block scan "
    "scatter scatterv").split()
# what the verify harness itself calls (mpi4py Split/Dup/gather, barriers): MPICH aborts on an uncovered one
HARNESS_COLLECTIVES = ("barrier", "allgather", "allreduce", "gather", "ibarrier")


def _classify(key, path, line):
    """(name, op, value) of an operator key, checked the way MPICH's csel parser does (it aborts otherwise)."""
    ckey = key.replace(" ", "")
    if ckey == "any" or ckey.endswith("=any"):
        return ckey.split("=", 1)[0] if "=" in ckey else "any", "=", "any"
    match = _KEY.match(ckey)
    bad = f"MPICH does not know the key {key!r} (it aborts reading the file)"
    if not match:
        raise InputError(path, line, bad)
    name, op, value = match.group("name", "op", "value")
    if name == "collective":
        if op != "=" or value not in COLLECTIVES:
            raise InputError(path, line, f"unknown collective in {key!r} (MPICH aborts reading the file)")
    elif name in _FIXED_VALUES:
        if op != "=" or value not in _FIXED_VALUES[name]:
            raise InputError(path, line, bad)
    elif name in _NUMERIC_KEYS:
        special = {("comm_size", "=", "pow2"), ("comm_size", "=", "node_comm_size"), ("count", "<", "pow2")}
        if (name, op, value) not in special:
            if op == "=" or not re.fullmatch("[0-9]+", value) or (name == "count" and op == "<"):
                raise InputError(path, line, bad)
            if not fits(value, INT_MAX):   # MPICH reads it with atoi
                raise InputError(path, line, f"{shorten(value)} in {shorten(key, 60)!r} is beyond {INT_MAX} (a C int)")
    else:
        raise InputError(path, line, bad)
    return name, op, value


def _container_name(key):
    return key.replace(" ", "")[len("algorithm="):]


def _split_container(container):
    """`MPIR_Reduce_scatter_intra_ring` -> ("reduce_scatter", "ring"); (None, None) for other containers."""
    for coll in sorted(mpich.ALGORITHMS, key=len, reverse=True):
        for kind in ("intra", "allcomm"):
            prefix = f"MPIR_{coll.capitalize()}_{kind}_"
            if container.startswith(prefix):
                return coll, container[len(prefix):]
    return None, None


def check(doc, path):
    """Raise InputError where MPICH's csel parser or its tree validation would abort; return warnings."""
    warnings = []
    if not isinstance(doc, JObject):
        raise InputError(path, 1, "an MPICH selection file is a JSON object")

    unguarded = []

    def walk(node, parent=False, collective=None):
        if not isinstance(node, JObject):
            raise InputError(path, getattr(node, "line", None) or 1, "MPICH needs an object as every value")
        keys = node.keys()
        for i, (key, line, child) in enumerate(node.items):
            ckey = key.replace(" ", "")
            if ckey.startswith(("algorithm=", "composition=")):
                if len(keys) > 1:
                    raise InputError(path, line, f"{key!r} must be the only key of its object (MPICH reads the "
                                                 f"object as that algorithm and drops its other keys)")
                if not isinstance(child, JObject):
                    raise InputError(path, line, "an algorithm's parameters must be an object")
                for param, param_line, value in child.items:
                    if "=" not in param:
                        raise InputError(path, param_line, f"algorithm parameter {param!r} is not NAME=VALUE")
                container = ckey.split("=", 1)[1]
                coll, algorithm = _split_container(container)
                if coll and algorithm not in mpich.ALGORITHMS[coll]:
                    raise InputError(path, line, f"MPICH has no {coll} algorithm {printable(algorithm)!r} (known: "
                                                 f"{', '.join(mpich.ALGORITHMS[coll])})")
                if container in ("MPIR_Bcast_intra_smp", "MPIR_Reduce_intra_smp") and not parent:
                    unguarded.append(line)
                return
            name, op, value = _classify(key, path, line)
            if name in ("avg_msg_size", "total_msg_size") and value != "any" and collective in sizes.MPICH:
                try:
                    sizes.mpich_value(name, collective, 0, 1)
                except QuadselError as exc:
                    raise InputError(path, line, str(exc)) from None
            if value == "any" and i != len(keys) - 1:
                raise InputError(path, line, f"{key!r} must be the last key of its object (MPICH aborts otherwise)")
            if value != "any" and name not in BOOLEAN_KEYS and i == len(keys) - 1:
                raise InputError(path, line, f"{key!r} needs a following key such as "
                                             f"\"{name}=any\" (MPICH aborts on a condition with no alternative)")
            walk(child, parent or ckey == "comm_hierarchy=parent",
                 value if name == "collective" else collective)

    walk(doc)
    if unguarded:
        lines = ", ".join(str(n) for n in unguarded[:5]) + (" ..." if len(unguarded) > 5 else "")
        warnings.append(f"{path}:{unguarded[0]}: bcast/reduce smp outside \"comm_hierarchy=parent\" (lines {lines}): "
                        f"MPICH aborts (bcast: assertion MPIR_Comm_is_parent_comm, seen with MPICH 5.0.2) when it "
                        f"selects it for a communicator without a node hierarchy, e.g. its own node communicators "
                        f"inside MPI_Comm_split; MPICH's own selection guards them so")
    return warnings


def _pof2(n):
    p = 1
    while p * 2 <= n:
        p *= 2
    return p


def holds(name, op, value, collective, comm_size, msg, call):
    """Does operator key (name op value) hold for this call (one node, MPICH's csel semantics)?"""
    if value == "any":
        return True
    # a node-aware communicator with a node of several ranks: MPICH builds its node sub-communicators (a parent)
    hierarchy = call.one_node and comm_size > 1 if call.nodes is None else call.nodes != comm_size
    if name == "collective":
        return value == collective
    if name == "comm_type":
        return value == "intra"
    if name == "is_multi_threaded":
        return (value == "yes") == call.threaded
    if name == "comm_hierarchy":
        return (value == "parent") == hierarchy
    if name == "is_node_consecutive":
        return value == "yes"
    if name == "is_sendbuf_inplace":
        return value == "no"
    if name == "is_block_regular":
        return value == "yes"
    if name == "is_commutative":
        return (value == "yes") == call.commutative
    if name == "is_op_built_in":
        return (value == "yes") == call.op_built_in
    if name == "comm_size":
        if value == "pow2":
            return comm_size & (comm_size - 1) == 0
        if value == "node_comm_size":
            return hierarchy if call.nodes is None else call.nodes == 1
        return comm_size <= int(value) if op == "<=" else comm_size < int(value)
    if name == "count":
        if value == "pow2":
            return call.count < _pof2(comm_size)
        return call.count <= int(value)
    if name in ("avg_msg_size", "total_msg_size"):
        size = sizes.mpich_value(name, collective, call.count * call.type_size, comm_size, call.type_size)
        return size <= int(value) if op == "<=" else size < int(value)
    if name == "comm_avg_ppn":      # csel.c: node-aware (MPIR_COMM_ATTR__HIERARCHY) and comm_size <= P x nodes
        nodes = call.nodes if call.nodes is not None else (1 if call.one_node else None)
        if nodes is None:
            return False
        return comm_size <= int(value) * nodes if op == "<=" else comm_size < int(value) * nodes
    raise QuadselError(f"cannot evaluate MPICH key {name}{op}{value}")


def lookup(doc, collective, comm_size, msg, call):
    """(container name, {param: value}, line) MPICH selects, or None (no key holds: MPICH aborts there)."""
    node = doc
    while True:
        for key, line, child in node.items:
            ckey = key.replace(" ", "")
            if ckey.startswith(("algorithm=", "composition=")):
                params = {k.split("=", 1)[0].strip(): k.split("=", 1)[1].strip() for k in child.keys()}
                return ckey.split("=", 1)[1], params, line
            name, op, value = _classify(key, "<checked>", line)
            if holds(name, op, value, collective, comm_size, msg, call):
                node = child
                break
        else:
            return None


def label(collective, container):
    """The MPIR_CVAR_<COLL>_INTRA_ALGORITHM value of an intra-communicator container, or None."""
    title = collective.capitalize()
    for prefix in (f"MPIR_{title}_intra_", f"MPIR_{title}_allcomm_"):
        if container.startswith(prefix):
            name = container[len(prefix):]
            if name in mpich.ALGORITHMS.get(collective, ()):
                return name
    return None
