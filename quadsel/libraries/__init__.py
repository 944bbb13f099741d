"""The MPI libraries: one module each with everything quadsel knows about it (ids, names, variables, forcing)."""

from . import mpich, openmpi
from .base import COLLECTIVES, DEFAULT_ALGORITHM, Library, detect  # noqa: F401 (the package's interface)

LIBRARIES = {openmpi.NAME: openmpi, mpich.NAME: mpich}


def open_library(version_string, mpit=None):
    """The Library object (forcing) of the MPI whose MPI_Get_library_version() is `version_string`."""
    module = LIBRARIES.get(detect(version_string))
    cls = {openmpi: openmpi.OpenMPI, mpich: mpich.MPICH}.get(module, Library)
    return cls(version_string, mpit)


def label_of(library, collective, method):
    """The label `quadsel measure` writes for a tree's method in `library` (Open MPI id as text, MPICH name)."""
    if library == openmpi.NAME:
        return str(openmpi.algorithm_id(collective, method.algorithm))
    return mpich.container(collective, method.algorithm)[0]
