"""The paper's constrained quadtrees of one decision map (§3.1, Tables 1-2), all cut from one exact tree.

A sweep of maximum depths and accuracy thresholds (`quadsel report`'s paper rows) would grow the padded
midpoint tree once per constraint; the midpoints do not depend on the constraints, so every constrained tree
is the exact tree cut at its first stopping nodes (midpoint.constrained). Each decision function equals what
`build_size_tree(dmap, max_depth=..., accuracy_threshold=..., pad_mode=..., leaf_rule=...)` returns
(its "created" time aside).
"""

from .builder import SharedWork, builder_options, size_tree_of
from .midpoint import cut_tree, exact_padded


def paper_functions(dmap, constraints, pad_mode="spread", leaf_rule="majority"):
    """One decision function per (max_depth, accuracy_threshold) in `constraints` (max_depth None: no limit),
    in that order, with the paper's builder's other options (floor rule, no tolerance, no default kept)."""
    options = dict(split="midpoint", between="floor", pad_mode=pad_mode, leaf_rule=leaf_rule, tolerance=0.0)
    checked = [builder_options(max_depth=depth, accuracy_threshold=threshold, max_leaves=None, **options)
               for depth, threshold in constraints]       # bad constraints fail before any growth
    work, grid = SharedWork().grid(dmap, "floor", 0.0, False)
    exact = exact_padded(grid, pad_mode, leaf_rule)
    out = []
    for option in checked:
        tree, stats = cut_tree(exact, grid.shape, option.max_depth, option.accuracy_threshold)
        out.append(size_tree_of(dmap, work, tree, option, paper=stats))
    return out
