"""The MPI libraries: one module each with everything quadsel knows about it (ids, names, variables, forcing)."""

from . import mpich, openmpi
from .base import COLLECTIVES, DEFAULT_ALGORITHM, Library, detect  # noqa: F401 (the package's interface)

LIBRARIES = {openmpi.NAME: openmpi, mpich.NAME: mpich}


def open_library(version_string, mpit=None):
    """The Library object (forcing) of the MPI whose MPI_Get_library_version() is `version_string`."""
    module = LIBRARIES.get(detect(version_string))
    cls = {openmpi: openmpi.OpenMPI, mpich: mpich.MPICH}.get(module, Library)
    return cls(version_string, mpit)


def canonical_label(library, collective, label):
    """The label `quadsel measure` writes for `label` in `library` (Open MPI id as text, MPICH CVAR name), or None."""
    return LIBRARIES[library].canonical_label(collective, label)


def label_evidence(collective, label):
    """The libraries an algorithm label can only come from: {"openmpi"} for an id or a coll/tuned name MPICH
    lacks, {"mpich"} for an MPICH name Open MPI lacks; empty when both or neither have it (binomial, ring).
    Aliases (linear for basic_linear) are no evidence: they are other people's spellings."""
    text = str(label).strip()
    if text.isascii() and text.isdigit():
        return {openmpi.NAME}
    found = set()
    if openmpi.own_name(collective, text):
        found.add(openmpi.NAME)
    if mpich.canonical_label(collective, text) is not None:
        found.add(mpich.NAME)
    return found if len(found) == 1 else set()


def label_of(library, collective, method):
    """The label `quadsel measure` writes for a tree's method in `library` (Open MPI id as text, MPICH name)."""
    if library == openmpi.NAME:
        return str(openmpi.algorithm_id(collective, method.algorithm))
    return mpich.container(collective, method.algorithm)[0]
