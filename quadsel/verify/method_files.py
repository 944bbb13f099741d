"""`verify --check-methods`: a rules file per measured method, each selecting that method at every checked point.

The follow check of a rules file proves something only where the file's choice differs from the library's
default: a tree whose timings picked the default's algorithm everywhere leaves nothing to tell apart. This
check asks the other question the deployment depends on: for every method that was measured (and so could be
chosen), does the library, loading quadsel's file in its format, run that method? Each file comes from a
one-method tree over the check's points, emitted exactly as verify emits a tree's file (the same target and
MPICH base), and is checked like any other (quadsel.verify.follow). It proves the emitted format and keys
are followed for each method; it says nothing about the timing-chosen file, which the ordinary check covers.
"""

import os

from ..decision.builder import build_size_tree
from ..decision.decision_function import DecisionFunction
from ..decision.decision_map import Method, build_decision_map
from ..ingest.table import Measurement, Table
from ..output import write_text


def measured_methods(measurement_files, trees):
    """{collective: [Method]} of every non-default method the measurements (or the trees) hold."""
    out = {}
    if measurement_files:
        from ..ingest import read_measurements
        for row in read_measurements(list(measurement_files)):
            if not row.is_default:
                out.setdefault(row.collective, set()).add(Method(row.algorithm, row.segsize))
    for tree in trees:
        out.setdefault(tree.collective, set()).update(m for m in tree.fn.methods if not m.algorithm == "default")
    return {c: sorted(v, key=lambda m: (m.algorithm, m.segsize)) for c, v in out.items()}


def one_method_tree(collective, method, points, library):
    """A decision function choosing `method` at every (comm, msg) of `points` (and beyond: extrapolated)."""
    rows = [Measurement(collective, method.algorithm, method.segsize, n, m, 1.0, source=f"check-methods:{i}")
            for i, (n, m) in enumerate(sorted(set(points)))]
    tree = build_size_tree(build_decision_map(Table(rows, library=library, aggregated=True), collective))
    tree.provenance = dict(tree.provenance or {}, library=library)
    return DecisionFunction.of(tree)


def check_methods(methods, points, library, np_, emit, workdir, mpiexec=None, echo=None):
    """{collective: {method label: [PointCheck]}} of one rules file per method (emit(fns) -> the file's text)."""
    from .follow import check_follows
    out = {}
    for collective, listed in methods.items():
        if collective not in points:
            continue
        for method in listed:
            fn = one_method_tree(collective, method, points[collective], library)
            path = os.path.join(workdir, f"{collective}-{len(os.listdir(workdir))}.rules")
            write_text(path, emit([fn]))
            out.setdefault(collective, {})[method.label] = check_follows(
                [fn], path, library, np_, points={collective: points[collective]}, mpiexec=mpiexec, echo=echo)
    return out
