"""MPICH: everything quadsel knows about it (MPICH 4.x / 5.0; ../shared/FORMATS.md).

Algorithm names (the values of `MPIR_CVAR_<COLL>_INTRA_ALGORITHM`), the csel containers and parameters its
selection JSON names, the conditions MPICH puts on some algorithms, and the class `MPICH` that holds them with
how an algorithm is forced, the file it loads and its launcher (Hydra). The selection JSON dialect itself is
targets/mpich_json.py.
"""

import re

from ..errors import QuadselError
from .base import DEFAULT_ALGORITHM, Deployment, Library, escape

NAME = "mpich"
TITLE = "MPICH"

# MPICH algorithm names: the values of MPIR_CVAR_<COLL>_INTRA_ALGORITHM besides `auto` (MPICH 5.0.x, in the
# order of the CVAR's enumeration; src/mpi/coll/coll_algorithms.txt lists the same blocking intra algorithms).
ALGORITHMS = {
    "allgather": ["brucks", "k_brucks", "nb", "recursive_doubling", "ring", "recexch_doubling", "recexch_halving"],
    "allgatherv": ["brucks", "nb", "recursive_doubling", "ring"],
    "allreduce": ["nb", "smp", "recursive_doubling", "recursive_multiplying", "reduce_scatter_allgather", "tree",
                  "recexch", "ring", "k_reduce_scatter_allgather", "ccl"],
    "alltoall": ["brucks", "k_brucks", "nb", "pairwise", "pairwise_sendrecv_replace", "scattered"],
    "alltoallv": ["nb", "pairwise_sendrecv_replace", "scattered"],
    "barrier": ["nb", "smp", "k_dissemination", "recexch"],
    "bcast": ["binomial", "nb", "smp", "scatter_recursive_doubling_allgather", "scatter_ring_allgather",
              "pipelined_tree", "tree"],
    "exscan": ["nb", "recursive_doubling"],
    "gather": ["binomial", "nb"],
    "reduce": ["binomial", "nb", "smp", "reduce_scatter_gather"],
    "reduce_scatter": ["nb", "noncommutative", "pairwise", "recursive_doubling", "recursive_halving"],
    "reduce_scatter_block": ["noncommutative", "recursive_doubling", "pairwise", "recursive_halving", "nb"],
    "scan": ["nb", "smp", "recursive_doubling"],
    "scatter": ["binomial", "nb"],
}
# `ccl` needs an external CCL (NCCL/RCCL/oneCCL) and otherwise falls back: not swept unless asked for.
# pairwise_sendrecv_replace runs only in place (MPI_IN_PLACE), which quadsel's buffers are not: forced, MPICH
# runs its own selection instead (FALLBACKS), so it is not swept unless asked for either.
NOT_BY_DEFAULT = {"ccl", "pairwise_sendrecv_replace"}

# Parameters a csel container must carry (the JSON does not fall back to the CVARs): MPICH 5.0.2's CVAR
# defaults, i.e. what a forced measurement of the algorithm used.
PARAMETERS = {
    ("bcast", "tree"): {"tree_type": "kary", "k": 2, "is_non_blocking": 1},
    ("bcast", "pipelined_tree"): {"tree_type": "kary", "k": 2, "is_non_blocking": 1, "chunk_size": 8192,
                                  "recv_pre_posted": 0},
    ("allreduce", "tree"): {"tree_type": "knomial_1", "k": 2, "chunk_size": 0, "buffer_per_child": 0},
    ("allreduce", "recexch"): {"k": 2, "single_phase_recv": 0},
    ("allreduce", "k_reduce_scatter_allgather"): {"k": 2, "single_phase_recv": 0},
    ("allreduce", "recursive_multiplying"): {"k": 2},
    ("allgather", "k_brucks"): {"k": 2},
    ("allgather", "recexch_doubling"): {"k": 2, "single_phase_recv": 0},
    ("allgather", "recexch_halving"): {"k": 2, "single_phase_recv": 0},
    ("alltoall", "k_brucks"): {"k": 2},
    ("barrier", "k_dissemination"): {"k": 2},
    ("barrier", "recexch"): {"k": 2, "single_phase_recv": 0},
}
# Algorithms MPICH may only run under conditions (its own selection guards them the same way): the
# condition, and the algorithm used where it does not hold. A guard costs nothing where it holds.
GUARDS = {
    ("reduce", "reduce_scatter_gather"): ("builtin_op_and_count", "binomial"),
    ("reduce", "smp"): ("commutative", "binomial"),
    ("allreduce", "reduce_scatter_allgather"): ("builtin_op_and_count", "recursive_doubling"),
    ("allreduce", "smp"): ("commutative", "recursive_doubling"),
    ("allreduce", "ring"): ("commutative", "recursive_doubling"),
    ("allreduce", "recexch"): ("commutative", "recursive_doubling"),
    ("allreduce", "k_reduce_scatter_allgather"): ("commutative", "recursive_doubling"),
    ("allreduce", "recursive_multiplying"): ("commutative", "recursive_doubling"),
    ("bcast", "scatter_recursive_doubling_allgather"): ("pow2_comm", "scatter_ring_allgather"),
    ("allgather", "recursive_doubling"): ("pow2_comm", "brucks"),
    ("allgatherv", "recursive_doubling"): ("pow2_comm", "brucks"),
    ("reduce_scatter", "pairwise"): ("commutative", "noncommutative"),
    ("reduce_scatter", "recursive_halving"): ("commutative", "noncommutative"),
    ("reduce_scatter_block", "noncommutative"): ("pow2_comm", "recursive_doubling"),
    ("reduce_scatter_block", "pairwise"): ("commutative", "recursive_doubling"),
    ("reduce_scatter_block", "recursive_halving"): ("commutative", "recursive_doubling"),
    ("scan", "smp"): ("commutative", "recursive_doubling"),
}
# MPICH's smp algorithms run only on a parent communicator (one with node-level sub-communicators): on
# its internal node communicators MPICH 5.0.2 asserts MPIR_Comm_is_parent_comm and aborts (found by
# `quadsel verify`). Its own selection guards them with comm_hierarchy=parent; so do we.
HIERARCHY_FALLBACK = {"bcast": "binomial", "reduce": "binomial", "allreduce": "recursive_doubling",
                      "barrier": "k_dissemination", "scan": "recursive_doubling"}
# The inter-communicator algorithm of each collective (coll_algorithms.txt; scan and exscan have none).
INTER = {"bcast": "MPIR_Bcast_inter_remote_send_local_bcast",
         "reduce": "MPIR_Reduce_inter_local_reduce_remote_send",
         "allreduce": "MPIR_Allreduce_inter_reduce_exchange_bcast",
         "allgather": "MPIR_Allgather_inter_local_gather_remote_bcast",
         "allgatherv": "MPIR_Allgatherv_inter_remote_gather_local_bcast",
         "alltoall": "MPIR_Alltoall_inter_pairwise_exchange",
         "alltoallv": "MPIR_Alltoallv_inter_pairwise_exchange",
         "barrier": "MPIR_Barrier_inter_bcast",
         "gather": "MPIR_Gather_inter_linear",
         "reduce_scatter": "MPIR_Reduce_scatter_inter_remote_reduce_local_scatter",
         "reduce_scatter_block": "MPIR_Reduce_scatter_block_inter_remote_reduce_local_scatter",
         "scatter": "MPIR_Scatter_inter_linear"}
_NAME = re.compile(r"^[a-z0-9_]+$")


def algorithm_var(collective):
    """The control variable forcing an algorithm (`MPIR_CVAR_BCAST_INTRA_ALGORITHM`)."""
    return f"MPIR_CVAR_{collective.upper()}_INTRA_ALGORITHM"


def _key(collective, name):
    """`MPIR_Bcast_intra_binomial`, `Binomial`, `scatter-ring-allgather` -> the CVAR value spelling."""
    text = str(name).strip()
    coll_title = collective.capitalize()
    for prefix in (f"MPIR_{coll_title}_intra_", f"MPIR_{coll_title}_allcomm_"):
        if text.startswith(prefix):
            text = text[len(prefix):]
    return text.lower().replace("-", "_")


def canonical_label(collective, name):
    """The label `quadsel measure` writes for this algorithm (its CVAR value), or None if it is none of MPICH's."""
    key = _key(collective, name)
    return key if key in ALGORITHMS.get(collective, ()) else None


def container(collective, name):
    """csel container name (`MPIR_Bcast_intra_binomial`) of a method's algorithm, checked against MPICH's list."""
    coll_title = collective.capitalize()
    key = _key(collective, name)
    known = ALGORITHMS.get(collective)
    if known is None:
        raise QuadselError(f"no MPICH algorithm list for collective {escape(collective)!r} "
                           f"(known: {', '.join(ALGORITHMS)})")
    if not _NAME.match(key) or key not in known:
        hint = " (numeric names are Open MPI ids: build the tree from MPICH measurements)" if key.isdigit() else ""
        raise QuadselError(f"algorithm {escape(name)!r} is not an MPICH {collective} algorithm{hint}; "
                           f"known: {', '.join(known)}")
    kind = "allcomm" if key == "nb" else "intra"
    return key, f"MPIR_{coll_title}_{kind}_{key}"


_MPICH_ITEM = re.compile(r"^\s*([A-Za-z0-9_]+)\s+-\s")


class MPICH(Library):
    """Forcing: `MPIR_CVAR_<COLL>_INTRA_ALGORITHM` is read at every call, so forcing = write the variable right
    before the calls of that method (with device collectives off, else ch4 may pick its own)."""

    name = NAME
    title = TITLE
    version_marks = ("MPICH",)    # other MPICH derivatives too
    launcher_marks = ("HYDRA", "MPICH")   # Intel MPI's Hydra too
    known = True
    own_selection = "MPICH's own selection"
    deployment = Deployment(NAME, "tuned-mpich.json", "mpich-json")
    whole_selection = True    # the csel JSON replaces MPICH's whole selection: written over its own
    probe = "sends"           # the messages UCX sent, seen by the preloaded probe
    blob_scheme = 2
    map_by = "-map-by"
    # the file, and the per-collective device switches tuned.env turns off with it (rules_environment); the global
    # MPIR_CVAR_DEVICE_COLLECTIVES stays (a site's own setting): with the switches gone, percoll keeps the device on
    selection_variables = r"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE|MPIR_CVAR_[A-Z_]+_DEVICE_COLLECTIVE"

    # -- ids, names and labels --------------------------------------------------------------------
    def canonical_label(self, collective, label):
        return canonical_label(collective, label)

    def _label(self, collective, algorithm):
        return container(collective, algorithm)[0]

    def check_algorithm(self, collective, algorithm):
        container(collective, algorithm)

    def c_id(self, collective, algorithm):
        # the value of MPIR_CVAR_<COLL>_INTRA_ALGORITHM's enum: 0 = auto, then the algorithm list in order
        return 1 + ALGORITHMS[collective].index(container(collective, algorithm)[0])

    def id_scheme(self, part):
        return f"MPICH MPIR_CVAR_{part}_INTRA_ALGORITHM"

    def known_ids(self, collective):
        return "MPICH names its algorithms; ids are Open MPI's or Intel MPI's"

    # -- forcing ----------------------------------------------------------------------------------
    def _var(self, collective):
        return algorithm_var(collective)

    def _values(self, var):
        """Names of an MPICH enum cvar in value order: its description lists them as `name - text` lines."""
        desc, _ = self.mpit.info(var)
        return [m.group(1) for m in map(_MPICH_ITEM.match, desc.splitlines()) if m]

    def algorithms(self, collective):
        if self.mpit is not None and self.mpit.has(self._var(collective)):
            names = [n for n in self._values(self._var(collective)) if n != "auto"]
        else:
            names = ALGORITHMS[collective]
        return {n: n for n in names}

    def default_algorithms(self, collective):
        return [n for n in self.algorithms(collective) if n not in NOT_BY_DEFAULT]

    def prepare(self, collective):
        if self.mpit is None:
            return
        self._algorithm_values = {n: i for i, n in enumerate(self._values(self._var(collective)))}
        self._device_values = {n: i for i, n in enumerate(self._values("MPIR_CVAR_DEVICE_COLLECTIVES"))}
        if "auto" not in self._algorithm_values or "none" not in self._device_values:
            raise QuadselError("cannot read MPICH's algorithm list from MPI_T")
        # The library default is whatever these held at start (normally auto + percoll).
        self._saved = (self.mpit.read_int(self._var(collective)), self.mpit.read_int("MPIR_CVAR_DEVICE_COLLECTIVES"))

    def activate(self, collective, label, segsize):
        if self.mpit is None:
            return
        if label == DEFAULT_ALGORITHM:
            algorithm, device = self._saved
        else:
            algorithm, device = self._algorithm_values[label], self._device_values["none"]
        self.mpit.write_int("MPIR_CVAR_DEVICE_COLLECTIVES", device)
        self.mpit.write_int(self._var(collective), algorithm)

    def env_for(self, collective, label, segsize):
        if label == DEFAULT_ALGORITHM:
            return {}
        return {"MPIR_CVAR_DEVICE_COLLECTIVES": "none", self._var(collective): label}

    # -- the file it reads, its launcher (Hydra) ----------------------------------------------------
    def rules_environment(self, path, multinode=None, collectives=None):
        # The MPIR-level selection (the file) applies where the device (ch4) collectives do not take the call first.
        # For the collectives the file is loaded for, the device is turned off one by one (`percoll`): every other
        # collective keeps MPICH's own device-level choice, as without the file (DEVICE_COLLECTIVES=none, the only
        # way when the collectives are not named, would change them all: docs/deploy.md).
        env = {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": path}
        if collectives is None:
            return dict(env, MPIR_CVAR_DEVICE_COLLECTIVES="none")
        env["MPIR_CVAR_DEVICE_COLLECTIVES"] = "percoll"
        env.update({f"MPIR_CVAR_{c.upper()}_DEVICE_COLLECTIVE": "0" for c in sorted(collectives)})
        return env

    def root_environment(self):
        return {}

    def allocation_args(self, allocation):
        # Hydra inside the allocation starts its proxies with srun; host:count places the ranks node by node
        return ["-hosts", ",".join(f"{h}:{n}" for h, n in zip(allocation.hosts, allocation.tasks_per_node))]

    def host_launcher(self, mpiexec, hosts, ppn, agent, interface, network, bind):
        return [str(mpiexec), "-n", str(len(hosts) * ppn), "-hosts", ",".join(hosts), "-ppn", str(ppn),
                "-launcher", "ssh", "-launcher-exec", str(agent), "-iface", interface], {}
