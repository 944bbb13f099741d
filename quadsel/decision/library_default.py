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
  send those cells to the default.

The library default is the method DEFAULT_METHOD ("default"): Open MPI's algorithm 0 (coll/tuned's fixed
decision), MPICH's `auto` (its own selection), and 0 -- "no decision" -- from the generated C.
"""

import numpy as np

from ..errors import OptionError
from .decision_map import DEFAULT_METHOD
from .quadtree import LEAF, Quadtree

PREFER_DEFAULT = 1e-3   # %: the default's penalty is this much lower for the builders, so that it wins every tie


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


def hand_back_outside(tree, comm_axis, msg_axis, default_index):
    """The tree over the axes with outside cells (Axis.of(..., outside=True)): the inner tree inside the measured
    range, the default outside it. `comm_axis` / `msg_axis` are the outside axes; the inner tree's cells are
    theirs shifted by the below cell (when there is one). An axis whose largest measured size is its top (a
    communicator of 2^31 - 1 ranks, a message of 2^63 - 1 bytes) has no above cell and no cut for it."""
    a, c = int(comm_axis.below), int(msg_axis.below)     # 1 when a below cell exists
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
    for cut_c, cut_m, inner_slot in ((a if a else -1, c if c else -1, -1),           # node 1: the below cells
                                     (b if above_c else -1, d if above_m else -1, 0)):  # node 2: the above ones
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
