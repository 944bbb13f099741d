"""What every MPI library has: the base of the library modules (openmpi.py, mpich.py) and detection.

Open MPI: coll/tuned reads `coll_tuned_<coll>_algorithm` (+ `_segmentsize`) when a communicator is
created, so forcing = write the cvars through MPI_T, then create the communicator (`carries_forcing`).
MPICH: `MPIR_CVAR_<COLL>_INTRA_ALGORITHM` is read at every call, so forcing = write the cvar right
before the calls of that method (with device collectives off, else ch4 may pick its own).
Without MPI_T both are forced through environment variables, one launch per method (`env_for`).
"""

from ..errors import QuadselError, printable as escape  # noqa: F401 (escape: used by the library modules)

# Rows whose algorithm is this (any case) are the library's own choice: the report's baseline, never a method.
DEFAULT_ALGORITHM = "default"
# The collectives quadsel measures and verifies: every one that Open MPI's coll/tuned and MPICH let a user
# force on an intra-communicator (gatherv, scatterv and alltoallw have no coll/tuned algorithm to force).
COLLECTIVES = ("allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", "barrier", "bcast", "exscan",
               "gather", "reduce", "reduce_scatter", "reduce_scatter_block", "scan", "scatter")
# The collectives that combine data with an operation (MPI_SUM in quadsel's calls); the others move bytes.
REDUCTIONS = ("reduce", "allreduce", "scan", "exscan", "reduce_scatter", "reduce_scatter_block")


def is_reduction(collective):
    return collective in REDUCTIONS


def detect(version_string):
    """'openmpi', 'intelmpi', 'mpich' (also other MPICH derivatives) or None, from MPI_Get_library_version()."""
    if "Open MPI" in version_string:
        return "openmpi"
    if "Intel(R) MPI" in version_string or "Intel MPI" in version_string:
        return "intelmpi"   # before MPICH: Intel MPI derives from it
    if "MPICH" in version_string:
        return "mpich"
    return None


def _norm(name):
    return str(name).strip().lower().replace("-", "_")


class Library:
    """Base: the library's default only (an unknown MPI can still be measured as `default`)."""

    name = "unknown"
    carries_forcing = False   # True: forced values are bound at communicator creation

    def __init__(self, version_string, mpit=None):
        # the first line, printable: Open MPI's string ends in a NUL byte, which reached tune's report.md and tuned.env
        text = "".join(ch for ch in version_string if ch.isprintable() or ch == "\n").strip()
        self.version = text.splitlines()[0].strip() if text else ""
        self.mpit = mpit
        self.forcing = "mpit" if mpit is not None else "env"

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
    def mpit_forcing(self, collective):
        """Can the collective's algorithm be forced through MPI_T in this process (else: the environment)?"""
        return self.mpit is not None

    def prepare(self, collective):
        """Once per run, on every rank, before any communicator is created."""

    def activate(self, collective, label, segsize):
        """Force (label, segsize) for the next communicator (Open MPI) or the next calls (MPICH)."""
        if label != DEFAULT_ALGORITHM:
            raise QuadselError(f"cannot force algorithms of this MPI library ({self.version})")

    def env_for(self, collective, label, segsize):
        """Environment of a launch that forces (label, segsize) without MPI_T."""
        if label != DEFAULT_ALGORITHM:
            raise QuadselError(f"cannot force algorithms of this MPI library ({self.version})")
        return {}
