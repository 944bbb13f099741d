"""Open MPI: everything quadsel knows about it (coll/tuned of Open MPI 5.0.x; ../shared/FORMATS.md).

Collective and algorithm ids, the spellings benchmark data uses for them, which algorithms read the segment
size and the chain fan-out, the MCA variables that force an algorithm, and how `quadsel measure` forces
one (`OpenMPI`). The rules-file dialects Open MPI reads are targets/ompi_rules.py (classic) and
targets/ompi_json.py (JSON); its C decision function is targets/ompi_tuned.py.
"""

import re

from ..errors import QuadselError
from .base import DEFAULT_ALGORITHM, Library, escape

NAME = "openmpi"
TITLE = "Open MPI"

# enum COLLTYPE of ompi/mca/coll/base/coll_base_functions.h: the classic rules file's collective ids.
COLLECTIVE_IDS = {
    "allgather": 0, "allgatherv": 1, "allreduce": 2, "alltoall": 3, "alltoallv": 4, "alltoallw": 5,
    "barrier": 6, "bcast": 7, "exscan": 8, "gather": 9, "gatherv": 10, "reduce": 11, "reduce_scatter": 12,
    "reduce_scatter_block": 13, "scan": 14, "scatter": 15, "scatterv": 16,
}
COLLECTIVE_NAMES = {v: k for k, v in COLLECTIVE_IDS.items()}
# 5.0.x: 0..16 as above, then the neighborhood collectives; COLLCOUNT = 22.
COLLCOUNT = 22

# coll_tuned_<coll>_algorithm ids of Open MPI 5.0.x (0 = the fixed decision; main adds reduce 8 knomial).
ALGORITHMS = {
    "bcast": {1: "basic_linear", 2: "chain", 3: "pipeline", 4: "split_binary_tree", 5: "binary_tree",
              6: "binomial", 7: "knomial", 8: "scatter_allgather", 9: "scatter_allgather_ring"},
    "reduce": {1: "linear", 2: "chain", 3: "pipeline", 4: "binary", 5: "binomial", 6: "in-order_binary",
               7: "rabenseifner"},
    "allreduce": {1: "basic_linear", 2: "nonoverlapping", 3: "recursive_doubling", 4: "ring",
                  5: "segmented_ring", 6: "rabenseifner"},
}
ALGORITHM_IDS = {coll: {name: alg for alg, name in table.items()} for coll, table in ALGORITHMS.items()}
# Other spellings seen in benchmark data and in the paper (Linear, Binary, Split-Binary, ...).
ALIASES = {
    "bcast": {"linear": 1, "binary": 5, "bintree": 5, "splitbinary": 4, "splitbintree": 4, "bmtree": 6},
    "reduce": {"basiclinear": 1, "binarytree": 4, "binomialtree": 5, "inorderbinarytree": 6},
    "allreduce": {"linear": 1, "recursivedoubling": 3, "segmentedring": 5},
}
# Chain algorithms read FANINOUT as their number of chains; a forced run (as `quadsel measure` does) uses
# coll_tuned_<coll>_algorithm_chain_fanout, default coll_tuned_init_chain_fanout = 4. Others ignore it.
CHAIN_IDS = {"bcast": {2}, "reduce": {2}}
DEFAULT_CHAIN_FANOUT = 4
# Algorithms whose 5.0.x implementation never reads the segment size (coll_tuned_*_do_this and
# coll_base_*): measuring them at several segment sizes would repeat one measurement.
UNSEGMENTED = {"bcast": {1, 8, 9}, "reduce": {1, 7, 8}, "allreduce": {1, 2, 3, 4, 6}}


def algorithm_var(collective, suffix=""):
    """The MCA variable forcing a coll/tuned algorithm (`coll_tuned_bcast_algorithm`, `..._segmentsize`)."""
    return f"coll_tuned_{collective}_algorithm{suffix}"


def _squash(name):
    return re.sub(r"[\s_\-]+", "", str(name).strip().lower())


def collective_id(collective):
    key = collective.lower().replace("-", "_")
    if key not in COLLECTIVE_IDS:
        raise QuadselError(f"Open MPI rules files have no collective {escape(collective)!r} "
                           f"(known: {', '.join(COLLECTIVE_IDS)})")
    return COLLECTIVE_IDS[key]


def algorithm_id(collective, name):
    """coll/tuned algorithm id of a method's algorithm: numeric ids as they are, known names mapped."""
    text = str(name).strip()
    if text == DEFAULT_ALGORITHM:
        return 0            # a region handed back to the library: coll/tuned's own (fixed) decision
    if text.isascii() and text.isdigit():
        alg = int(text)
        known = ALGORITHM_IDS.get(collective)
        if alg == 0 or (known and alg not in known.values()):
            raise QuadselError(f"{collective} algorithm id {alg} is not a coll/tuned algorithm "
                               f"(known: {', '.join(f'{v}={k}' for k, v in (known or {}).items()) or 'ids >= 1'})")
        return alg
    table = {_squash(k): v for k, v in ALGORITHM_IDS.get(collective, {}).items()}
    table.update(ALIASES.get(collective, {}))
    key = _squash(text)
    if key not in table:
        known = ", ".join(ALGORITHM_IDS.get(collective, {})) or "numeric ids only"
        raise QuadselError(f"algorithm {escape(name)!r} is not an Open MPI coll/tuned {collective} algorithm "
                           f"(known: {known})")
    return table[key]


def canonical_label(collective, name):
    """The label `quadsel measure` writes for this algorithm (its id as text), or None if it is none of ours.

    Ids outside the id table of the collective are None; a collective without a table keeps every id.
    """
    text = str(name).strip()
    known = ALGORITHMS.get(collective)
    if text.isascii() and text.isdigit():
        alg = int(text)
        return str(alg) if alg == 0 or known is None or alg in known else None
    table = {_squash(k): v for k, v in ALGORITHM_IDS.get(collective, {}).items()}
    table.update(ALIASES.get(collective, {}))
    alg = table.get(_squash(text))
    return None if alg is None else str(alg)


def own_name(collective, name):
    """Is `name` one of coll/tuned's own algorithm names for the collective (not an alias)?"""
    return _squash(name) in {_squash(n) for n in ALGORITHMS.get(collective, {}).values()}


def faninout(collective, alg):
    """FANINOUT a rule carries: the chain fan-out a forced chain run uses, 0 for every other algorithm."""
    return DEFAULT_CHAIN_FANOUT if alg in CHAIN_IDS.get(collective, ()) else 0


def algorithm_name(collective, algorithm):
    """Open MPI id -> its name ("6" -> "binomial" for bcast); other names as they are."""
    if str(algorithm).isascii() and str(algorithm).isdigit():
        return ALGORITHMS.get(collective, {}).get(int(algorithm), str(algorithm))
    return str(algorithm)


class OpenMPI(Library):
    """Forcing: coll/tuned reads `coll_tuned_<coll>_algorithm` (+ `_segmentsize`) when a communicator is
    created, so forcing = write the variables through MPI_T, then create the communicator."""

    name = NAME
    carries_forcing = True

    def algorithms(self, collective):
        var = algorithm_var(collective)
        if self.mpit is not None and self.mpit.has(var):
            items = self.mpit.enum_items(var)
            if items:
                return {str(v): n for v, n in items if v != 0}
        return {str(k): v for k, v in ALGORITHMS[collective].items()}

    def uses_segsize(self, collective, label):
        if self.mpit is not None and not self.mpit.has(algorithm_var(collective, "_segmentsize")):
            return False
        return int(label) not in UNSEGMENTED[collective]

    def prepare(self, collective):
        if self.mpit is not None:
            # Forced values are ignored unless dynamic rules are on; it is writable at run time.
            self.mpit.write_int("coll_tuned_use_dynamic_rules", 1)

    def activate(self, collective, label, segsize):
        if self.mpit is None:
            return  # forced by the environment of this launch
        self.mpit.write_int(algorithm_var(collective), 0 if label == DEFAULT_ALGORITHM else int(label))
        if self.mpit.has(algorithm_var(collective, "_segmentsize")):
            self.mpit.write_int(algorithm_var(collective, "_segmentsize"), segsize)

    def env_for(self, collective, label, segsize):
        alg = 0 if label == DEFAULT_ALGORITHM else int(label)
        return {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                f"OMPI_MCA_{algorithm_var(collective)}": str(alg),
                f"OMPI_MCA_{algorithm_var(collective, '_segmentsize')}": str(segsize)}
