"""Ids checked per collective before anything is generated: every method of a tree must be an algorithm of the
library its output is for (an allgather with algorithm id 42 never reaches a rules file or a C function).

The error names the tree file and the line of the offending method (docs/conventions.md: one line, exit 2).
"""

from ..errors import InputError, QuadselError
from ..libraries import alphatree, get as get_library, intelmpi, mpich, openmpi
from .c_common import library_of, tree_library

TARGET_LIBRARY = {"ompi-rules": openmpi.NAME, "ompi-json": openmpi.NAME, "ompi-han": openmpi.NAME, "mpich-json": mpich.NAME,
                  "impi-adjust": intelmpi.NAME, "impi-json": intelmpi.NAME, "env-script": intelmpi.NAME}


def check_library(target, fns):
    """One line when a tree's measurements come from another library than the one reading `target` (the library
    of each rules file and of the ompi-tuned C flavour: method_ids.TARGET_LIBRARY)."""
    from ..libraries import title
    wanted = TARGET_LIBRARY.get(target)
    for fn in fns if wanted else ():
        own, reader = tree_library(fn), get_library(wanted)
        if own is None and reader.numbered and not reader.untagged_ids:
            # a tree without a library has Open MPI's ids (ingest/identity.py): written as they are into another
            # library's numbers, basic_linear (1) would become Intel's preset 1, binomial
            raise QuadselError(f"the {fn.collective} tree records no MPI library, so its numeric ids are Open MPI's, "
                               f"not {reader.title} presets: {target} needs a tree built from {reader.title} "
                               f"measurements (or with --library {wanted})")
        if own is not None and own != wanted:
            raise QuadselError(f"the {fn.collective} tree was built from {title(own)} measurements and {target} is "
                               f"read by {title(wanted)}: its algorithms are not {title(wanted)}'s (build the tree "
                               f"from {title(wanted)} measurements, or emit -t c)")


def output_library(fn, target, flavor="plain", library=None):
    """The library whose algorithm ids `target` writes for fn (None: the tree's own names, unchecked)."""
    if target in TARGET_LIBRARY:
        return TARGET_LIBRARY[target]
    if flavor == "ompi-tuned":
        return openmpi.NAME
    return library_of(fn, library)


def check_method(library, collective, algorithm):
    """QuadselError when `algorithm` is not one of `library`'s algorithms of `collective`."""
    get_library(library).check_algorithm(collective, algorithm)


def check_tree(fn, path, target, flavor="plain", library=None):
    """InputError (file:line of the method in the tree file) at the first method the output's library lacks;
    before that, a tree of another library's measurements is refused as a whole (check_library)."""
    check_library(target if flavor != "ompi-tuned" else "ompi-rules", [fn])
    lib = output_library(fn, target, flavor, library)
    if lib is None:
        return
    for index, method in enumerate(fn.methods):
        if method.algorithm.strip().lower() == "default" or alphatree.is_alpha(method.algorithm):
            continue     # quadsel's α-trees: C ids of their own; a rules file refuses one a leaf picks (emit)
        try:
            check_method(lib, fn.collective, method.algorithm)
        except QuadselError as exc:
            raise InputError(path, _method_line(path, index), f"method {index}: {exc}") from None


def _method_line(path, index):
    """The line of methods[index] in the tree file, or None when it cannot be told."""
    from ..inputs import read_text
    from ..json_lines import JArray, parse_json_lines
    try:
        methods = parse_json_lines(read_text(path, what="tree file"), path).get("methods")
        return methods[index].line_of("algorithm") if isinstance(methods, JArray) and index < len(methods) else None
    except (InputError, AttributeError, TypeError):
        return None
