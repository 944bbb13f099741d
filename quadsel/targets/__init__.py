"""Targets: one module per output a decision function is written as (C, Open MPI and MPICH rules files)."""

import importlib

from ..errors import QuadselError

TARGETS = ("c", "ompi-rules", "ompi-json", "mpich-json")
C_FLAVORS = ("plain", "table", "ompi-tuned")


def emit(target, fns, flavor="plain", name=None, max_requests=None, mpich_base=None):
    """The text of `target` for the decision functions `fns` (one per collective; the C target takes one).

    c: flavour plain (nested if/else-if, c.py), table (the in-memory node table, c.py) or ompi-tuned (Open
    MPI's fixed decision, ompi_tuned.py). ompi-rules / ompi-json: `max_requests` on every rule. mpich-json:
    `mpich_base` is MPICH's own selection (a dict, mpich_json.load_base) kept for the other collectives.
    """
    if target not in TARGETS:
        raise QuadselError(f"unknown target {target!r} (choose from {', '.join(TARGETS)})")
    if target != "c" and (flavor != "plain" or name):
        raise QuadselError("--flavor and --name apply to --target c only")
    if max_requests is not None and target not in ("ompi-rules", "ompi-json"):
        raise QuadselError("--max-requests applies to --target ompi-rules and ompi-json only")
    if target == "c":
        if len(fns) != 1:
            raise QuadselError("--target c takes exactly one TREE")
        if flavor == "ompi-tuned":
            return importlib.import_module(".ompi_tuned", __name__).generate(fns[0], name=name)
        from . import c
        return (c.generate_c_table if flavor == "table" else c.generate_c)(fns[0], name=name)
    module = importlib.import_module("." + target.replace("-", "_"), __name__)
    if target == "mpich-json":
        return module.emit(fns, base=mpich_base)
    return module.emit(fns, max_requests=max_requests)
