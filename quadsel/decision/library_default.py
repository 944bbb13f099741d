"""Where the library decides: regions the tree hands back to the MPI library's own default.

Two rules, both written into the tree itself so that the query rule -- and with it every target, which
all follow the query rule -- hands those sizes back (docs/methodology.md, "Handing back to the library"):

- keep the default where it is not beaten (`with_default_column`): when the measurements hold the library
  default, it is one more method the builders may choose, winning every tie; with ties within the noise
  (`--tolerance ci`, the default build) a region whose method does not beat the default beyond the noise
  gets the default;
- outside the measured range (`hand_back_outside`): communicator and message sizes below the smallest or
  above the largest measured one are the library's, unless the user asks to extrapolate. The axes then get
  an outside cell at each end (decision/grid.py, Axis.of(..., outside=True)) and the tree two nodes that
  send those cells to the default. With outside="auto" each side (SIDES) is decided by evidence: the held-out
  folds' points beyond their training range, scored handed back (the default's measured time) and extrapolated
  (the fold tree's answer); a side is not cut off when the extrapolation is cheaper there, its own few points weighed
  together with the map's evidence on every held-out size (`best_hand_back`, PRIOR_POINTS), and above the largest
  communicator size only when it also wins at most of those points (MAJORITY_SIDES).

The measured default is a method of every build that can name it (`auto_keep`): issue 39.

The library default is the method DEFAULT_METHOD ("default"): Open MPI's algorithm 0 (coll/tuned's fixed
decision), MPICH's `auto` (its own selection), and 0 -- "no decision" -- from the generated C.
"""

import numpy as np

from ..errors import OptionError
from .decision_map import DEFAULT_METHOD
from .options import SIDES
from .quadtree import LEAF, Quadtree

from .grid import PREFER_DEFAULT  # noqa: F401 (the default wins every tie: decision/grid.py)


def auto_keep(dmap):
    """keep_default="auto": the measured library default is one more method of the build wherever it was measured
    -- for every builder (issue 39: a tree that cannot choose it is scored against a best it cannot pick) -- unless
    the library cannot name it (Intel MPI: I_MPI_ADJUST preset 0 is its basic logic, not its default)."""
    from ..libraries import get as get_library
    return dmap.default_cost is not None and get_library(dmap.library).names_its_default


def with_default_column(dmap):
    """The decision map with the library default as one more method (DEFAULT_METHOD, last), for the builders.

    Its time is the measured default's and so is its standard error, so with `--tolerance ci` a method that is
    not faster than the default beyond the noise ties with it, and build_grid breaks every tie for the default
    (PREFER_DEFAULT). Where the default was not measured it is an unmeasured method (never chosen there).
    """
    from dataclasses import replace
    from .decision_map import interpolate_message_axis
    if dmap.default_cost is None or DEFAULT_METHOD in dmap.methods:
        return dmap
    cost = np.concatenate([dmap.cost, dmap.default_cost[:, :, None]], axis=2)
    se = None
    if dmap.cost_se is not None or dmap.default_se is not None:
        method_se = dmap.cost_se if dmap.cost_se is not None else np.full(dmap.cost.shape, np.nan)
        default_se = dmap.default_se if dmap.default_se is not None else np.full(dmap.shape, np.nan)
        se = np.concatenate([method_se, default_se[:, :, None]], axis=2)
    cost_filled = interpolate_message_axis(cost, dmap.msg_sizes)
    ranking = np.where(dmap.filled[:, :, None], cost_filled, cost)
    best = np.argmin(np.where(np.isnan(ranking), np.inf, ranking), axis=2)
    return replace(dmap, methods=list(dmap.methods) + [DEFAULT_METHOD], cost=cost, cost_filled=cost_filled,
                   best=best, cost_se=se)


def with_default(methods):
    """(the method table with DEFAULT_METHOD, its index)."""
    methods = list(methods)
    if DEFAULT_METHOD not in methods:
        methods.append(DEFAULT_METHOD)
    return methods, methods.index(DEFAULT_METHOD)


def inner_budget(max_leaves, frame):
    """The leaf budget of the tree inside the measured range when `frame` leaves hand the sizes outside it back
    (None: no budget); a budget that cannot hold them and one leaf more is refused."""
    if max_leaves is None or not frame:
        return max_leaves
    if max_leaves < frame + 1:
        raise OptionError(f"a budget of {max_leaves} leaves cannot hold the {frame} leaves that hand the sizes outside "
                          f"the measured range back to the library and one leaf inside it: give --max-leaves "
                          f"{frame + 1} or more, or --extrapolate")
    return max_leaves - frame


SIDE_WORDS = {"comm_below": "below the smallest communicator size", "comm_above": "above the largest communicator size",
              "msg_below": "below the smallest message size", "msg_above": "above the largest message size"}


REACH_WORDS = {"comm_below": "below {} ranks", "comm_above": "from {} ranks on",
               "msg_below": "below {} bytes", "msg_above": "from {} bytes on"}


def sides_words(sides, reach=None):
    """Where a tree that hands back only `sides` hands back, for the targets' comments: "above the largest
    communicator size and below the smallest message size"; a side of `reach` (BuildOptions.outside_reach)
    from its bound: "from 2097152 bytes on"."""
    reach = reach or {}
    return " and ".join(REACH_WORDS[side].format(reach[side]) if side in reach else SIDE_WORDS[side]
                        for side in SIDES if side in sides)


def handed_words(fn):
    """None when the size tree `fn` hands back every side of its measured range at that range (or none); else
    where it hands back (sides_words): some sides only, or some up to a bound."""
    options = fn.options
    if options.outside != "default" or not (options.outside_sides or options.outside_reach):
        return None
    return sides_words(options.outside_sides or present_sides(fn.comm_axis, fn.msg_axis), options.outside_reach)


def present_sides(comm_axis, msg_axis):
    """The SIDES that have an outside cell on these (outside) axes."""
    return tuple(side for side, cell in zip(SIDES, (comm_axis.below, comm_axis.above, msg_axis.below, msg_axis.above))
                 if cell)


def fold_points(dmap, fn, test, cube):
    """(penalty of fn's answer, penalty of the library default, (4, n) bool: beyond fn's measured range on each of
    SIDES) at the held-out points `test` of a fold tree `fn` (built on the fold's training map, extrapolating;
    `cube`: size.scoring_cube of dmap, the default last)."""
    from .decision_map import DEFAULT_METHOD
    rows, cols = np.nonzero(test)
    index = {m: k for k, m in enumerate(dmap.methods)}
    index[DEFAULT_METHOD] = len(dmap.methods)
    to_full = np.array([index[m] for m in fn.methods], dtype=np.int64)
    comm, msg = dmap.comm_sizes[rows], dmap.msg_sizes[cols]
    tree = cube[rows, cols, to_full[fn.choices(comm, msg)]]
    default = cube[rows, cols, len(dmap.methods)]
    beyond = np.stack([comm < fn.comm_sizes[0], comm > fn.comm_sizes[-1], msg < fn.msg_sizes[0], msg > fn.msg_sizes[-1]])
    known = ~np.isnan(tree) & ~np.isnan(default)
    return tree[known], default[known], beyond[:, known]


# Sides where extrapolating must beat the default at most of the folds' points there, not only on their mean: above
# the largest communicator size the machine may change (a node or switch boundary) where no fold can look, so the
# library's own choice is kept unless the folds show the tree better at a majority of their points (issue 39).
MAJORITY_SIDES = ("comm_above",)
MAJORITY = 0.5          # "most": more than this share of those points (0.4-0.6 measured alike: benchmarks/selection_outside.py)


def majority_fails(records, side):
    """True when the folds' extrapolated answers beat the library default at no more than MAJORITY of their points
    beyond `side` (ties count against: the tree then only matches what the library already does there). The count is
    weighed with the map's own evidence as the gain is (best_hand_back): PRIOR_POINTS pseudo-points at the share of
    every held-out point of the folds where the tree won, so a side no fold reaches follows the map (a sweep of one
    communicator size: LUMI allreduce with every other size held out kept handing 32 ranks back on no point at all,
    4.71 against 1.80 % extrapolated), and a side's own points win once they are many (ORFEO bcast's 256 ranks)."""
    i = SIDES.index(side)
    wins = sum(int(np.count_nonzero(tree[beyond[i]] < default[beyond[i]] - 1e-9)) for tree, default, beyond in records)
    points = sum(int(np.count_nonzero(beyond[i])) for _, _, beyond in records)
    everywhere = sum(int(tree.size) for tree, _, _ in records)
    if everywhere:
        rate = sum(int(np.count_nonzero(tree < default - 1e-9)) for tree, default, _ in records) / everywhere
        wins, points = wins + PRIOR_POINTS * rate, points + PRIOR_POINTS
    return wins <= MAJORITY * points + 1e-9


# The map's own evidence on unseen sizes weighs as this many points of a side's: a side is extrapolated when the folds'
# gain of the tree over the library default beyond it, shrunk towards the gain over every held-out point of the map,
# is positive. One fold reaches a side with one or two points on a small grid, whose verdict alone was noise; the
# pooled gain is what held out (benchmarks/selection_outside.py, nested leave one data set out: issue 39, select4).
PRIOR_POINTS = 32


def side_gain(records, side=None):
    """(sum, count) of the library default's penalty less the tree's over the folds' points beyond `side` (None: every
    held-out point of the folds): positive where the fold trees' answers were cheaper."""
    i = None if side is None else SIDES.index(side)
    gains = [(default - tree) if i is None else (default - tree)[beyond[i]] for tree, default, beyond in records]
    return float(sum(g.sum() for g in gains)), int(sum(g.size for g in gains))


def best_hand_back(records, sides):
    """(the sides to hand back, [mean penalty of each fold]) from the folds' `records` (fold_points of each fold).

    A side is extrapolated when its shrunk gain is positive: the fold trees' gain over the library default at the
    points beyond it, with PRIOR_POINTS pseudo-points at the mean gain over every held-out point of the folds (the
    map's own evidence on sizes it did not see); else, and on ties, it is handed back. A side no fold reaches is
    decided by the map's evidence alone; without any point every side is handed back. A side of MAJORITY_SIDES is
    handed back unless the extrapolated answer also beats the default at most of the folds' points beyond it
    (majority_fails). The per-fold figures are those of the folds scored with the chosen sides."""
    total, count = side_gain(records)
    prior = total / count if count else 0.0
    handed = []
    for side in sides:
        own, n = side_gain(records, side)
        weight = n + (PRIOR_POINTS if count else 0)
        gain = (own + PRIOR_POINTS * prior) / weight if weight and count else 0.0
        if gain <= 1e-9 or (side in MAJORITY_SIDES and majority_fails(records, side)):
            handed.append(side)
    at = [SIDES.index(side) for side in handed]
    per = [float(np.where(beyond[at].any(axis=0), default, tree).mean()) if tree.size else 0.0
           for tree, default, beyond in records]
    return tuple(handed), per


def outside_rule(dmap, split, between, outside):
    """(outside, sides the folds decide or None): outside="auto" decides each side of the measured range by the
    held-out folds (best_hand_back) where the library default was measured and the tree cuts at measured sizes;
    elsewhere it hands every side back, as "default" does."""
    if outside != "auto":
        return outside, None
    if dmap.default_cost is None or split == "midpoint":
        return "default", None
    return "default", sides_present(dmap, between)


def settled(outside, sides):
    """The outside rule once the sides handed back are known: none handed back is a tree that extrapolates."""
    return "extrapolate" if sides is not None and not sides else outside


def sides_option(dmap, between, outside, sides):
    """BuildOptions.outside_sides: None when every side present is handed back (or none is: extrapolate)."""
    if outside != "default" or sides is None:
        return None
    present = sides_present(dmap, between)
    return None if set(present) <= set(sides) else [side for side in present if side in sides]


def outside_record(dmap, between, sides, reach=None):
    """The tree file's provenance.outside of a build whose folds decided the sides (`reach`: builder._reach's
    {bounds, two_steps}: the sides extrapolated up to a bound, decision/reach.py)."""
    bounds = (reach or {}).get("bounds", {})
    out = {"rule": "auto: each side handed back or extrapolated, by the held-out folds' points beyond their range",
           "handed_back": [side for side in sides if side not in bounds],
           "extrapolated": [side for side in sides_present(dmap, between) if side not in sides]}
    if reach:
        out.update(bounded=dict(bounds), two_steps=reach["two_steps"],
                   reach_rule="an extrapolated side is tried two steps out (a tree without the axis' two end sizes, "
                              "scored at the outer one); where it loses to the library default it is extrapolated "
                              "one step and handed back beyond")
    return out


def sides_present(dmap, between):
    """The SIDES with an outside cell on `dmap`'s axes under the `between` rule."""
    from .grid import COMM_TOP, Axis
    return present_sides(Axis.of(dmap.comm_sizes, between, True, top=COMM_TOP), Axis.of(dmap.msg_sizes, between, True))


def hand_back_outside(tree, comm_axis, msg_axis, default_index, sides=None):
    """The tree over the axes with outside cells (Axis.of(..., outside=True)): the inner tree inside the measured
    range, the default outside it. `comm_axis` / `msg_axis` are the outside axes; the inner tree's cells are
    theirs shifted by the below cell (when there is one). An axis whose largest measured size is its top (a
    communicator of 2^31 - 1 ranks, a message of 2^63 - 1 bytes) has no above cell and no cut for it. `sides`:
    the SIDES handed back (None: all); an outside cell of another side is not cut off, so the inner tree answers
    it as its nearest measured cell (extrapolated)."""
    keep = (lambda side: True) if sides is None else (lambda side: side in sides)  # noqa: E731
    a, c = int(comm_axis.below), int(msg_axis.below)     # 1 when a below cell exists (the inner tree's offset)
    above_c, above_m = int(comm_axis.above), int(msg_axis.above)
    b, d = len(comm_axis) - 1, len(msg_axis) - 1         # the above cell (when there is one)
    rows = []                                            # [children, comm_cut, msg_cut, method, depth]

    def add(cut_c, cut_m, depth, method=default_index):
        rows.append([[LEAF] * 4, cut_c, cut_m, method, depth])
        return len(rows) - 1

    def outside_node(cut_c, cut_m, depth):
        """A node cutting at (cut_c, cut_m) (-1: no cut on that axis): the default in every child but `inner`."""
        node = add(cut_c, cut_m, depth)
        slots = (0, 1, 2, 3) if cut_c >= 0 and cut_m >= 0 else (0, 2) if cut_c >= 0 else (0, 1)
        return node, slots

    depth, parent = 0, None                              # parent: (node, slot) the next level hangs from
    for cut_c, cut_m, inner_slot in ((a if a and keep("comm_below") else -1, c if c and keep("msg_below") else -1, -1),
                                     (b if above_c and keep("comm_above") else -1,
                                      d if above_m and keep("msg_above") else -1, 0)):
        if cut_c < 0 and cut_m < 0:
            continue
        node, slots = outside_node(cut_c, cut_m, depth)
        inner_slot = slots[inner_slot]
        for slot in slots:
            if slot != inner_slot:
                rows[node][0][slot] = add(-1, -1, depth + 1)
        if parent is not None:
            rows[parent[0]][0][parent[1]] = node
        parent, depth = (node, inner_slot), depth + 1
    offset = len(rows)
    if parent is not None:
        rows[parent[0]][0][parent[1]] = offset
    kids = np.where(tree.children >= 0, tree.children + offset, LEAF)
    table = np.array([r[0] for r in rows], dtype=np.int64).reshape(-1, 4)
    out = Quadtree(
        np.concatenate([table, kids]),
        np.concatenate([[r[1] for r in rows], np.where(tree.comm_cut >= 0, tree.comm_cut + a, -1)]).astype(np.int64),
        np.concatenate([[r[2] for r in rows], np.where(tree.msg_cut >= 0, tree.msg_cut + c, -1)]).astype(np.int64),
        np.concatenate([[r[3] for r in rows], tree.method]).astype(np.int64),
        np.concatenate([[r[4] for r in rows], tree.depth + depth]).astype(np.int64))
    return out
