"""The MPI libraries: one module each with everything quadsel knows about it, held by its class (base.py says
what a class holds); `get(name)` is the class of a library name, `open_library` the same inside an MPI job."""

import re
import sys

from . import alphatree, intelmpi, mpich, openmpi
from .base import COLLECTIVES, DEFAULT_ALGORITHM, Library, escape  # noqa: F401 (the package's interface)
from ..errors import QuadselError

# The libraries quadsel has tables for, in the order messages list them.
CLASSES = (openmpi.OpenMPI, mpich.MPICH, intelmpi.IntelMPI)
LIBRARIES = {cls.name: sys.modules[cls.__module__] for cls in CLASSES}     # name -> the module of its tables
# The order MPI_Get_library_version() is matched in: a derivative before the library it derives from (Intel MPI's
# string may say MPICH too).
_DETECT = (openmpi.OpenMPI, intelmpi.IntelMPI, mpich.MPICH)
# Other spellings of the libraries quadsel has tables for (--library, .meta.json "library").
_ALIASES = {alias: cls.name for cls in CLASSES for alias in cls.aliases}
_LIBRARY_NAME = re.compile(r"^[a-z][a-z0-9_.+-]{0,39}$")


def library_name(text, where="--library"):
    """The library a name means: one of LIBRARIES (aliases allowed: ompi, impi, ...) or, for a library quadsel
    has no tables for, the name itself (lower case; letters, digits, `_.+-`, at most 40)."""
    key = str(text).strip().lower().replace(" ", "_")
    key = _ALIASES.get(key, key)
    if not _LIBRARY_NAME.match(key):
        raise QuadselError(f"{where}: {escape(str(text))!r} is not a library name (letters, digits, _.+- ; "
                           f"known: {', '.join(LIBRARIES)}, or any other name)")
    return key


def get(name):
    """The Library of a library name, for its facts (no version, no MPI_T): the class of one of LIBRARIES, or for
    any other name (None: no library recorded) the base class under that name, whose ids are its own."""
    for cls in CLASSES:
        if cls.name == name:
            return cls()
    library = Library()
    library.name = name
    return library


def ids_of(name):
    """The Library whose ids a tree's numeric labels are: its own, or for a tree recording no library (None) the
    library whose ids that convention reads (`untagged_ids`: Open MPI coll/tuned's)."""
    return get(name) if name else next(cls() for cls in CLASSES if cls.untagged_ids)


def detect(version_string):
    """'openmpi', 'intelmpi', 'mpich' (also other MPICH derivatives) or None, from MPI_Get_library_version()."""
    return next((cls.name for cls in _DETECT if any(m in version_string for m in cls.version_marks)), None)


def title(library):
    """Open MPI, MPICH, Intel MPI; another library's own name."""
    return get(library).title


def open_library(version_string, mpit=None):
    """The Library object (forcing) of the MPI whose MPI_Get_library_version() is `version_string`."""
    found = detect(version_string)
    cls = next((c for c in CLASSES if c.name == found), Library)
    return cls(version_string, mpit)


def canonical_label(library, collective, label):
    """The label `quadsel measure` writes for `label` in `library` (Open MPI / Intel MPI id as text, MPICH CVAR
    name, or quadsel's own α-tree name), or None. A library quadsel has no tables for keeps every label as written."""
    if collective == "bcast" and alphatree.is_alpha(label):
        return alphatree.canonical(label)
    return get(library).canonical_label(collective, label)


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
    return get(library).label_of(collective, method)


def algorithm_name(library, collective, algorithm):
    """The library's name of an algorithm id ("6" -> "binomial" for Open MPI's bcast, "knomial" for its reduce),
    or None when `algorithm` is already a name or its library has no name for it. A tree without a library
    reads numeric ids as Open MPI coll/tuned's (as its C does); a library quadsel has no tables for has none."""
    text = str(algorithm).strip()
    if not (text.isascii() and text.isdigit()):
        return None
    lib = ids_of(library)
    if not lib.numbered:
        return None
    name = lib.algorithm_name(collective, text)
    return None if name == text else name


def named_label(library, collective, label):
    """A method label for a person to read: the id with its name beside it ("6 binomial", "3 pipeline/seg8192");
    names, `default` and ids without a name as they are. Machine-read fields keep the bare label."""
    match = re.match(r"(\d+)(?=$|[/ ])", str(label))
    return with_name(label, algorithm_name(library, collective, match.group(1)) if match else None)


def with_name(label, name):
    """named_label's form from a label and its algorithm's name (None: unknown): "6 binomial",
    "3 pipeline/seg8192"; a label that is no id (MPICH's names, `default`) as it is. Every text quadsel shows
    (tables, trace, breakdown) writes an id with its name this way."""
    text = str(label)
    match = re.match(r"(\d+)(?=$|[/ ])", text)
    if not match or not name or name == text:
        return text
    return f"{match.group(1)} {name}{text[match.end():]}"
