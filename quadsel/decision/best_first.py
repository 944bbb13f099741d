"""Quadtrees with cuts at measured sizes grown to a leaf budget (`max_leaves`), best split first.

The split that removes the most penalty per added leaf goes first, each split scored with a look-ahead of one
level (its children's best splits, decision/lookahead.py), so that a plateau -- a checkerboard, a lone
column, where no single split helps -- does not stop the growth. A split is scored within the budget left:
its look-ahead must fit too. `grow_best_first` grows the tree of one budget (the tree `quadsel build`
deploys); `budget_trees` gives the very same tree for each of several budgets from one growth (the held-out
folds of decision/size.py score every budget).

Why one growth serves every budget: while at least `roomy` leaves of a budget are left (lookahead.LookAhead),
a split's score is the same as with no budget at all (lookahead.gain_per_leaf). The growth of budget B
therefore takes the same steps as the growth without a budget until it comes within `roomy` leaves of B;
`budget_trees` grows without a budget and, at that point for each B, finishes a copy of its state within B.
"""

import heapq

from .lookahead import LookAhead, gain_per_leaf
from .quadtree import TreeBuilder
from .split import EPS, BlockCosts, _children


class _Growth:
    """The state of one best-first growth: nodes (block, method, depth), the splits made, the leaf count and
    the heap of scored candidates (-gain per added leaf, node, (gain, comm cut, msg cut, added leaves));
    ties go to the lower node number, which only depends on the order of the splits."""

    def __init__(self, ahead, leaf_rule, max_depth):
        self.ahead, self.leaf_rule, self.max_depth = ahead, leaf_rule, max_depth
        rows, cols = ahead.costs.sums.shape[0] - 1, ahead.costs.sums.shape[1] - 1
        root = (0, rows, 0, cols)
        self.blocks, self.method, self.depth = [root], [ahead.costs.method(root, leaf_rule)], [0]
        self.splits, self.heap, self.leaves = [], [], 1

    def copy(self):
        other = _Growth.__new__(_Growth)
        other.__dict__.update(self.__dict__)
        for name in ("blocks", "method", "depth", "splits", "heap"):
            setattr(other, name, list(getattr(self, name)))
        return other

    def push(self, node, budget_left=None):
        """Queue a node to be scored within `budget_left` (None: no budget) when it comes to the top: until
        then under LookAhead.bound, which no score of it can beat (`_resolve`)."""
        block = self.blocks[node]
        if (self.max_depth is not None and self.depth[node] >= self.max_depth) or \
                (block[1] - block[0] == 1 and block[3] - block[2] == 1):
            return
        if self.ahead.cost(block)[1] > EPS:
            heapq.heappush(self.heap, (-self.ahead.bound(block), node, None, budget_left))

    def _resolve(self):
        """Score the top of the heap until a scored split is there (or nothing is): a node's bound is at least
        every score of it, so the scored splits come off the heap in the order they would if every node had
        been scored when queued -- the same tree, most of the nodes never split never scored."""
        while self.heap and self.heap[0][2] is None:
            _, node, _, budget_left = heapq.heappop(self.heap)
            found = gain_per_leaf(self.ahead.costs, self.ahead, self.blocks[node], budget_left)
            if found is not None and found[0] > EPS:
                heapq.heappush(self.heap, (-found[0], node, found, budget_left))
        return self.heap

    def split(self, node, comm_cut, msg_cut, added):
        kids = []
        for child in _children(self.blocks[node], comm_cut, msg_cut):
            kids.append(len(self.blocks))
            self.blocks.append(child)
            self.ahead.within[child] = self.blocks[node]
            self.method.append(self.ahead.costs.method(child, self.leaf_rule))
            self.depth.append(self.depth[node] + 1)
        self.splits.append((node, comm_cut, msg_cut, kids))
        self.leaves += added
        return kids

    def grow_within(self, max_leaves):
        """Grow to at most `max_leaves` leaves, every split scored within the budget left."""
        while self._resolve() and self.leaves < max_leaves:
            _, node, (gain, comm_cut, msg_cut, added), _ = heapq.heappop(self.heap)
            if self.leaves + added > max_leaves:      # the budget shrank since it was scored: score it again
                self.push(node, max_leaves - self.leaves)
                continue
            for kid in self.split(node, comm_cut, msg_cut, added):
                self.push(kid, max_leaves - self.leaves)
        return self

    def grow_while_roomy(self, max_leaves):
        """Grow without a budget as long as the growth within `max_leaves` would take the same steps: each
        split leaves at least `roomy` leaves of it (LookAhead)."""
        while self._resolve() and self.leaves + self.heap[0][2][3] <= max_leaves - self.ahead.roomy:
            _, node, (gain, comm_cut, msg_cut, added), _ = heapq.heappop(self.heap)
            for kid in self.split(node, comm_cut, msg_cut, added):
                self.push(kid)
        return self

    def tree(self):
        builder = TreeBuilder()
        for method, depth in zip(self.method, self.depth):
            builder.node(method, depth)
        for node, comm_cut, msg_cut, kids in self.splits:
            builder.split(node, comm_cut, msg_cut, kids)
        return builder.tree()


def _ahead(grid, ahead):
    return ahead if ahead is not None else LookAhead(BlockCosts(grid))


def grow_best_first(grid, max_leaves, leaf_rule="penalty", max_depth=None, ahead=None):
    """Best-first growth to at most `max_leaves` leaves (fewer when no split removes any penalty), every split
    scored within the budget left (the tree `quadsel build --max-leaves` deploys). `ahead`: a LookAhead of the
    same grid to share."""
    growth = _Growth(_ahead(grid, ahead), leaf_rule, max_depth)
    growth.push(0, max_leaves - 1)
    return growth.grow_within(max_leaves).tree()


def budget_trees(grid, budgets, leaf_rule="penalty", max_depth=None, ahead=None):
    """The tree `grow_best_first` grows for each budget of `budgets` (increasing, any iterable: each is read
    when its tree is asked for), one after the other (a generator), from one growth without a budget (the
    module's docstring says why they are the same)."""
    ahead = _ahead(grid, ahead)
    free = _Growth(ahead, leaf_rule, max_depth)
    free.push(0)
    last = 0
    for budget in budgets:
        if budget < last:
            raise ValueError("budget_trees needs the budgets in increasing order")
        last = budget
        if budget - 1 < ahead.roomy:         # the root itself is scored within the budget
            yield grow_best_first(grid, budget, leaf_rule, max_depth, ahead)
            continue
        yield free.grow_while_roomy(budget).copy().grow_within(budget).tree()
