"""A decision function as a library's file carries it: what the library runs when it loads quadsel's file.

Where a library matches a collective's rules on no message size (libraries/sizes.py, `written_form` NONE: Open
MPI's scan, exscan, alltoallv and barrier, and its scatter, whose size only the root computes), the file holds one
method per communicator cell: the method the tree picks at most measured message sizes (targets/rule_list.py,
`library_rule_list`). A tree that changes with the message size there is not what runs. `as_written` paints each
such row with its written method and encodes the result exactly, so that verify times and proves, prune hands
back, and tune reports the very choice the deployed file makes (docs/tune.md; issue 40's "not followed" points:
Open MPI scatter at 2 ranks, 1 B, where the tree picked basic_linear and the file, like every size of that row, the
library's decision).
"""

import numpy as np


def as_written(fn, library):
    """`fn` with every layer as `library`'s file writes it; `fn` itself (the same object) when nothing differs."""
    from ..libraries import sizes
    if library is None or sizes.written_form(library, fn.collective) != sizes.NONE:
        return fn
    trees = [_rows_as_written(layer.tree, library) for layer in fn.layers]
    if all(t is layer.tree for t, layer in zip(trees, fn.layers)):
        return fn
    return fn.with_trees(trees)


def _rows_as_written(tree, library):
    from .rule_list import library_rule_list
    painted = tree.cell_methods()
    written = library_rule_list(tree, library)
    rows = painted.copy()
    for row in range(len(tree.comm_axis)):
        comm = max(1, int(tree.comm_axis.lo[row]))
        rows[row, :] = tree.methods.index(written.lookup(comm, 0))
    if np.array_equal(rows, painted):
        return tree
    return repainted(tree, rows, tree.methods, written=True)


def repainted(tree, painted, methods, **provenance):
    """The SizeTree over `tree`'s cells that answers `painted` (cell -> index into `methods`) exactly; `provenance`
    is added to the tree's own (verify/prune.py hands points back with it too)."""
    from ..decision.grid import DecisionGrid
    from ..decision.size_tree import SizeTree
    from ..decision.split import grow_exact
    from ..errors import QuadselError
    penalty = np.ones(painted.shape + (len(methods),))
    np.put_along_axis(penalty, painted[:, :, None], 0.0, axis=2)
    grid = DecisionGrid(tree.comm_axis, tree.msg_axis, penalty, np.ones(painted.shape), painted)
    encoded = grow_exact(grid, "penalty")
    if not np.array_equal(encoded.paint(*painted.shape), painted):
        raise QuadselError("re-encoding a tree exactly failed (a bug: please report it)")
    return SizeTree(tree.collective, tree.comm_sizes, tree.msg_sizes, methods, encoded, tree.options,
                    dict(tree.provenance, **provenance), tree.paper_stats)
