"""C flavour ompi-tuned: Open MPI coll/tuned's fixed decision (`ompi_coll_tuned_<coll>_intra_dec_fixed`).

The quadtree's nested if/else-if (c.py) chooses the algorithm; the function then calls
`<coll>_intra_do_this` as coll/tuned 5.0.x does, with the chain fan-out a forced run uses.
"""

from .. import __version__
from ..errors import QuadselError
from ..libraries import openmpi
from ..libraries.base import DEFAULT_ALGORITHM
from .c_common import algorithm_ids, function_name, measured_range
from .escape import comment_text
from .c_branches import emit_branches
from .templating import render


SIGNATURES = {
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


def generate(fn, name=None, merge=True, order="expected"):
    """coll/tuned's fixed decision for fn's collective, made of the quadtree (§3.2) and `<coll>_intra_do_this`."""
    coll = fn.collective.lower()
    if coll not in SIGNATURES:
        raise QuadselError(f"--flavor ompi-tuned supports {', '.join(SIGNATURES)}, not "
                           f"{comment_text(fn.collective)!r}")
    if any(m.algorithm == DEFAULT_ALGORITHM for m in fn.methods):
        raise QuadselError("--flavor ompi-tuned replaces coll/tuned's fixed decision, so it cannot hand regions back "
                           "to it: build the tree with --extrapolate --no-keep-default for this flavour")
    ids = algorithm_ids(fn.methods, coll, library="openmpi")
    body = emit_branches(fn, ids, merge, order)
    sig = SIGNATURES[coll]
    chain_ids = sorted(openmpi.CHAIN_IDS.get(coll, ()))
    sources = [measured_range(fn)] + [f"source: {comment_text(s)}" for s in fn.provenance.get("sources", [])]
    return render("c_ompi_tuned.c.j2", name=function_name(coll, name or f"ompi_coll_tuned_{coll}_intra_dec_fixed"),
                  collective=coll, version=__version__, between=fn.options.between, constraint=comment_text(fn.constraint),
                  stats=fn.tree.stats(), source_lines=sources, sig=sig, body=body,
                  chain_ids=chain_ids, chain_fanout=openmpi.DEFAULT_CHAIN_FANOUT,
                  labels=list(dict.fromkeys(f"{ids[m.algorithm][0]} = "
                                            f"{comment_text(openmpi.algorithm_name(coll, ids[m.algorithm][0]))}"
                                            for m in fn.methods)))
