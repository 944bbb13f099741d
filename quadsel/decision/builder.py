"""Building the size tree of a decision map (decision/size_tree.py): the grid under the between rule, then the
quadtree -- the paper's midpoint tree, or cuts at measured sizes, exact or to a leaf budget chosen by held-out
folds -- labelled, with the sizes outside the measured range handed back to the library when asked.
"""

import datetime

import numpy as np

from .. import __version__
from ..errors import OptionError
from .decision_map import DecisionMap
from .grid import COMM_TOP, Axis, build_grid
from .options import DEFAULT_BUILD, PAPER_BUILD, SPLITS, BuildOptions, exact_options  # noqa: F401 (the interface)
from .quadtree import LEAF, Quadtree
from .size_tree import SizeTree

DEFAULT_ALONE = "default alone"     # the folds' verdict: the library default everywhere (_fold_choice)


def build_size_tree(dmap: DecisionMap, split="midpoint", between="floor", max_depth=None, accuracy_threshold=1.0,
                    max_leaves=None, leaf_rule="majority", pad_mode="spread", tolerance=0.0, provenance=None,
                    keep_default=False, outside="extrapolate", budget_rule=None, shared=None, outside_sides=None,
                    outside_reach=None, bound_outside=False):
    """Build the size tree of a decision map: the grid under the between rule, then the quadtree.

    split="midpoint" is the paper's (pad to 2^k x 2^k, §3, §3.1); split="measured" cuts at measured sizes
    (decision/split.py), exactly, under the paper's constraints or to a leaf budget; max_leaves="auto"
    chooses the budget by held-out folds (decision/size.py). keep_default: leaves that do not beat the measured
    library default beyond the noise get it ("auto": the held-out folds decide, with the budget; without
    max_leaves="auto" it is not kept); outside="default": sizes outside the measured range are the library's
    (decision/library_default.py; outside_sides: only those sides; outside_reach: {side: bound}, those sides
    extrapolated up to the bound and handed back beyond, decision/reach.py), "auto": each side handed back or
    extrapolated by the held-out folds, and with bound_outside=True each extrapolated side tried two steps out and
    bounded one step past the range where it loses there (decision/reach.py). shared: a SharedWork for several
    builds of the same map.
    """
    size_info = reach = None
    if max_leaves is not None and accuracy_threshold < 1.0:
        raise OptionError("a leaf budget and an accuracy threshold do not combine: give one of them")
    same = dict(split=split, between=between, max_depth=max_depth, accuracy_threshold=accuracy_threshold,
                leaf_rule=leaf_rule, pad_mode=pad_mode, tolerance=tolerance, keep_default=keep_default)
    from .library_default import auto_keep, outside_record, outside_rule, settled, sides_option
    if keep_default == "auto":      # the measured default is a method of every build that can name it (issue 39)
        keep_default = same["keep_default"] = auto_keep(dmap)
    if max_leaves is None and split != "midpoint":
        same = exact_options(same)
        tolerance = same["tolerance"]
    decide = outside == "auto"
    outside, sides = outside_rule(dmap, split, between, outside)
    if outside == "default" and outside_sides is not None and not decide:
        sides = tuple(outside_sides)
    if outside == "default" and outside_reach and not decide:
        reach = {"bounds": dict(outside_reach)}
    frame = _frame(dmap, between, outside, sides) if split != "midpoint" else 0
    if max_leaves == "auto":
        from .budget_rule import DEFAULT_RULE
        rule = budget_rule or DEFAULT_RULE
        max_leaves, scores, keep_default, keep_record, floor, handed = _fold_choice(
            dmap, same, keep_default, rule, shared, sides if decide else None)
        if decide:
            sides, reach = _reach(dmap, same, max_leaves, handed, between) if bound_outside else (handed, None)
            outside = settled(outside, sides)
            frame = _frame(dmap, between, outside, sides)
        same["keep_default"] = keep_default
        size_info = {"size_rule": f"auto ({rule}): mean held-out penalty % per leaf budget (null = exact)",
                     "held_out_penalty": [[None if b is None else b + frame, round(v, 4)] for b, v in scores.items()]}
        if max_leaves == DEFAULT_ALONE:     # the folds' verdict: tune nothing (one leaf, nothing around it)
            max_leaves, outside, sides, frame, reach = 1, "extrapolate", (() if decide else sides), 0, None
        # the budgets of the deployed tree: the folds' trees inside the measured range and the `frame` leaves
        # that hand the sizes outside it back to the library
        elif max_leaves is not None:
            max_leaves += frame
        if frame:
            size_info["outside_leaves"] = frame
        if keep_record and "default_alone" in keep_record:
            size_info["default_alone"] = keep_record.pop("default_alone")
        if keep_record:
            size_info["keep_default"] = keep_record
        if floor:       # a small grid: the measured floor (decision/measured_floor.py), in deployed budgets too
            deployed = lambda b: None if b is None else b + frame  # noqa: E731
            size_info["measured_floor"] = dict(floor, folds_chose=deployed(floor["folds_chose"]),
                                               built=deployed(floor["built"]),
                                               measured_penalty=[[deployed(b), v] for b, v in floor["measured_penalty"]])
    elif decide and sides is not None and split != "midpoint":     # a fixed size: the folds of that size decide
        from .library_default import inner_budget
        from .size import edge_sides
        # a budget too small for every side handed back asks the folds with itself: the sides they hand back
        # must then fit in it (else inner_budget refuses below, naming their leaves)
        inner = inner_budget(max_leaves, frame) if max_leaves is None or max_leaves > frame else max_leaves
        sides = edge_sides(dmap, lambda d, budgets: budget_stream(d, budgets, **same), inner, sides)
        if bound_outside:
            sides, reach = _reach(dmap, same, inner, sides, between)
        outside = settled(outside, sides)
        frame = _frame(dmap, between, outside, sides)
    if decide and sides is not None:
        provenance = dict(provenance or {}, outside=outside_record(dmap, between, sides, reach))
    options = builder_options(max_leaves=max_leaves, size_rule="auto" if size_info else "fixed", outside=outside,
                              outside_sides=sides_option(dmap, between, outside, sides),
                              outside_reach=(reach or {}).get("bounds") or None if outside == "default" else None,
                              **same)
    shared = shared or SharedWork()
    work, grid = shared.grid(dmap, between, tolerance, keep_default)
    paper = None
    if split == "midpoint":
        from .midpoint import cut_tree, exact_padded
        tree, paper = cut_tree(exact_padded(grid, pad_mode, leaf_rule), grid.shape, max_depth, accuracy_threshold)
    elif size_info and size_info.get("default_alone", {}).get("chosen"):
        from .decision_map import DEFAULT_METHOD
        tree = Quadtree(np.full((1, 4), LEAF, dtype=np.int64), np.array([-1]), np.array([-1]),
                        np.array([work.methods.index(DEFAULT_METHOD)]), np.array([0]))
    elif max_leaves is not None:
        from .best_first import grow_best_first
        from .library_default import inner_budget
        tree = grow_best_first(grid, inner_budget(max_leaves, frame), leaf_rule, max_depth,
                               shared.ahead(dmap, between, tolerance, keep_default))
    else:
        tree = shared.exact(dmap, same)
    if split != "midpoint":
        tree = shared.labelled(dmap, same, tree)
    return size_tree_of(dmap, work, tree, options, provenance, size_info, paper)


class SharedWork:
    """What several builds of one decision map share (the default build and `report`, which also builds every
    budget and the exact tree of the map): per grid, its block costs and look-ahead cache (decision/lookahead.py)
    and its exact trees. Maps are told apart by identity (each is kept alive here)."""

    def __init__(self):
        self._grids, self._exact, self._labelled = {}, {}, {}

    def grid(self, dmap, between, tolerance, keep_default):
        """(the map the tree is built on, its DecisionGrid)."""
        key = (id(dmap), between, tolerance, bool(keep_default))
        if key not in self._grids:
            work, grid, labels = _grid(dmap, between, tolerance, keep_default)
            self._grids[key] = [dmap, work, grid, None, labels]      # [3]: the LookAhead, made when asked
        return tuple(self._grids[key][1:3])

    def labelled(self, dmap, same, tree):
        """The tree grown on that grid with its leaves labelled by the penalties before the ties, when the grid
        has ties within the noise (decision/leaf_labels.py); the library default's leaves keep it."""
        key = (id(dmap), same["between"], same["tolerance"], bool(same["keep_default"]))
        _, work, grid, _, labels = self._grids[key]
        if labels is None:
            return tree
        if (key, id(tree)) not in self._labelled:      # one relabelled tree per tree (the exact one is shared)
            from .decision_map import DEFAULT_METHOD
            from .leaf_labels import relabel
            keep = work.methods.index(DEFAULT_METHOD) if DEFAULT_METHOD in work.methods else None
            self._labelled[key, id(tree)] = (tree, relabel(tree, labels, grid.shape, same["leaf_rule"], keep))
        return self._labelled[key, id(tree)][1]

    def ahead(self, dmap, between, tolerance, keep_default):
        """The LookAhead (with the BlockCosts) of that grid."""
        entry = self._grids[(id(dmap), between, tolerance, bool(keep_default))]
        if entry[3] is None:
            from .lookahead import LookAhead
            from .split import BlockCosts
            entry[3] = LookAhead(BlockCosts(entry[2]))
        return entry[3]

    def exact_leaves(self, dmap, same):
        """`more_than(n)`: the exact tree has more than n leaves -- split.ExactLeaves, walked only as far as
        asked, unless the tree is already grown."""
        from .split import ExactLeaves
        key = self._exact_key(dmap, same)
        if key in self._exact:
            return lambda n, leaves=self._exact[key].n_leaves: leaves > n
        at = (dmap, same["between"], same["tolerance"], same["keep_default"])
        return ExactLeaves(self.grid(*at)[1], same["leaf_rule"], same["max_depth"], same["accuracy_threshold"],
                           self.ahead(*at).costs).more_than

    @staticmethod
    def _exact_key(dmap, same):
        return (id(dmap), same["between"], same["tolerance"], bool(same["keep_default"]), same["leaf_rule"],
                same["max_depth"], same["accuracy_threshold"])

    def exact(self, dmap, same):
        """The exact (or depth-, threshold-limited) tree of cuts at measured sizes of that grid."""
        from .split import grow_exact
        at = (dmap, same["between"], same["tolerance"], same["keep_default"])
        key = self._exact_key(dmap, same)
        if key not in self._exact:
            self._exact[key] = grow_exact(self.grid(*at)[1], same["leaf_rule"], same["max_depth"],
                                          same["accuracy_threshold"], self.ahead(*at).costs)
        return self._exact[key]


def _reach(dmap, same, budget, handed, between):
    """(the sides handed back, {bounds, two_steps} or None): `handed` (the folds' choice, library_default.
    best_hand_back) and every side they extrapolate that does not hold two steps out, handed back past one step
    (decision/reach.py); `budget`: the tree's inside the measured range (DEFAULT_ALONE: none tried)."""
    if handed is None or budget == DEFAULT_ALONE:
        return handed, None
    from .library_default import sides_present
    from .reach import reach_of
    extrapolated = [side for side in sides_present(dmap, between) if side not in handed]
    bounds, records = reach_of(dmap, lambda d, budgets: budget_stream(d, budgets, **same), budget, extrapolated)
    if not records:
        return handed, None
    from .options import SIDES
    return tuple(side for side in SIDES if side in handed or side in bounds), {"bounds": bounds, "two_steps": records}


def _fold_choice(dmap, same, keep_default, rule, shared=None, sides=None):
    """(budget, {budget: mean held-out penalty}, keep_default, record, measured floor record or None, sides handed
    back) by the held-out folds (decision/size.py). The budget is DEFAULT_ALONE when the default is kept and the folds
    score the library default alone (tuning nothing) below the tree they chose beyond the noise (size.default_alone):
    the build then hands every size back.

    keep_default None: the folds also decide whether the measured library default is one more method -- the
    variant whose best budget has the lower mean held-out penalty wins, not keeping it on equal means -- and
    `record` says what each variant scored (docs/methodology.md, "Keep the default where it is not beaten")."""
    from .size import choose_budget
    shared = shared or SharedWork()
    found = {}
    for keep in ((False, True) if keep_default is None else (bool(keep_default),)):
        variant = dict(same, keep_default=keep)
        budget, scores, floor, handed, alone = choose_budget(
            dmap, lambda d, budgets, v=variant: budget_stream(d, budgets, **v),
            shared.exact_leaves(dmap, exact_options(variant)), rule, sides)
        found[keep] = (budget, scores, min(scores.values()) if scores else 0.0, floor, handed, alone)
    keep = next(iter(found))
    if len(found) == 2 and found[True][2] < found[False][2] - 1e-9:
        keep = True
    record = None
    if len(found) == 2:
        record = {"rule": "auto: the variant with the lower mean held-out penalty at its chosen budget",
                  "kept": keep, "held_out_penalty": {"without": round(found[False][2], 4),
                                                      "with": round(found[True][2], 4)}}
    budget, scores, _, floor, handed, alone = found[keep]
    if keep and alone is not None:
        record = dict(record or {}, default_alone=dict(alone, rule="the library default alone (every size handed "
                                                       "back) when the folds score it below the chosen tree beyond "
                                                       "the noise (2 standard errors of the paired differences)"))
        if alone["chosen"]:
            budget = DEFAULT_ALONE
    return budget, scores, keep, record, floor, handed


def budget_functions(dmap, budgets, **options):
    """The size tree of every leaf budget in `budgets` (None: the exact tree) of one decision map: each
    the tree `build --max-leaves BUDGET` deploys (decision/best_first.py, budget_trees), so that the folds
    score what a budget would deploy. Options as budget_stream's."""
    return list(budget_stream(dmap, budgets, **options))


def budget_stream(dmap, budgets, split="measured", between="floor", max_depth=None, accuracy_threshold=1.0,
                  leaf_rule="penalty", pad_mode="spread", tolerance=0.0, keep_default=False, outside="extrapolate",
                  provenance=None, shared=None, outside_sides=None, outside_reach=None):
    """budget_functions one budget at a time (a generator: a budget not asked for is not grown); the budgets
    in increasing order, the exact tree (None) last. The growths share the grid's look-ahead cache (`shared`:
    a SharedWork for several builds of the same map)."""
    from .best_first import budget_trees
    from .library_default import sides_option
    if keep_default not in (True, False):
        raise ValueError("budget_functions needs keep_default resolved to true or false")
    shared = shared or SharedWork()
    same = dict(split=split, between=between, max_depth=max_depth, accuracy_threshold=accuracy_threshold,
                leaf_rule=leaf_rule, pad_mode=pad_mode, tolerance=tolerance, keep_default=keep_default)
    from .library_default import inner_budget
    work, grid = shared.grid(dmap, between, tolerance, keep_default)
    sides = outside_sides if outside == "default" else None     # only these sides handed back (None: all)
    frame = _frame(dmap, between, outside, sides)     # budgets are of the deployed tree, outside leaves included
    grown = budget_trees(grid, (inner_budget(b, frame) for b in budgets if b is not None), leaf_rule, max_depth,
                         shared.ahead(dmap, between, tolerance, keep_default))
    exact = exact_options(same)
    for budget in budgets:
        at = same if budget is not None else exact
        tree = shared.labelled(dmap, at, next(grown) if budget is not None else shared.exact(dmap, exact))
        options = builder_options(max_leaves=budget, outside=outside, outside_sides=sides_option(
            dmap, between, outside, sides), outside_reach=outside_reach if outside == "default" else None, **at)
        yield size_tree_of(dmap, work, tree, options, provenance)


def _frame(dmap, between, outside, sides=None):
    """The leaves a tree over `dmap` spends on the sizes outside the measured range (0 when it extrapolates;
    `sides`: those handed back, None: all)."""
    if outside != "default":
        return 0
    from .grid import outside_leaves
    return outside_leaves(dmap.comm_sizes, dmap.msg_sizes, between, sides)


def builder_options(split, between, pad_mode, max_depth, accuracy_threshold, max_leaves, leaf_rule, tolerance,
                    keep_default=False, outside="extrapolate", size_rule="fixed", outside_sides=None,
                    outside_reach=None):
    """The checked BuildOptions of one build (decision/options.py)."""
    options = BuildOptions(split=split, between=between, pad=pad_mode, max_depth=max_depth,
                           accuracy_threshold=float(accuracy_threshold), max_leaves=max_leaves, leaf_rule=leaf_rule,
                           size_rule=size_rule, tolerance=tolerance if tolerance == "ci" else float(tolerance),
                           keep_default=bool(keep_default), outside=outside, outside_sides=outside_sides,
                           outside_reach=outside_reach)
    options.check()
    return options


def _grid(dmap, between, tolerance, keep_default):
    """(the map the tree is built on, its DecisionGrid, the label costs of its measured penalties or None: with
    ties within the noise, decision/leaf_labels.py; the grid then keeps only these sums, not the cube)."""
    work = dmap
    if keep_default:      # the measured library default is one more method (decision/library_default.py)
        from .library_default import with_default_column
        work = with_default_column(dmap)
    grid = build_grid(work, between, tolerance=tolerance)
    if grid.measured is None:
        return work, grid, None
    from dataclasses import replace
    from .leaf_labels import label_costs
    return work, replace(grid, measured=None), label_costs(grid)


def size_tree_of(dmap, work, tree, options, provenance=None, size_info=None, paper=None):
    """The SizeTree of a tree built on `work` (the map, or the map with the library default as one more
    method), with its provenance; sizes outside the measured range handed back to the library when asked."""
    methods = list(work.methods)
    if options.outside == "default":
        from .library_default import hand_back_outside, with_default
        methods, default = with_default(methods)
        tree = hand_back_outside(tree, Axis.of(dmap.comm_sizes, options.between, True, top=COMM_TOP),
                                 Axis.of(dmap.msg_sizes, options.between, True), default, options.outside_sides)
    info = {"quadsel_version": __version__,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "sources": list(dmap.sources),
            "filled_points": int(dmap.filled.sum())}
    if dmap.library:
        info["library"] = dmap.library        # the C then returns that library's own algorithm ids
    if size_info:
        info["size"] = size_info
    info.update(provenance or {})
    return SizeTree(dmap.collective, dmap.comm_sizes, dmap.msg_sizes, methods, tree, options, info, paper)
