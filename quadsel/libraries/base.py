"""What every MPI library has: the base class of the library modules (openmpi.py, mpich.py, intelmpi.py).

One class per library holds every fact quadsel knows about it, the way Open MPI's MCA framework asks a component
through its module struct and never by its name: its ids, names and labels, how an algorithm is forced, the
environment that makes it load a rules or tuning file, its multi-node components, its launcher's options and how
the follow check sees what it ran. `libraries.get(name)` gives the class for a name (no version, no MPI_T: the
facts); inside an MPI job `open_library(version, mpit)` gives the same class with the run's MPI_T, for forcing.
A library quadsel has no tables for is this base class under its own name: its default only, its ids its own.

Open MPI: coll/tuned reads `coll_tuned_<coll>_algorithm` (+ `_segmentsize`) when a communicator is
created, so forcing = write the cvars through MPI_T, then create the communicator (`carries_forcing`).
MPICH: `MPIR_CVAR_<COLL>_INTRA_ALGORITHM` is read at every call, so forcing = write the cvar right
before the calls of that method (with device collectives off, else ch4 may pick its own).
Without MPI_T both are forced through environment variables, one launch per method (`env_for`).
"""

import os
from dataclasses import dataclass
from typing import Optional

from ..errors import QuadselError, printable as escape

# Rows whose algorithm is this (any case) are the library's own choice: the report's baseline, never a method.
DEFAULT_ALGORITHM = "default"
# The collectives quadsel measures and verifies: every one that Open MPI's coll/tuned and MPICH let a user
# force on an intra-communicator (gatherv, scatterv and alltoallw have no coll/tuned algorithm to force).
COLLECTIVES = ("allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", "barrier", "bcast", "exscan",
               "gather", "reduce", "reduce_scatter", "reduce_scatter_block", "scan", "scatter")
# The collectives that combine data with an operation (MPI_SUM in quadsel's calls); the others move bytes.
REDUCTIONS = ("reduce", "allreduce", "scan", "exscan", "reduce_scatter", "reduce_scatter_block")
# Open MPI refuses to start as root without these; an unknown launcher may be Open MPI's, the others ignore them.
RUN_AS_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def is_reduction(collective):
    return collective in REDUCTIONS


def known_ids(table):
    """The reader's list of a numbered library's ids of a collective ({id: name}), 0 first when it is no entry."""
    zero = "" if 0 in table else "0 (the fixed decision), "
    return "known: " + zero + ", ".join(f"{k} {v}" for k, v in table.items())


def _norm(name):
    return str(name).strip().lower().replace("-", "_")


@dataclass(frozen=True)
class Deployment:
    """What `quadsel tune` deploys for a library: the file it reads and the codegen target that writes it (the same
    file verify's follow check loads for trees), and a file written beside it."""
    library: str
    file: str                      # the file the library reads, in the tune folder
    target: str                    # codegen's target that writes it
    extra: Optional[tuple] = None  # (file, target) written beside it for other versions of the library
    extra_optional: bool = False   # the extra target cannot express every tree: left out, with a note, when it fails
    extra_note: Optional[str] = None   # tuned.env's line offering the extra file instead ({file}: its name)


class Library:
    """Base: the library's default only (an unknown MPI can still be measured as `default`)."""

    name = "unknown"
    aliases = ()              # other spellings of its name (--library, .meta.json "library")
    version_marks = ()        # what its MPI_Get_library_version() says (libraries.detect)
    launcher_marks = ()       # what its mpiexec --version says (measure/launch.py mpiexec_flavor)
    known = False             # quadsel has the library's tables (ids, names, forcing, files)
    carries_forcing = False   # True: forced values are bound at communicator creation
    env_only = False          # True: MPI_T cannot force: one launch per method (measure) and per arm (verify)
    numbered = False          # its algorithms are numbers (ids) with names beside them, not names
    untagged_ids = False      # a tree recording no library has this library's ids (Open MPI's, by convention)
    paper = False             # the paper's models are of this library's algorithms (Pješivac-Grbović et al., §4)
    forces_segsize = False    # forcing takes the segment size as well as the algorithm
    names_its_default = True  # its files can hand a region back to its own default
    own_selection = None      # what decides where its files hand a size back to it, in its own words
    deployment = None         # Deployment: what tune deploys and verify's follow check loads; None: nothing
    whole_selection = False   # its rules file replaces its whole selection: written over its own (its libmpi's)
    per_ppn_files = False     # across hosts: one rules file per ranks per node (its format has no ppn key)
    probe = None              # how the follow check's LD_PRELOAD probe sees what ran: "functions", "sends" or None
    fingerprint = "order"     # the follow check's fingerprint without the probe: "order" (reduction order), "traffic"
    blob_scheme = 0           # the id scheme a blob records (templates/quadsel_blob.h): 0 = the tree's own ids
    map_by = "--map-by"       # its launcher's mapping option
    selection_variables = None   # a regex of the variables that load its selection files (measure leaves them out)

    def __init__(self, version_string="", mpit=None):
        # the first line, printable: Open MPI's string ends in a NUL byte, which reached tune's report.md and tuned.env
        text = "".join(ch for ch in version_string if ch.isprintable() or ch == "\n").strip()
        self.version = text.splitlines()[0].strip() if text else ""
        self.mpit = mpit
        self.forcing = "mpit" if mpit is not None else "env"

    @property
    def title(self):
        """The name a person reads: Open MPI, MPICH, Intel MPI; another library's own name."""
        return escape(str(self.name))

    # -- ids, names and labels --------------------------------------------------------------------
    def canonical_label(self, collective, label):
        """The label `quadsel measure` writes for `label` (None: none of this library's); an unknown library keeps
        every label as written."""
        return str(label).strip()

    def algorithm_name(self, collective, algorithm):
        """The library's name of an algorithm id ("6" -> "binomial" for Open MPI's bcast); other text as it is."""
        return str(algorithm)

    def label_of(self, collective, method):
        """The label `quadsel measure` writes (and forcing takes) for a tree's method."""
        from .alphatree import is_alpha
        if is_alpha(method.algorithm):
            raise QuadselError(f"{method.algorithm} is quadsel's alpha-tree broadcast, which no MPI library ships: the "
                               "library cannot be made to run it (compare it with `quadsel measure --alpha`, "
                               "docs/alpha-tree.md)")
        return self._label(collective, method.algorithm)

    def _label(self, collective, algorithm):
        raise QuadselError(f"quadsel cannot force algorithms of library {escape(self.name)!r}")

    def check_algorithm(self, collective, algorithm):
        """QuadselError when `algorithm` is not one of the library's algorithms of `collective`."""

    def c_id(self, collective, algorithm):
        """The id the generated C returns for an algorithm; None: the library has no ids of its own in quadsel."""
        return None

    def id_scheme(self, part):
        """What the C's ids of a collective are (its legend's words; `part`: the collective as a C identifier, BCAST),
        or None."""
        return None

    def known_ids(self, collective):
        """Why a numeric id is none of the collective's algorithms (the reader's error)."""
        return "its ids are its own"

    def unsegmented(self, collective):
        """Algorithm ids that never read the segment size (measured at several, they are one algorithm)."""
        return set()

    # -- what can be measured ------------------------------------------------------------------
    def algorithms(self, collective):
        """{label: descriptive name} of every forcible algorithm (label = the CSV algorithm column)."""
        return {}

    def default_algorithms(self, collective):
        return list(self.algorithms(collective))

    def uses_segsize(self, collective, label):
        return False

    def resolve(self, collective, names):
        """Labels for the user's `--algorithms` (labels or names, or `default`); unknown ones fail."""
        offered = self.algorithms(collective)
        if names is None:
            return [DEFAULT_ALGORITHM] + self.default_algorithms(collective)
        by_name = {_norm(v): k for k, v in offered.items()}
        out = []
        for name in names:
            key = _norm(name)
            if key == DEFAULT_ALGORITHM:
                label = DEFAULT_ALGORITHM
            elif key in offered:
                label = key
            elif key in by_name:
                label = by_name[key]
            else:
                known = ", ".join(f"{k}={v}" if k != v else k for k, v in offered.items()) or "none"
                raise QuadselError(f"unknown {collective} algorithm {name!r} for {self.name} (known: {known})")
            if label not in out:
                out.append(label)
        return out

    def methods(self, collective, labels, segments):
        """[(label, segsize)]: segmented algorithms at every segment size, the others at 0 only."""
        from .alphatree import is_alpha    # quadsel's own α-trees never segment
        out = []
        for label in labels:
            if label != DEFAULT_ALGORITHM and not is_alpha(label) and self.uses_segsize(collective, label):
                out.extend((label, seg) for seg in segments)
            else:
                out.append((label, 0))
        return out

    # -- forcing ----------------------------------------------------------------------------------
    def env_forced(self, collective):
        """Is the collective forced through a launch's environment only (one launch per method and per arm)?"""
        return self.env_only

    def forcing_environment(self):
        """Variables every launch that forces algorithms needs."""
        return {}

    def mpit_forcing(self, collective):
        """Can the collective's algorithm be forced through MPI_T in this process (else: the environment)?"""
        return self.mpit is not None

    def prepare(self, collective):
        """Once per run, on every rank, before any communicator is created."""

    def activate(self, collective, label, segsize):
        """Force (label, segsize) for the next communicator (Open MPI) or the next calls (MPICH)."""
        if label != DEFAULT_ALGORITHM:
            raise QuadselError(f"cannot force algorithms of this MPI library ({self.version})")

    def switch_off(self, collective, label):
        """Ask for `label` with the library's forcing switched off (selfcheck: the request must be ignored)."""
        self.activate(collective, DEFAULT_ALGORITHM, 0)

    def env_for(self, collective, label, segsize):
        """Environment of a launch that forces (label, segsize) without MPI_T."""
        if label != DEFAULT_ALGORITHM:
            raise QuadselError(f"cannot force algorithms of this MPI library ({self.version})")
        return {}

    # -- the files it reads -------------------------------------------------------------------------
    def rules_environment(self, path, multinode=None, collectives=None):
        """{variable: value} that make the library load the rules or tuning file at `path` (as given: the caller
        makes it absolute, or a shell word). `multinode`: the multi-node component's rules file loaded beside it.
        `collectives`: the ones the file is loaded for (None: every one it holds); a library that must turn something
        off for the file to apply turns it off for those only. verify's follow check (the collective it checks) and
        tune's tuned.env (the collectives deployed) both take it from here: what is proven is what is deployed."""
        raise QuadselError(f"quadsel writes no rules file {self.title} reads")

    def deployable(self, collective):
        """Can quadsel write `collective` into a file this library reads (its key is known: libraries/sizes.py)?"""
        from . import sizes
        return collective in sizes.TABLES.get(self.name, {})

    # -- multi-node components ----------------------------------------------------------------------
    # The component that takes some collectives on communicators of 2+ nodes (its default is then the library's
    # default there), and the info (key, value) that disqualifies it for one communicator: None without one.
    multinode_component = None
    multinode_info = None

    def multinode_collectives(self, library_version):
        """The collectives a multi-node component takes from the forced one across nodes, unless the user decided."""
        return ()

    def flat_environment(self, env=None):
        """Variables that keep the multi-node components off a whole launch (unless the user decided about them in
        this environment or in `env`)."""
        return {}

    # -- its launcher -------------------------------------------------------------------------------
    def oversubscribe(self, np_, cpus):
        """Launcher options for more ranks than cores on one host."""
        return []

    def root_environment(self):
        """Variables the launcher needs to run as root (containers and CI do)."""
        return dict(RUN_AS_ROOT) if hasattr(os, "geteuid") and os.geteuid() == 0 else {}

    def host_args(self, user_args, env_extra=None):
        """The user's launcher options (--mpiexec-args) as a launch with `env_extra` passes them."""
        return list(user_args)

    def allocation_args(self, allocation):
        """Its mpiexec's host options for a job on every node of a Slurm allocation (measure/allocation.py), with as
        many ranks on each as the allocation has tasks there."""
        raise QuadselError(f"quadsel knows no host options of {self.title}'s launcher for a Slurm allocation: give "
                           "--mpiexec-args")

    def forward_args(self, names):
        """Options that forward the variables `names` to the ranks on other hosts."""
        return []

    def host_launcher(self, mpiexec, hosts, ppn, agent, interface, network, bind):
        """(argv, env) of its mpiexec for ppn ranks on each of `hosts` through the ssh stand-in `agent`
        (testbed/launchers.py)."""
        raise QuadselError(f"no launcher command for {self.title}")
