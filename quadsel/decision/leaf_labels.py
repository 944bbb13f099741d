"""The ties shape the tree, the measured times label its leaves.

Ties within the noise (`--tolerance ci`, the default build) count a method whose time is not beyond the noise
of the best as a tie, so that the builders do not cut the grid for differences the measurements cannot tell
apart. A leaf's method chosen from those tied penalties, though, is the method least often *significantly*
worse -- which can be one a little slower almost everywhere: not significantly different is not the same
(on two pooled runs of the ompi5-bcast example, whose disagreement makes most differences ties, the one-leaf
tree took a method 8 % slower on average than basic_linear, and lost 8.35 % on the third run against 3.69 %
for the single best method). So once a tree is grown, every leaf is labelled again by the penalty before the
ties (grid.DecisionGrid.measured): the method of least measured penalty over its block (the leaf rule's choice
on the measured penalties). A fixed tolerance is left alone: it is the user's own equivalence ("5 % does not
matter"), an exact tree promises every point within it, and breaking its ties by the measured times, when
tried, lost more on held-out sizes (benchmarks/selection.py, "measured exact, tolerance 5 %").
A leaf the builders gave to the library default keeps it: the default is kept where no method beats it beyond
the noise (decision/library_default.py), which is what the ties are for there. docs/methodology.md ("Ties shape
the tree, the measured times label it") records the evidence.
"""

import numpy as np

from .grid import DecisionGrid
from .quadtree import Quadtree
from .split import BlockCosts


def label_costs(grid):
    """The BlockCosts that label leaves: prefix sums of the grid's measured penalties (DecisionGrid.measured),
    each cell's best method by them; the cube itself is not kept."""
    best = np.where(grid.weight > 0, np.argmin(grid.measured, axis=2), grid.best)
    return BlockCosts(DecisionGrid(grid.comm, grid.msg, grid.measured, grid.weight, best), cells=False)


def relabel(tree, labels, shape, leaf_rule, keep=None):
    """The tree over a grid of `shape` with every leaf's method chosen by `labels` (a split.BlockCosts of the
    penalties before the ties) under `leaf_rule`. Leaves whose method is `keep` (the library default's index, or
    None) keep it."""
    r0, r1, c0, c1 = tree.blocks(*shape)
    leaves = np.flatnonzero(tree.is_leaf & (tree.method != (-1 if keep is None else keep)))
    method = tree.method.copy()
    method[leaves] = labels.methods((r0[leaves], r1[leaves], c0[leaves], c1[leaves]), leaf_rule)
    if np.array_equal(method, tree.method):
        return tree
    return Quadtree(tree.children, tree.comm_cut, tree.msg_cut, method, tree.depth)
