"""Emitters: a decision function (through its rule list, quadsel/rules.py) as the files MPI libraries read.

One small function per target; each prepares a context and renders a template (or json.dumps for JSON,
which escapes every name). Formats and matching rules: docs/formats-output.md and ../shared/FORMATS.md.

  ompi-rules   Open MPI coll/tuned classic dynamic rules file (5.0.x matching), version 1 or 2
  ompi-json    Open MPI JSON rules (rule_file_version 3, Open MPI main / 6.x)
  mpich-json   MPICH collective selection JSON (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE)
  c            nested if/else-if C (quadsel/codegen.py); flavour ompi-tuned: coll/tuned's fixed decision
"""

import json
import os
import re

from . import __version__
from .codegen import comment_text, emit_branches, function_name
from .errors import QuadselError
from .mpi_facts import MPICH_ALGORITHMS, OMPI_ALGORITHMS, OMPI_COLLECTIVE_IDS
from .rules import build_rule_list
from .templating import render

# -- Open MPI facts (coll/tuned, 5.0.x; FORMATS.md) -----------------------------------------------------
# coll_tuned_<coll>_algorithm name -> id
OMPI_ALGORITHM_IDS = {coll: {name: alg for alg, name in table.items()} for coll, table in OMPI_ALGORITHMS.items()}
# Other spellings seen in benchmark data and in the paper (Linear, Binary, Split-Binary, ...).
OMPI_ALIASES = {
    "bcast": {"linear": 1, "binary": 5, "bintree": 5, "splitbinary": 4, "splitbintree": 4, "bmtree": 6},
    "reduce": {"basiclinear": 1, "binarytree": 4, "binomialtree": 5, "inorderbinarytree": 6},
    "allreduce": {"linear": 1, "recursivedoubling": 3, "segmentedring": 5},
}
# Chain algorithms read FANINOUT as their number of chains; a forced run (as `quadsel measure` does) uses
# coll_tuned_<coll>_algorithm_chain_fanout, default coll_tuned_init_chain_fanout = 4. Others ignore it.
OMPI_CHAIN_IDS = {"bcast": {2}, "reduce": {2}}
OMPI_DEFAULT_CHAIN_FANOUT = 4

# -- MPICH facts (csel JSON, MPICH 4.x/5.0) -----------------------------------------------------------------
# Parameters a csel container must carry (the JSON does not fall back to the CVARs): MPICH 5.0.2's CVAR
# defaults, i.e. what a forced measurement of the algorithm used.
MPICH_PARAMETERS = {
    ("bcast", "tree"): {"tree_type": "kary", "k": 2, "is_non_blocking": 1},
    ("bcast", "pipelined_tree"): {"tree_type": "kary", "k": 2, "is_non_blocking": 1, "chunk_size": 8192,
                                  "recv_pre_posted": 0},
    ("allreduce", "tree"): {"tree_type": "knomial_1", "k": 2, "chunk_size": 0, "buffer_per_child": 0},
    ("allreduce", "recexch"): {"k": 2, "single_phase_recv": 0},
    ("allreduce", "k_reduce_scatter_allgather"): {"k": 2, "single_phase_recv": 0},
    ("allreduce", "recursive_multiplying"): {"k": 2},
}
# Algorithms MPICH may only run under conditions (its own selection guards them the same way): the
# condition, and the algorithm used where it does not hold. A guard costs nothing where it holds.
MPICH_GUARDS = {
    ("reduce", "reduce_scatter_gather"): ("builtin_op_and_count", "binomial"),
    ("reduce", "smp"): ("commutative", "binomial"),
    ("allreduce", "reduce_scatter_allgather"): ("builtin_op_and_count", "recursive_doubling"),
    ("allreduce", "smp"): ("commutative", "recursive_doubling"),
    ("allreduce", "ring"): ("commutative", "recursive_doubling"),
    ("allreduce", "recexch"): ("commutative", "recursive_doubling"),
    ("allreduce", "k_reduce_scatter_allgather"): ("commutative", "recursive_doubling"),
    ("allreduce", "recursive_multiplying"): ("commutative", "recursive_doubling"),
    ("bcast", "scatter_recursive_doubling_allgather"): ("pow2_comm", "scatter_ring_allgather"),
}
# MPICH's smp algorithms run only on a parent communicator (one with node-level sub-communicators): on
# its internal node communicators MPICH 5.0.2 asserts MPIR_Comm_is_parent_comm and aborts (found by
# `quadsel verify`). Its own selection guards them with comm_hierarchy=parent; so do we.
MPICH_HIERARCHY_FALLBACK = {"bcast": "binomial", "reduce": "binomial", "allreduce": "recursive_doubling"}
MPICH_INTER = {"bcast": "MPIR_Bcast_inter_remote_send_local_bcast",
               "reduce": "MPIR_Reduce_inter_local_reduce_remote_send",
               "allreduce": "MPIR_Allreduce_inter_reduce_exchange_bcast"}
_MPICH_NAME = re.compile(r"^[a-z0-9_]+$")


def _squash(name):
    return re.sub(r"[\s_\-]+", "", str(name).strip().lower())


def ompi_collective_id(collective):
    key = collective.lower().replace("-", "_")
    if key not in OMPI_COLLECTIVE_IDS:
        raise QuadselError(f"Open MPI rules files have no collective {comment_text(collective)!r} "
                           f"(known: {', '.join(OMPI_COLLECTIVE_IDS)})")
    return OMPI_COLLECTIVE_IDS[key]


def ompi_algorithm_id(collective, name):
    """coll/tuned algorithm id of a method's algorithm: numeric ids as they are, known names mapped."""
    text = str(name).strip()
    if text.isdigit():
        alg = int(text)
        known = OMPI_ALGORITHM_IDS.get(collective)
        if alg == 0 or (known and alg not in known.values()):
            raise QuadselError(f"{collective} algorithm id {alg} is not a coll/tuned algorithm "
                               f"(known: {', '.join(f'{v}={k}' for k, v in (known or {}).items()) or 'ids >= 1'})")
        return alg
    table = {_squash(k): v for k, v in OMPI_ALGORITHM_IDS.get(collective, {}).items()}
    table.update(OMPI_ALIASES.get(collective, {}))
    key = _squash(text)
    if key not in table:
        known = ", ".join(OMPI_ALGORITHM_IDS.get(collective, {})) or "numeric ids only"
        raise QuadselError(f"algorithm {comment_text(name)!r} is not an Open MPI coll/tuned {collective} algorithm "
                           f"(known: {known})")
    return table[key]


def ompi_faninout(collective, alg):
    return OMPI_DEFAULT_CHAIN_FANOUT if alg in OMPI_CHAIN_IDS.get(collective, ()) else 0


def mpich_algorithm(collective, name):
    """csel container name (`MPIR_Bcast_intra_binomial`) of a method's algorithm, checked against MPICH's list."""
    text = str(name).strip()
    coll_title = collective.capitalize()
    for prefix in (f"MPIR_{coll_title}_intra_", f"MPIR_{coll_title}_allcomm_"):
        if text.startswith(prefix):
            text = text[len(prefix):]
    key = text.lower().replace("-", "_")
    known = MPICH_ALGORITHMS.get(collective)
    if known is None:
        raise QuadselError(f"no MPICH algorithm list for collective {comment_text(collective)!r} "
                           f"(known: {', '.join(MPICH_ALGORITHMS)})")
    if not _MPICH_NAME.match(key) or key not in known:
        hint = " (numeric names are Open MPI ids: build the tree from MPICH measurements)" if key.isdigit() else ""
        raise QuadselError(f"algorithm {comment_text(name)!r} is not an MPICH {collective} algorithm{hint}; "
                           f"known: {', '.join(known)}")
    kind = "allcomm" if key == "nb" else "intra"
    return key, f"MPIR_{coll_title}_{kind}_{key}"


# -- shared ---------------------------------------------------------------------------------------------
def _rule_lists(fns):
    lists, seen = [], set()
    for fn in fns:
        if fn.collective in seen:
            raise QuadselError(f"two trees for collective {comment_text(fn.collective)!r}: give one tree per collective")
        seen.add(fn.collective)
        lists.append(build_rule_list(fn))
    return lists


def _header_lines(rule_lists):
    lines = [f"generated by quadsel {__version__} from quadtree decision functions (floor rule on both axes)"]
    for rl in rule_lists:
        sources = ", ".join(comment_text(s) for s in rl.sources) or "unknown"
        lines.append(f"{comment_text(rl.collective)}: {comment_text(rl.constraint)} tree; sources: {sources}")
    return lines


# -- ompi-rules -----------------------------------------------------------------------------------------
def emit_ompi_rules(fns, max_requests=None):
    """Open MPI classic dynamic rules (coll_tuned_dynamic_rules_filename); version 2 when max_requests is set.

    Comm keys are the measured comm sizes (5.0.x: the largest key <= the comm size applies, below the
    first key the first), message keys lower bounds starting at 0: exactly the decision function's floor rule.
    """
    collectives = []
    for rl in _rule_lists(fns):
        comms = []
        for comm in rl.comm_rules:
            rules = []
            for rule in comm.msg_rules:
                alg = ompi_algorithm_id(rl.collective, rule.method.algorithm)
                rules.append({"msg": rule.msg_size, "alg": alg, "faninout": ompi_faninout(rl.collective, alg),
                              "seg": int(rule.method.segsize), "label": comment_text(rule.method.label)})
            comms.append({"comm": comm.comm_size, "rules": rules})
        collectives.append({"name": comment_text(rl.collective), "id": ompi_collective_id(rl.collective),
                            "comms": comms})
    if max_requests is not None and max_requests < 0:
        raise QuadselError("--max-requests must be >= 0")
    return render("ompi_rules.txt.j2", collectives=collectives, header=_header_lines(_rule_lists(fns)),
                  version=2 if max_requests is not None else 1, max_requests=max_requests or 0)


# -- ompi-json --------------------------------------------------------------------------------------------
def ompi_json_document(fns, max_requests=None):
    collectives = {}
    for rl in _rule_lists(fns):
        ompi_collective_id(rl.collective)
        entries = []
        for lo, hi, msgs in rl.ranges():
            rules = []
            for m_lo, m_hi, method in msgs:
                alg = ompi_algorithm_id(rl.collective, method.algorithm)
                rule = {"msg_size_min": m_lo, "msg_size_max": "inf" if m_hi is None else m_hi, "alg": alg}
                if ompi_faninout(rl.collective, alg):
                    rule["faninout"] = ompi_faninout(rl.collective, alg)
                if method.segsize:
                    rule["seg_size"] = int(method.segsize)
                if max_requests:
                    rule["reqs"] = int(max_requests)
                rules.append(rule)
            entries.append({"comm_size_min": lo, "comm_size_max": "inf" if hi is None else hi, "rules": rules})
        collectives[rl.collective.lower()] = entries
    return {"rule_file_version": 3, "module": "tuned", "collectives": collectives}


def emit_ompi_json(fns, max_requests=None):
    """Open MPI JSON rules (rule_file_version 3): inclusive min/max ranges, first match wins, "inf" open ends."""
    return json.dumps(ompi_json_document(fns, max_requests), indent=1) + "\n"


# -- mpich-json -----------------------------------------------------------------------------------------------
def _mpich_container(collective, method):
    if method.segsize:
        raise QuadselError(f"MPICH algorithms take no segment size, but the tree has {comment_text(method.label)!r}")
    key, _ = mpich_algorithm(collective, method.algorithm)
    return _mpich_leaf(collective, key, guarded=True)


def _mpich_leaf(collective, key, guarded):
    name = mpich_algorithm(collective, key)[1]
    leaf = {f"algorithm={name}": {f"{k}={v}": {} for k, v in MPICH_PARAMETERS.get((collective, key), {}).items()}}
    if guarded and key == "smp" and collective in MPICH_HIERARCHY_FALLBACK:
        fallback = _mpich_leaf(collective, MPICH_HIERARCHY_FALLBACK[collective], guarded=False)
        return {"comm_hierarchy=parent": _mpich_condition(collective, key, leaf), "comm_hierarchy=any": fallback}
    return _mpich_condition(collective, key, leaf) if guarded else leaf


def _mpich_condition(collective, key, leaf):
    """`leaf` behind the operation/communicator condition MPICH puts on this algorithm, if any."""
    if (collective, key) not in MPICH_GUARDS:
        return leaf
    condition, fallback = MPICH_GUARDS[(collective, key)]
    other = _mpich_leaf(collective, fallback, guarded=False)
    if condition == "commutative":
        return {"is_commutative=yes": leaf, "is_commutative=no": other}
    if condition == "pow2_comm":
        return {"comm_size=pow2": leaf, "comm_size=any": other}
    return {"is_op_built_in=yes": {"count<pow2": other, "count=any": leaf}, "is_op_built_in=no": other}


def mpich_selection(rl):
    """The `collective=...` subtree of one rule list: comm_size<= upper ends, avg_msg_size<= upper ends."""
    by_comm = {}
    ranges = rl.ranges()
    for i, (lo, hi, msgs) in enumerate(ranges):
        inner = {}
        for j, (m_lo, m_hi, method) in enumerate(msgs):
            inner["avg_msg_size=any" if m_hi is None else f"avg_msg_size<={m_hi}"] = _mpich_container(rl.collective, method)
        by_comm["comm_size=any" if hi is None else f"comm_size<={hi}"] = inner
    return {"comm_type=intra": by_comm, "comm_type=inter": {f"algorithm={MPICH_INTER[rl.collective]}": {}}}


def mpich_json_document(fns, base=None):
    """The MPICH selection: `base` (MPICH's own selection, a dict) with our collectives replaced.

    MPICH replaces its whole built-in selection with the file and aborts on a collective the file does not
    cover, so a deployable file needs the base; base=None gives our collectives only.
    """
    ours = {}
    for rl in _rule_lists(fns):
        ours[f"collective={rl.collective.lower()}"] = mpich_selection(rl)
    if base is None:
        return ours
    merged = {}
    for key, value in base.items():
        merged[key] = ours.pop(key) if key in ours else value
    merged.update(ours)
    return merged


def emit_mpich_json(fns, base=None):
    return json.dumps(mpich_json_document(fns, base), indent=1) + "\n"


def load_mpich_base(path):
    """MPICH's own collective selection, from a tuning JSON file or from the libmpi that embeds it."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise QuadselError(f"{path}: cannot read: {exc.strerror}") from None
    if data.lstrip()[:1] == b"{":
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise QuadselError(f"{path}: not valid JSON: {exc}") from None
        if not isinstance(doc, dict) or not any(str(k).startswith("collective=") for k in doc):
            raise QuadselError(f"{path}: not an MPICH collective selection (no `collective=` keys)")
        return doc
    script = re.match(rb"\s*(?:INPUT|GROUP)\s*\(\s*([^\s)]+)", data)
    if script:   # a linker script standing in for the library (the mpich wheel's libmpi.so)
        target = os.path.join(os.path.dirname(os.path.abspath(path)), os.path.basename(script.group(1).decode()))
        return load_mpich_base(target)
    # a shared library: MPICH compiles its MPIR-level selection in as one JSON string
    text, best = data.decode("latin-1"), None
    decoder = json.JSONDecoder()
    for match in re.finditer(r'\{"collective=', text):
        try:
            doc, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if "algorithm=MPIR_" in json.dumps(doc) and (best is None or len(doc) > len(best)):
            best = doc
    if best is None:
        raise QuadselError(f"{path}: found no MPICH collective selection in it (give MPICH's tuning JSON instead)")
    return best


# -- c, flavour ompi-tuned -----------------------------------------------------------------------------------
OMPI_TUNED_SIGNATURES = {
    # 5.0.x prototypes of ompi_coll_tuned_<coll>_intra_dec_fixed and how each calls <coll>_intra_do_this
    "bcast": {"params": "void *buff, QUADSEL_OMPI_COUNT_T count, struct ompi_datatype_t *datatype, int root, "
                        "struct ompi_communicator_t *comm, mca_coll_base_module_t *module",
              "call": "buff, count, datatype, root, comm, module", "extra": "", "commute": False},
    "reduce": {"params": "const void *sendbuf, void *recvbuf, QUADSEL_OMPI_COUNT_T count, "
                         "struct ompi_datatype_t *datatype, struct ompi_op_t *op, int root, "
                         "struct ompi_communicator_t *comm, mca_coll_base_module_t *module",
               "call": "sendbuf, recvbuf, count, datatype, op, root, comm, module", "extra": ", 0",
               "commute": True, "noncommutative_ok": [1, 6], "noncommutative_fallback": 6},
    "allreduce": {"params": "const void *sbuf, void *rbuf, QUADSEL_OMPI_COUNT_T count, struct ompi_datatype_t *dtype, "
                            "struct ompi_op_t *op, struct ompi_communicator_t *comm, mca_coll_base_module_t *module",
                  "call": "sbuf, rbuf, count, dtype, op, comm, module", "extra": "",
                  "commute": True, "noncommutative_ok": [1, 2, 3], "noncommutative_fallback": 3},
}


def generate_c_ompi_tuned(fn, name=None):
    """coll/tuned's fixed decision for fn's collective, made of the quadtree (§3.2) and `<coll>_intra_do_this`."""
    coll = fn.collective.lower()
    if coll not in OMPI_TUNED_SIGNATURES:
        raise QuadselError(f"--flavor ompi-tuned supports {', '.join(OMPI_TUNED_SIGNATURES)}, not "
                           f"{comment_text(fn.collective)!r}")
    ids = {}
    for method in fn.methods:
        ids[method.algorithm] = (str(ompi_algorithm_id(coll, method.algorithm)), None)
    body = emit_branches(fn, ids)
    sig = OMPI_TUNED_SIGNATURES[coll]
    chain_ids = sorted(OMPI_CHAIN_IDS.get(coll, ()))
    sources = [f"source: {comment_text(s)}" for s in fn.provenance.get("sources", [])]
    return render("c_ompi_tuned.c.j2", name=function_name(coll, name or f"ompi_coll_tuned_{coll}_intra_dec_fixed"),
                  collective=coll, version=__version__, constraint=comment_text(fn.constraint),
                  stats=fn.tree.stats(), source_lines=sources, sig=sig, body=body,
                  chain_ids=chain_ids, chain_fanout=OMPI_DEFAULT_CHAIN_FANOUT,
                  labels=list(dict.fromkeys(f"{ids[m.algorithm][0]} = {comment_text(m.algorithm)}" for m in fn.methods)))


TARGETS = ("c", "ompi-rules", "ompi-json", "mpich-json")
C_FLAVORS = ("plain", "ompi-tuned")
