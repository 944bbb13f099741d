"""Open MPI: everything quadsel knows about it (coll/tuned of Open MPI 5.0.x; ../shared/FORMATS.md).

Collective and algorithm ids, the spellings benchmark data uses for them, which algorithms read the segment
size and the chain fan-out, the MCA variables that force an algorithm, coll/han (its multi-node component),
its launcher's options, and the class `OpenMPI` that holds them. The rules-file dialects Open MPI reads are
targets/ompi_rules.py (classic) and targets/ompi_json.py (JSON), coll/han's is targets/ompi_han.py; its C
decision function is targets/ompi_tuned.py.
"""

import os
import re

from ..errors import QuadselError
from .base import DEFAULT_ALGORITHM, Deployment, Library, escape, known_ids

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

# coll_tuned_<coll>_algorithm ids of Open MPI 5.0.x: the MPI_T enumeration of each variable (0 = "ignore",
# the fixed decision) and the `case` of each coll_tuned_<coll>_intra_do_this (main adds reduce 8 knomial).
# One spelling differs: allgatherv 1 is "default" in MPI_T (ompi_coll_base_allgatherv_intra_basic_default);
# quadsel reserves `default` for the library's own choice, so it is `basic_default` here (MPIT_SPELLINGS).
ALGORITHMS = {
    "allgather": {1: "linear", 2: "bruck", 3: "recursive_doubling", 4: "ring", 5: "neighbor", 6: "two_proc",
                  7: "sparbit"},
    "allgatherv": {1: "basic_default", 2: "bruck", 3: "ring", 4: "neighbor", 5: "two_proc", 6: "sparbit"},
    "allreduce": {1: "basic_linear", 2: "nonoverlapping", 3: "recursive_doubling", 4: "ring",
                  5: "segmented_ring", 6: "rabenseifner"},
    "alltoall": {1: "linear", 2: "pairwise", 3: "modified_bruck", 4: "linear_sync", 5: "two_proc"},
    "alltoallv": {1: "basic_linear", 2: "pairwise"},
    "barrier": {1: "linear", 2: "double_ring", 3: "recursive_doubling", 4: "bruck", 5: "two_proc", 6: "tree"},
    "bcast": {1: "basic_linear", 2: "chain", 3: "pipeline", 4: "split_binary_tree", 5: "binary_tree",
              6: "binomial", 7: "knomial", 8: "scatter_allgather", 9: "scatter_allgather_ring"},
    "exscan": {1: "linear", 2: "recursive_doubling"},
    "gather": {1: "basic_linear", 2: "binomial", 3: "linear_sync"},
    "reduce": {1: "linear", 2: "chain", 3: "pipeline", 4: "binary", 5: "binomial", 6: "in-order_binary",
               7: "rabenseifner"},
    "reduce_scatter": {1: "non-overlapping", 2: "recursive_halving", 3: "ring", 4: "butterfly"},
    "reduce_scatter_block": {1: "basic_linear", 2: "recursive_doubling", 3: "recursive_halving", 4: "butterfly"},
    "scan": {1: "linear", 2: "recursive_doubling"},
    "scatter": {1: "basic_linear", 2: "binomial", 3: "linear_nb"},
}
MPIT_SPELLINGS = {("allgatherv", 1): "default"}
ALGORITHM_IDS = {coll: {name: alg for alg, name in table.items()} for coll, table in ALGORITHMS.items()}
# Other spellings seen in benchmark data and in the paper (Linear, Binary, Split-Binary, ...).
ALIASES = {
    "bcast": {"linear": 1, "binary": 5, "bintree": 5, "splitbinary": 4, "splitbintree": 4, "bmtree": 6},
    "reduce": {"basiclinear": 1, "binarytree": 4, "binomialtree": 5, "inorderbinarytree": 6},
    "allreduce": {"linear": 1, "recursivedoubling": 3, "segmentedring": 5},
    "allgather": {"basiclinear": 1, "recursivedoubling": 3, "neighborexchange": 5, "twoprocs": 6},
    "allgatherv": {"basicdefault": 1, "neighborexchange": 4, "twoprocs": 5},
    "alltoall": {"basiclinear": 1, "bruck": 3, "twoprocs": 5},
    "alltoallv": {"linear": 1},
    "barrier": {"basiclinear": 1, "doublering": 2, "twoprocs": 5},
    "gather": {"linear": 1},
    "scatter": {"linear": 1},
    "reduce_scatter": {"nonoverlapping": 1},
    "reduce_scatter_block": {"linear": 1},
}
# Chain algorithms read FANINOUT as their number of chains; a forced run (as `quadsel measure` does) uses
# coll_tuned_<coll>_algorithm_chain_fanout, default coll_tuned_init_chain_fanout = 4. Others ignore it.
CHAIN_IDS = {"bcast": {2}, "reduce": {2}}
DEFAULT_CHAIN_FANOUT = 4
# Algorithms whose 5.0.x implementation reads the segment size (coll_tuned_<coll>_intra_do_this passes it
# on: bcast and reduce trees, segmented ring, gather linear_sync's first segment); every other algorithm
# ignores it, and measuring it at several segment sizes would repeat one measurement.
SEGMENTED = {"bcast": {2, 3, 4, 5, 6, 7}, "reduce": {2, 3, 4, 5, 6}, "allreduce": {5}, "gather": {3}}
UNSEGMENTED = {coll: set(table) - SEGMENTED.get(coll, set()) for coll, table in ALGORITHMS.items()}
UNSEGMENTED["reduce"].add(8)   # main's knomial reduce (not in 5.0.x) takes no segment size either


# Collectives whose coll_tuned variables Open MPI 5.0.x registers read-only (MPI_T refuses the write: error 64):
# forced through the environment only, one launch per method (measure) or per arm (verify).
MPIT_READONLY = {"allgatherv"}


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


# coll/han (priority 35, above coll/tuned's 30) takes these collectives on communicators of 2+ nodes: 5.0.x, and main /
# 6.x also alltoall(v), gatherv, scatterv (ompi/mca/coll/han/coll_han_module.c)
HAN_5_0 = ("allgather", "allgatherv", "allreduce", "barrier", "bcast", "gather", "reduce", "scatter")
HAN_MAIN = HAN_5_0 + ("alltoall", "alltoallv", "gatherv", "scatterv")
# the info key a communicator's collective components are chosen by (coll/han sets it on its own sub-communicators)
HAN_INFO_KEY = "ompi_comm_coll_preference"
# either variable tells that the user has decided about coll/han (docs/measure.md, Setup)
HAN_OFF = ("OMPI_MCA_coll", "OMPI_MCA_coll_han_priority")


def han_decided(env=None):
    """The user set coll/han's fate (HAN_OFF in this environment, or in `env`, a launch's extra variables): then
    quadsel neither switches it off nor times coll/han as the default."""
    return any(k in os.environ or k in (env or {}) for k in HAN_OFF)


def han_collectives(library_version):
    """The collectives coll/han takes by default on this Open MPI (its version string): none before 5.0 (4.1's
    coll/han has priority 0 unless the user raises it), 5.0.x HAN_5_0, later (or unknown) HAN_MAIN."""
    found = re.search(r"v?(\d+)\.(\d+)", library_version or "")
    if found and int(found.group(1)) < 5:
        return ()
    return HAN_5_0 if found and found.groups() == ("5", "0") else HAN_MAIN


def with_monitoring(args):
    """The user's launcher options with pml/monitoring allowed: `--mca pml ob1` (a list of PMLs to choose from)
    would keep the follow check's traffic counter (pml/monitoring, which stacks on the PML chosen) from loading,
    so it becomes `--mca pml ob1,monitoring`. An exclusion (`^cm`) or a list naming it stays as it is."""
    out = list(args)
    for i in range(len(out) - 2):
        if out[i] in ("--mca", "-mca", "--omca") and out[i + 1] == "pml":
            value = out[i + 2]
            if not value.startswith("^") and "monitoring" not in value.split(","):
                out[i + 2] = value + ",monitoring"
    return out


class OpenMPI(Library):
    """Forcing: coll/tuned reads `coll_tuned_<coll>_algorithm` (+ `_segmentsize`) when a communicator is
    created, so forcing = write the variables through MPI_T, then create the communicator."""

    name = NAME
    title = TITLE
    aliases = ("ompi", "open_mpi")
    version_marks = ("Open MPI",)
    launcher_marks = ("Open MPI", "OpenRTE", "PRRTE")
    known = True
    carries_forcing = True
    numbered = True
    untagged_ids = True
    paper = True
    forces_segsize = True
    own_selection = "Open MPI's own decision (algorithm 0: coll/tuned's fixed decision)"
    deployment = Deployment(NAME, "tuned.rules", "ompi-rules", ("tuned-ompi6.json", "ompi-json"))
    per_ppn_files = True
    probe = "functions"       # the coll/base algorithm functions that ran, counted by the preloaded probe
    fingerprint = "traffic"   # pml/monitoring's message counts
    blob_scheme = 1
    multinode_component = "coll/han"
    multinode_info = (HAN_INFO_KEY, "^han")   # Open MPI 5.0.x reads it when it selects a communicator's components
    selection_variables = (r"OMPI_MCA_coll_tuned_(use_dynamic_rules|dynamic_rules_filename)"
                           r"|OMPI_MCA_coll_han_(use_dynamic_file_rules|dynamic_rules_filename)")

    # -- ids, names and labels --------------------------------------------------------------------
    def canonical_label(self, collective, label):
        return canonical_label(collective, label)

    def algorithm_name(self, collective, algorithm):
        return algorithm_name(collective, algorithm)

    def _label(self, collective, algorithm):
        return str(algorithm_id(collective, algorithm))

    def check_algorithm(self, collective, algorithm):
        algorithm_id(collective, algorithm)

    def c_id(self, collective, algorithm):
        return algorithm_id(collective, algorithm)

    def id_scheme(self, part):
        return f"Open MPI coll_tuned_{part.lower()}_algorithm"

    def known_ids(self, collective):
        return known_ids(ALGORITHMS.get(collective, {}))

    def unsegmented(self, collective):
        return UNSEGMENTED.get(collective, set())

    # -- what can be measured, and forcing ----------------------------------------------------------
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
        return int(label) in SEGMENTED.get(collective, ())

    def env_forced(self, collective):
        return collective in MPIT_READONLY

    def forcing_environment(self):
        return {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1"}   # forced values are ignored unless dynamic rules are on

    def mpit_forcing(self, collective):
        """Open MPI 5.0.x registers coll_tuned_allgatherv_algorithm (and its segment size) read-only: MPI_T
        refuses to write it (error 64), so allgatherv is forced through the environment, one launch per method."""
        if self.mpit is None or not self.mpit.has(algorithm_var(collective)):
            return False
        try:
            self.mpit.write_int(algorithm_var(collective), self.mpit.read_int(algorithm_var(collective)))
        except QuadselError:
            return False
        return True

    def prepare(self, collective):
        if self.mpit is not None:
            # Forced values are ignored unless dynamic rules are on; it is writable at run time.
            self.mpit.write_int("coll_tuned_use_dynamic_rules", 1)

    def activate(self, collective, label, segsize):
        if self.mpit is None or collective in MPIT_READONLY:
            return  # forced by the environment of this launch
        self.mpit.write_int(algorithm_var(collective), 0 if label == DEFAULT_ALGORITHM else int(label))
        if self.mpit.has(algorithm_var(collective, "_segmentsize")):
            self.mpit.write_int(algorithm_var(collective, "_segmentsize"), segsize)

    def switch_off(self, collective, label):
        self.mpit.write_int("coll_tuned_use_dynamic_rules", 0)
        self.mpit.write_int(algorithm_var(collective), int(label))

    def env_for(self, collective, label, segsize):
        alg = 0 if label == DEFAULT_ALGORITHM else int(label)
        return {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                f"OMPI_MCA_{algorithm_var(collective)}": str(alg),
                f"OMPI_MCA_{algorithm_var(collective, '_segmentsize')}": str(segsize)}

    # -- the files it reads, coll/han ---------------------------------------------------------------
    def rules_environment(self, path, multinode=None, collectives=None):
        env = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_dynamic_rules_filename": path}
        if multinode is not None:   # coll/han's rules file: coll/han or coll/tuned, per size, on 2+ nodes
            env.update({"OMPI_MCA_coll_han_use_dynamic_file_rules": "1",
                        "OMPI_MCA_coll_han_dynamic_rules_filename": multinode})
        return env

    def multinode_collectives(self, library_version):
        return () if han_decided() else han_collectives(library_version)   # the user's own choice is their default

    def flat_environment(self, env=None):
        return {} if han_decided(env) else {"OMPI_MCA_coll": "^han"}

    # -- its launcher (PRRTE's mpiexec) -------------------------------------------------------------
    def oversubscribe(self, np_, cpus):
        return ["--oversubscribe"] if np_ > cpus else []   # Open MPI refuses more ranks than cores without it

    def host_args(self, user_args, env_extra=None):
        return with_monitoring(user_args) if (env_extra or {}).get("OMPI_MCA_pml_monitoring_enable") \
            else list(user_args)

    def allocation_args(self, allocation):
        # inside the allocation prterun starts its daemons with srun whatever the hosts: these only place the ranks
        return ["--host", ",".join(f"{h}:{n}" for h, n in zip(allocation.hosts, allocation.tasks_per_node))]

    def forward_args(self, names):
        # Open MPI forwards only OMPI_MCA_* to other hosts: every other variable is named with -x
        return [arg for name in names if not name.startswith("OMPI_MCA_") for arg in ("-x", name)]

    def host_launcher(self, mpiexec, hosts, ppn, agent, interface, network, bind):
        select = network or interface
        argv = [str(mpiexec), "-n", str(len(hosts) * ppn), "--host", ",".join(f"{h}:{ppn}" for h in hosts),
                "--prtemca", "plm", "ssh",                 # the ssh launcher, whatever resource manager is seen
                "--prtemca", "plm_ssh_agent", str(agent),
                "--prtemca", "prte_if_include", select,    # PRRTE's daemons talk over the hosts' network
                "--mca", "pml", "ob1",                     # point-to-point through the BTLs below
                "--mca", "btl", "self,sm,tcp",             # shared memory within a host, TCP between hosts
                "--mca", "btl_tcp_if_include", select]
        if not bind:
            argv += ["--bind-to", "none"]
        return argv, self.root_environment()
