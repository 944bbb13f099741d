"""Intel MPI: everything quadsel knows about it (Intel MPI Library 2021.x, the PyPI `impi-rt` wheel).

Algorithm ids are the preset ids of `I_MPI_ADJUST_<COLL>` (Intel's Developer Reference, "I_MPI_ADJUST Family
Environment Variables"), for every collective quadsel measures: bcast 1-14, reduce 1-11, allreduce 1-12, and the
others' documented lists (ALGORITHMS); 0 is Intel's *basic*
selection logic, which is not the library default (the default also reads the tuning file Intel MPI loads at
start-up, `tuning_*.dat`), so quadsel measures it as a method of its own (`0`) next to `default`.

Forcing: Intel MPI reads `I_MPI_ADJUST_<COLL>` once, at MPI_Init. It does list it through MPI_T (as the string
cvar `MPIR_CVAR_USE_<COLL>`, 384 chars, alias I_MPI_ADJUST_<COLL>) and accepts writes, but a write after
MPI_Init changes nothing (checked on 2021.18.1: 20 presets written through MPI_T, one fingerprint; the same
presets set in the environment, six). So every setting is one launch (`env_for`): docs/measure.md.

The `I_MPI_ADJUST_<COLL>` string itself (writer and reader) is targets/impi_adjust.py.
"""

import re

from ..errors import QuadselError
from .base import DEFAULT_ALGORITHM, Deployment, Library, escape, known_ids

NAME = "intelmpi"
TITLE = "Intel MPI"

# I_MPI_ADJUST_<COLL> preset ids and their documented names (0 = Intel's basic selection logic).
ALGORITHMS = {
    "bcast": {0: "basic_logic", 1: "binomial", 2: "recursive_doubling", 3: "ring", 4: "topo_binomial",
              5: "topo_recursive_doubling", 6: "topo_ring", 7: "shumilin", 8: "knomial", 9: "topo_shm_flat",
              10: "topo_shm_knomial", 11: "topo_shm_knary", 12: "numa_shm_sse42", 13: "numa_shm_avx2",
              14: "numa_shm_avx512"},
    "reduce": {0: "basic_logic", 1: "shumilin", 2: "binomial", 3: "topo_shumilin", 4: "topo_binomial",
               5: "rabenseifner", 6: "topo_rabenseifner", 7: "knomial", 8: "topo_shm_flat", 9: "topo_shm_knomial",
               10: "topo_shm_knary", 11: "topo_shm_binomial"},
    "allreduce": {0: "basic_logic", 1: "recursive_doubling", 2: "rabenseifner", 3: "reduce_bcast",
                  4: "topo_reduce_bcast", 5: "binomial_gather_scatter", 6: "topo_binomial_gather_scatter",
                  7: "shumilin_ring", 8: "ring", 9: "knomial", 10: "topo_shm_flat", 11: "topo_shm_knomial",
                  12: "topo_shm_knary"},
    # the other collectives quadsel measures: the algorithm lists of Intel's Developer Reference (2021.x,
    # "I_MPI_ADJUST Family Environment Variables"), each id inside the preset range the installed library
    # accepts (MPI_T `MPIR_CVAR_USE_<COLL>`, "range: 0-N"; tests/verify/test_intelmpi_real.py)
    "allgather": {0: "basic_logic", 1: "recursive_doubling", 2: "bruck", 3: "ring", 4: "topo_gatherv_bcast",
                  5: "knomial"},
    "allgatherv": {0: "basic_logic", 1: "recursive_doubling", 2: "bruck", 3: "ring", 4: "topo_gatherv_bcast"},
    "alltoall": {0: "basic_logic", 1: "bruck", 2: "isend_irecv_waitall", 3: "pairwise_exchange", 4: "plum"},
    "alltoallv": {0: "basic_logic", 1: "isend_irecv_waitall", 2: "plum"},
    "barrier": {0: "basic_logic", 1: "dissemination", 2: "recursive_doubling", 3: "topo_dissemination",
                4: "topo_recursive_doubling", 5: "binomial_gather_scatter", 6: "topo_binomial_gather_scatter",
                7: "topo_shm_flat", 8: "topo_shm_knomial", 9: "topo_shm_knary"},
    "exscan": {0: "basic_logic", 1: "partial_results_gathering", 2: "partial_results_gathering_layout"},
    "gather": {0: "basic_logic", 1: "binomial", 2: "topo_binomial", 3: "shumilin"},
    "reduce_scatter": {0: "basic_logic", 1: "recursive_halving", 2: "pairwise_exchange", 3: "recursive_doubling",
                       4: "reduce_scatterv", 5: "topo_reduce_scatterv"},
    "reduce_scatter_block": {0: "basic_logic", 1: "recursive_halving", 2: "pairwise_exchange",
                             3: "recursive_doubling", 4: "reduce_scatter"},
    "scan": {0: "basic_logic", 1: "partial_results_gathering", 2: "topo_partial_results_gathering"},
    "scatter": {0: "basic_logic", 1: "binomial", 2: "topo_binomial", 3: "shumilin"},
}
# Largest value the string's sizes may take: Intel MPI 2021.18 rejects the whole variable (silently, using its
# default) when a bound is 2147483648 or more.
MAX_VALUE = 2147483647
_DETECT = re.compile(r"Intel\(R\) MPI Library|Intel MPI", re.IGNORECASE)


def detect(version_string):
    return bool(_DETECT.search(version_string or ""))


def adjust_var(collective):
    """The variable forcing a preset: `I_MPI_ADJUST_BCAST`."""
    return f"I_MPI_ADJUST_{collective.upper()}"


def _squash(name):
    return re.sub(r"[\s_\-'+]+", "", str(name).strip().lower())


def canonical_label(collective, name):
    """The label `quadsel measure` writes (the preset id as text), or None if it is none of Intel MPI's."""
    text = str(name).strip()
    table = ALGORITHMS.get(collective)
    if text.isascii() and text.isdigit():
        return str(int(text)) if table is None or int(text) in table else None
    by_name = {_squash(v): k for k, v in (table or {}).items()}
    alg = by_name.get(_squash(text))
    return None if alg is None else str(alg)


def own_name(collective, name):
    return _squash(name) in {_squash(n) for n in ALGORITHMS.get(collective, {}).values()}


def algorithm_name(collective, algorithm):
    text = str(algorithm)
    if text.isascii() and text.isdigit():
        return ALGORITHMS.get(collective, {}).get(int(text), text)
    return text


def forcing_env(collective, label):
    """Environment of a launch that runs preset `label` (nothing for the library default)."""
    return {} if label == DEFAULT_ALGORITHM else {adjust_var(collective): str(int(label))}


class IntelMPI(Library):
    """Forcing: `I_MPI_ADJUST_<COLL>=<id>` in the environment of a launch (read at MPI_Init only)."""

    name = NAME
    title = TITLE
    aliases = ("impi", "intel", "intel_mpi")
    version_marks = ("Intel(R) MPI", "Intel MPI")
    known = True
    env_only = True           # MPI_T cannot force: one launch per method (measure) and per arm (verify)
    numbered = True
    names_its_default = False   # I_MPI_ADJUST cannot name its default (preset 0 is its basic selection logic)
    own_selection = "preset 0, Intel MPI's basic selection logic (I_MPI_ADJUST cannot name its default)"
    # the JSON tuning file expresses every tree; the I_MPI_ADJUST strings beside it, for sites that set the
    # environment only, when every deployed tree can be one (targets/impi_adjust.py)
    deployment = Deployment(NAME, "tuned-impi.json", "impi-json", ("tuned-impi-adjust.env", "impi-adjust"),
                            extra_optional=True,
                            extra_note="or, through the environment only (no I_MPI_TUNING): . {file} (I_MPI_ADJUST_<COLL>)")
    blob_scheme = 3
    selection_variables = r"I_MPI_TUNING[A-Z_]*|I_MPI_ADJUST_[A-Z_]+"   # the I_MPI_ADJUST strings select too

    def __init__(self, version_string="", mpit=None):
        super().__init__(version_string, None)
        self.forcing = "env"

    # -- ids, names and labels --------------------------------------------------------------------
    def canonical_label(self, collective, label):
        return canonical_label(collective, label)

    def algorithm_name(self, collective, algorithm):
        return algorithm_name(collective, algorithm)

    def _label(self, collective, algorithm):
        label = canonical_label(collective, algorithm)
        if label is None:
            raise QuadselError(f"algorithm {escape(algorithm)!r} is not an Intel MPI {collective} preset")
        return label

    def check_algorithm(self, collective, algorithm):
        if canonical_label(collective, algorithm) is None:
            known = ", ".join(f"{k}={v}" for k, v in ALGORITHMS.get(collective, {}).items()) or "none"
            raise QuadselError(f"algorithm {algorithm!r} is not an Intel MPI {collective} preset (known: {known})")

    def c_id(self, collective, algorithm):
        label = canonical_label(collective, algorithm)
        if label is None:
            raise QuadselError(f"algorithm {escape(algorithm)!r} is not an Intel MPI {collective} preset "
                               f"({adjust_var(collective)})")
        return int(label)

    def id_scheme(self, part):
        return f"Intel MPI I_MPI_ADJUST_{part} presets"

    def known_ids(self, collective):
        return known_ids(ALGORITHMS.get(collective, {}))

    # -- forcing ----------------------------------------------------------------------------------
    def algorithms(self, collective):
        return {str(k): v for k, v in ALGORITHMS.get(collective, {}).items()}

    def activate(self, collective, label, segsize):
        """Nothing to do in-process: the launch's environment forced the method (env_for)."""

    def env_for(self, collective, label, segsize):
        return forcing_env(collective, label)

    # -- the file it reads, its launcher (Intel's Hydra) --------------------------------------------
    def rules_environment(self, path, multinode=None, collectives=None):
        return {"I_MPI_TUNING": path}

    def root_environment(self):
        return {}

    def host_launcher(self, mpiexec, hosts, ppn, agent, interface, network, bind):
        env = {"FI_PROVIDER": "tcp"}          # libfabric over TCP between hosts (Intel's shm within a host)
        if not bind:
            env["I_MPI_PIN"] = "0"
        return [str(mpiexec), "-n", str(len(hosts) * ppn), "-hosts", ",".join(hosts), "-ppn", str(ppn),
                "-bootstrap", "ssh", "-bootstrap-exec", str(agent), "-iface", interface], env
