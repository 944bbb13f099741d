"""Which MPI library is loaded, which collective algorithms it offers, and how to force one of them.

Open MPI: coll/tuned reads `coll_tuned_<coll>_algorithm` (+ `_segmentsize`) when a communicator is
created, so forcing = write the cvars through MPI_T, then create the communicator (`carries_forcing`).
MPICH: `MPIR_CVAR_<COLL>_INTRA_ALGORITHM` is read at every call, so forcing = write the cvar right
before the calls of that method (with device collectives off, else ch4 may pick its own).
Without MPI_T both are forced through environment variables, one launch per method (`env_for`).
"""

import re

from ..errors import QuadselError
from ..ingest.table import DEFAULT_ALGORITHM
from ..mpi_facts import MPICH_ALGORITHMS, OMPI_ALGORITHMS

COLLECTIVES = ("bcast", "reduce", "allreduce")

# Algorithms whose 5.0.x implementation never reads the forced segment size (coll_tuned_*_do_this and
# coll_base_*): measuring them at several segment sizes would repeat one measurement.
OMPI_UNSEGMENTED = {"bcast": {1, 8, 9}, "reduce": {1, 7, 8}, "allreduce": {1, 2, 3, 4, 6}}

# `ccl` needs an external CCL (NCCL/RCCL/oneCCL) and otherwise falls back: not swept unless asked for.
MPICH_NOT_BY_DEFAULT = {"ccl"}


def detect(version_string):
    """'openmpi', 'mpich' (also MPICH derivatives) or None, from MPI_Get_library_version()."""
    if "Open MPI" in version_string:
        return "openmpi"
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
        self.version = version_string.strip().splitlines()[0] if version_string.strip() else ""
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
        out = []
        for label in labels:
            if label != DEFAULT_ALGORITHM and self.uses_segsize(collective, label):
                out.extend((label, seg) for seg in segments)
            else:
                out.append((label, 0))
        return out

    # -- forcing ----------------------------------------------------------------------------------
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


class OpenMPI(Library):
    name = "openmpi"
    carries_forcing = True

    def _var(self, collective, suffix=""):
        return f"coll_tuned_{collective}_algorithm{suffix}"

    def algorithms(self, collective):
        if self.mpit is not None and self.mpit.has(self._var(collective)):
            items = self.mpit.enum_items(self._var(collective))
            if items:
                return {str(v): n for v, n in items if v != 0}
        return {str(k): v for k, v in OMPI_ALGORITHMS[collective].items()}

    def uses_segsize(self, collective, label):
        if self.mpit is not None and not self.mpit.has(self._var(collective, "_segmentsize")):
            return False
        return int(label) not in OMPI_UNSEGMENTED[collective]

    def prepare(self, collective):
        if self.mpit is not None:
            # Forced values are ignored unless dynamic rules are on; it is writable at run time.
            self.mpit.write_int("coll_tuned_use_dynamic_rules", 1)

    def activate(self, collective, label, segsize):
        if self.mpit is None:
            return  # forced by the environment of this launch
        self.mpit.write_int(self._var(collective), 0 if label == DEFAULT_ALGORITHM else int(label))
        if self.mpit.has(self._var(collective, "_segmentsize")):
            self.mpit.write_int(self._var(collective, "_segmentsize"), segsize)

    def env_for(self, collective, label, segsize):
        alg = 0 if label == DEFAULT_ALGORITHM else int(label)
        return {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                f"OMPI_MCA_{self._var(collective)}": str(alg),
                f"OMPI_MCA_{self._var(collective, '_segmentsize')}": str(segsize)}


_MPICH_ITEM = re.compile(r"^\s*([A-Za-z0-9_]+)\s+-\s")


class MPICH(Library):
    name = "mpich"

    def _var(self, collective):
        return f"MPIR_CVAR_{collective.upper()}_INTRA_ALGORITHM"

    def _values(self, var):
        """Names of an MPICH enum cvar in value order: its description lists them as `name - text` lines."""
        desc, _ = self.mpit.info(var)
        return [m.group(1) for m in map(_MPICH_ITEM.match, desc.splitlines()) if m]

    def algorithms(self, collective):
        if self.mpit is not None and self.mpit.has(self._var(collective)):
            names = [n for n in self._values(self._var(collective)) if n != "auto"]
        else:
            names = MPICH_ALGORITHMS[collective]
        return {n: n for n in names}

    def default_algorithms(self, collective):
        return [n for n in self.algorithms(collective) if n not in MPICH_NOT_BY_DEFAULT]

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


def open_library(version_string, mpit=None):
    kind = detect(version_string)
    cls = {"openmpi": OpenMPI, "mpich": MPICH}.get(kind, Library)
    return cls(version_string, mpit)
