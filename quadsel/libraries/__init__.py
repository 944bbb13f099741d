"""The MPI libraries: one module each with everything quadsel knows about it (ids, names, variables, forcing)."""

from . import alphatree, mpich, openmpi
from ..errors import QuadselError
from .base import COLLECTIVES, DEFAULT_ALGORITHM, Library, detect  # noqa: F401 (the package's interface)

LIBRARIES = {openmpi.NAME: openmpi, mpich.NAME: mpich}


def open_library(version_string, mpit=None):
    """The Library object (forcing) of the MPI whose MPI_Get_library_version() is `version_string`."""
    module = LIBRARIES.get(detect(version_string))
    cls = {openmpi: openmpi.OpenMPI, mpich: mpich.MPICH}.get(module, Library)
    return cls(version_string, mpit)


def canonical_label(library, collective, label):
    """The label `quadsel measure` writes for `label` in `library` (Open MPI id as text, MPICH CVAR name, or
    quadsel's own α-tree name), or None."""
    if collective == "bcast" and alphatree.is_alpha(label):
        return alphatree.canonical(label)
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
    if alphatree.is_alpha(method.algorithm):
        raise QuadselError(f"{method.algorithm} is quadsel's alpha-tree broadcast, which no MPI library ships: the "
                           "library cannot be made to run it (compare it with `quadsel measure --alpha`, "
                           "docs/alpha-tree.md)")
    if library == openmpi.NAME:
        return str(openmpi.algorithm_id(collective, method.algorithm))
    return mpich.container(collective, method.algorithm)[0]
