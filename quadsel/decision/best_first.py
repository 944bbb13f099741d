"""Quadtrees with cuts at measured sizes grown to a leaf budget (`max_leaves`), best split first.

The split that removes the most penalty per added leaf goes first, each split scored with a look-ahead of one
level (its children's best splits, decision/lookahead.py), so that a plateau -- a checkerboard, a lone
column, where no single split helps -- does not stop the growth. Without a budget in its scores, one growth
(`Growth`) gives the tree of every budget: its splits in their order, each kept when it fits (the folds of
decision/size.py use that); the deployed tree (`grow_best_first`) holds the look-ahead to the budget left.
Both share one cache of the blocks' best single splits.
"""

import heapq

from .lookahead import LookAhead, gain_per_leaf
from .quadtree import TreeBuilder
from .split import EPS, BlockCosts, _children


def _single(block):
    return block[1] - block[0] == 1 and block[3] - block[2] == 1


class Growth:
    """One best-first growth and the log of its splits, from which the tree of any leaf budget is read.

    The split that removes the most penalty per added leaf goes first (ties: the block nearest the top-left
    corner, so that the order never depends on node numbering); its score is the better of its own gain per
    added leaf and its gain together with its children's best single splits (lookahead.gain_per_leaf).
    Scores do not depend on the budget: the tree of a budget B is the log's splits in their order, each kept
    when its parent is in the tree and it fits in B -- exactly what growing with the budget B would give.
    `max_leaves` stops the growth once that many leaves are reached (the log then serves every budget up to
    it). `ahead`: a LookAhead of the same grid to share.
    """

    def __init__(self, grid, leaf_rule="penalty", max_depth=None, max_leaves=None, ahead=None):
        self.costs = costs = ahead.costs if ahead is not None else BlockCosts(grid)
        self.ahead = ahead = ahead if ahead is not None else LookAhead(costs)
        rows, cols = grid.shape
        root = (0, rows, 0, cols)
        self.method, self.depth, self.splits = [costs.leaf(root, leaf_rule)[0]], [0], []
        blocks, heap, leaves = [root], [], 1

        def push(node):
            block = blocks[node]
            if (max_depth is not None and self.depth[node] >= max_depth) or _single(block):
                return
            found = gain_per_leaf(costs, ahead, block)
            if found is not None and found[0] > EPS:
                two = ahead.two_way(block)            # what a budget with one leaf left takes instead
                alt = None if two[0] <= EPS else \
                    (two[1], two[2], [costs.leaf(child, leaf_rule)[0] for child in _children(block, two[1], two[2])])
                heapq.heappush(heap, (-found[0], block, node, found + (alt,)))

        push(0)
        while heap and (max_leaves is None or leaves < max_leaves):
            _, block, node, (gain, comm_cut, msg_cut, added, alt) = heapq.heappop(heap)
            kids = None
            if max_leaves is None or leaves + added <= max_leaves:
                kids = []
                for child in _children(block, comm_cut, msg_cut):
                    kids.append(len(blocks))
                    blocks.append(child)
                    self.method.append(costs.leaf(child, leaf_rule)[0])
                    self.depth.append(self.depth[node] + 1)
                leaves += added
            elif alt is not None:           # one leaf left: the best two-way split, its halves stay leaves
                leaves += 1
            self.splits.append((node, comm_cut, msg_cut, kids, alt))
            for kid in kids or ():
                push(kid)

    def tree(self, max_leaves=None):
        """The tree of a leaf budget (None: the whole growth; at most the growth's own `max_leaves`)."""
        builder = TreeBuilder()
        ids = {0: builder.node(self.method[0], 0)}
        leaves = 1
        for node, comm_cut, msg_cut, kids, alt in self.splits:
            if node not in ids:
                continue
            if kids is not None and (max_leaves is None or leaves + len(kids) - 1 <= max_leaves):
                for kid in kids:
                    ids[kid] = builder.node(self.method[kid], self.depth[kid])
                builder.split(ids[node], comm_cut, msg_cut, [ids[kid] for kid in kids])
                leaves += len(kids) - 1
            elif alt is not None and (max_leaves is None or leaves < max_leaves):
                halves = [builder.node(m, self.depth[node] + 1) for m in alt[2]]
                builder.split(ids[node], alt[0], alt[1], halves)
                leaves += 1
        return builder.tree()


def grow_best_first(grid, max_leaves, leaf_rule="penalty", max_depth=None, ahead=None):
    """Best-first growth to at most `max_leaves` leaves (fewer when no split removes any penalty), every split
    scored within the budget left (the tree `quadsel build` deploys; the folds read theirs from one Growth).
    `ahead`: a LookAhead of the same grid to share."""
    costs = ahead.costs if ahead is not None else BlockCosts(grid)
    ahead = ahead if ahead is not None else LookAhead(costs)
    builder = TreeBuilder()
    rows, cols = grid.shape
    root = (0, rows, 0, cols)
    blocks = {builder.node(costs.leaf(root, leaf_rule)[0], 0): root}
    depth = {0: 0}
    leaves, heap = 1, []

    def push(node):
        block = blocks[node]
        if (max_depth is not None and depth[node] >= max_depth) or _single(block):
            return
        found = gain_per_leaf(costs, ahead, block, max_leaves - leaves)
        if found is not None and found[0] > EPS:
            heapq.heappush(heap, (-found[0], node, found))

    push(0)
    while heap and leaves < max_leaves:
        _, node, (gain, comm_cut, msg_cut, added) = heapq.heappop(heap)
        if leaves + added > max_leaves:       # the budget shrank since it was scored: score it again
            push(node)
            continue
        kids = []
        for child in _children(blocks[node], comm_cut, msg_cut):
            kid = builder.node(costs.leaf(child, leaf_rule)[0], depth[node] + 1)
            blocks[kid], depth[kid] = child, depth[node] + 1
            kids.append(kid)
        builder.split(node, comm_cut, msg_cut, kids)
        leaves += added
        for kid in kids:
            push(kid)
    return builder.tree()
