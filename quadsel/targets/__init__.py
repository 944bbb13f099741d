"""Targets: one module per output a decision function is written as (C, a loadable blob, rules files)."""

import importlib

from ..errors import QuadselError

TARGETS = ("c", "blob", "ompi-rules", "ompi-json", "ompi-han", "mpich-json", "impi-adjust", "impi-json", "env-script")
C_FLAVORS = ("plain", "table", "ompi-tuned")


def emit(target, fns, flavor="plain", name=None, max_requests=None, mpich_base=None, merge=True, library=None,
         order=None):
    """The text (bytes for `blob`) of `target` for the decision functions `fns` (one per collective).

    c (one tree): flavour plain (if/else-if, merged unless merge=False: c.py, c_branches.py, its tests in
    `order`: None or "expected", the fewest expected tests on random queries, c_order.py; "tree"), table (the
    grid table searched branch-free, c_grid.py; the compact node table, c_table.py, when the grid is too
    large) or ompi-tuned (Open MPI's fixed decision, ompi_tuned.py); `library` (openmpi, mpich, intelmpi)
    makes plain and table return that library's algorithm ids. impi-adjust: Intel MPI's I_MPI_ADJUST_<COLL>
    strings (impi_adjust.py); impi-json: Intel MPI's JSON tuning file
    (I_MPI_TUNING, impi_json.py); env-script: a POSIX sh job-environment script exporting the I_MPI_ADJUST strings
    of a layout forest's member picked from the job's layout (env_script.py). ompi-han: coll/han's dynamic rules
    file (ompi_han.py), used with the ompi-rules file of the same trees. blob (one tree): the node table as a binary
    file for templates/quadsel_blob.c
    (blob.py). ompi-rules / ompi-json: `max_requests` on every rule. mpich-json: `mpich_base` is MPICH's own
    selection (a dict, mpich_json.load_base) kept for the other collectives.
    """
    if target not in TARGETS:
        raise QuadselError(f"unknown target {target!r} (choose from {', '.join(TARGETS)})")
    from ..decision.decision_function import DecisionFunction
    fns = [DecisionFunction.of(fn) for fn in fns]     # a size tree is a function without the layout key
    if target != "c" and (flavor != "plain" or name):
        raise QuadselError("--flavor and --name apply to --target c only")
    if not merge and (target != "c" or flavor == "table"):
        raise QuadselError("--no-merge applies to the if/else-if C only (--target c, flavour plain or ompi-tuned)")
    if order is not None and (target != "c" or flavor == "table" or not merge):
        raise QuadselError("--order applies to the merged if/else-if C only (--target c, flavour plain or ompi-tuned)")
    order = order or "expected"
    if library is not None and (target not in ("c", "blob") or flavor == "ompi-tuned"):
        raise QuadselError("--library applies to --target c (plain, table) and blob only")
    if max_requests is not None and target not in ("ompi-rules", "ompi-json"):
        raise QuadselError("--max-requests applies to --target ompi-rules and ompi-json only")
    _layout_expressible(target, flavor, fns)
    from .method_ids import check_library
    check_library(target if flavor != "ompi-tuned" else "ompi-rules", [t for fn in fns for t in fn.size_trees])
    if target in ("c", "blob"):
        if len(fns) != 1:
            raise QuadselError(f"--target {target} takes exactly one TREE")
        if target == "blob":
            from .blob import to_blob
            return to_blob(fns[0].size_tree, library=library)
        if flavor == "ompi-tuned":
            _no_alpha_trees("--flavor ompi-tuned", fns)
            tuned = importlib.import_module(".ompi_tuned", __name__)
            return tuned.generate(fns[0].size_tree, name=name, merge=merge, order=order)
        if fns[0].has_layout:       # the layout key: one static function per layer, dispatched by ppn (c_forest.py)
            from .c_forest import generate_c_forest
            return generate_c_forest(fns[0], name=name, merge=merge, library=library, order=order)
        tree = fns[0].size_tree
        if flavor == "table":     # the grid searched branch-free, or the node table when the grid is too large
            from .c_grid import generate_c_grid, grid_fits
            from .c_table import generate_c_table
            generate = generate_c_grid if grid_fits(tree) else generate_c_table
            return generate(tree, name=name, library=library)
        from .c import generate_c
        return generate_c(tree, name=name, merge=merge, library=library, order=order)
    _no_alpha_trees(target, fns)
    module = importlib.import_module("." + target.replace("-", "_"), __name__)
    if target == "mpich-json":
        return module.emit(fns, base=mpich_base)
    return module.emit(fns, max_requests=max_requests)


# What each output cannot say about the layout key (decision/decision_function.py): it has no ppn level.
_NO_LAYOUT = {"blob": "the blob's node table has no ppn level",
              "impi-adjust": "I_MPI_ADJUST strings key on process count only; -t env-script picks them per layout",
              "table": "the grid and node tables have no ppn level", "ompi-tuned": "coll/tuned's fixed decision "
              "is called with the communicator only"}


def _layout_expressible(target, flavor, fns):
    """One line for a function with the layout key given to an output that cannot express it (docs/formats-tree.md)."""
    if not any(fn.has_layout for fn in fns):
        return
    what = _NO_LAYOUT.get(target) or (_NO_LAYOUT.get(flavor) if target == "c" else None)
    if what:
        shown = f"--target {target}" + (f" --flavor {flavor}" if target == "c" else "")
        raise QuadselError(f"{shown} cannot express a layout forest ({what}): use -t c (plain), -t mpich-json, "
                           "-t impi-json or the Open MPI files, or --ppn P for the member a job of P ranks per node runs")


def _no_alpha_trees(target, fns):
    """A rules file is read by the library itself, and no MPI library ships quadsel's α-tree broadcast."""
    from ..libraries import alphatree
    fns = [t for fn in fns for t in fn.size_trees]
    for fn in fns:
        used = {fn.methods[k].algorithm for k in set(fn.tree.method[fn.tree.is_leaf].tolist())}
        alphas = sorted(name for name in used if alphatree.is_alpha(name))
        if alphas:
            raise QuadselError(f"the {fn.collective} tree selects quadsel's alpha-tree broadcast ({', '.join(alphas[:3])}), "
                               f"which no MPI library ships: {target} cannot express it; use --target c or blob "
                               "(docs/alpha-tree.md)")


def conversion_notes(target, fns):
    """One line each: where a rules file cannot follow the tree (its library matches the collective on no message
    size: docs/collectives.md); empty for the C targets, which take the decision map's size."""
    from ..decision.decision_function import DecisionFunction
    from .method_ids import TARGET_LIBRARY
    from .rule_list import rule_lists
    fns = [DecisionFunction.of(fn) for fn in fns]
    library = TARGET_LIBRARY.get(target)
    if library is None:
        return []
    if target == "impi-json":          # JSON has no comments: its notes are printed
        from .impi_json import notes
        return [f"note: {note}" for note in notes(fns)]
    if target in ("impi-adjust", "env-script"):        # the file's own `# note:` lines say it
        return []
    layout = []
    if target in ("ompi-rules", "ompi-json", "ompi-han"):    # the layouts a file keyed on comm size alone collapses
        from .layout_rules import layout_rules
        layout = [f"note: {line}" for fn in fns for line in layout_rules(fn).lost_lines(2 if target == "ompi-json" else 1)]
    # per size tree: a function with the layout key has several of one collective
    return layout + list(dict.fromkeys(f"note: {n}" for fn in fns for t in fn.size_trees
                                       for n in rule_lists([t], library)[0].notes))
