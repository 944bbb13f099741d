"""The if/else-if's tests in the order that takes the fewest tests on random queries (`codegen --order expected`).

The quadtree's own order (c_branches.merged_ir) tests its cuts root first. Cuts at measured sizes make it
deep where the measurements are dense and shallow where few queries fall, so a random query walks many
tests, and branches that go either way about as often: on ORFEO bcast's exact tree a random query walked
10.7 tests (docs/benchmarks.md). Here the same answers are re-derived from the tree's
regions: the grid table's bands x columns (c_grid.py), cut anywhere between them by a dynamic program
over every sub-rectangle that minimises the expected number of tests a query walks,
    cost(block) = 0 if one method covers it, else weight(block) + min over cuts of cost(part 1) + cost(part 2),
where weight is the share of queries in the block under a prior: half the queries uniform over the measured
range of each size (the paper's Table 3 protocol), half log-uniform (every power of two equally likely).
Sizes outside the measured range weigh nothing; a tiny cost per test breaks ties towards fewer tests.

The program visits every sub-rectangle: about bands x columns x (bands + columns) / 2 vector operations.
Past MAX_WORK (about a second) the quadtree's order is kept at the top, and every block of cells its tests
reach that is within MAX_WORK is searched on its own (until TOTAL_WORK is spent); the quadtree's order is also
kept wherever it expects no more tests than the search's.
"""

import math

import numpy as np

from .c_grid import merged_cells

COMM, MSG = 0, 1        # the axes of c_branches' DecisionIR tests
MAX_WORK = 300_000      # bands * columns * (bands + columns): about a second of numpy on the 2-core test VM
TOTAL_WORK = 1_000_000  # the same, summed over the blocks searched in a larger grid
TIE = 1e-7              # cost of one test beyond its weight: among equal orders, the one with fewer tests


def cell_weights(fn, axis):
    """Share of random queries in each cell of one axis: half uniform, half log-uniform over its measured range."""
    grid_axis, sizes = (fn.comm_axis, fn.comm_sizes) if axis == COMM else (fn.msg_axis, fn.msg_sizes)
    first, end = int(sizes[0]), int(sizes[-1]) + 1                # the measured range, [first, end): exact ints
    lo = [int(v) for v in grid_axis.lo[1:]]                        # (floats would lose a range at 2^63)
    starts = [None] + lo
    ends = lo + [None]
    log_first, log_end = math.log(max(first, 1)), math.log(max(end, 1))
    out = []
    for a, b in zip(starts, ends):
        a = first if a is None else max(a, first)
        b = end if b is None else min(b, end)
        uniform = max(b - a, 0) / (end - first)
        if log_end > log_first:
            logs = max(math.log(max(b, 1)) - math.log(max(a, 1)), 0.0) / (log_end - log_first) if b > a else 0.0
        else:
            logs = uniform
        out.append(0.5 * uniform + 0.5 * logs)
    return np.asarray(out)


def query_shares(fn, comm_w=None, msg_w=None):
    """The cumulative shares of random queries along both axes of fn's grid (cell_weights, or the weights a caller
    has already), as expected_tests reads them: computed once by a caller that compares many orders of one function."""
    comm_w = cell_weights(fn, COMM) if comm_w is None else comm_w
    msg_w = cell_weights(fn, MSG) if msg_w is None else msg_w
    return np.concatenate([[0.0], np.cumsum(comm_w)]), np.concatenate([[0.0], np.cumsum(msg_w)])


def expected_tests(fn, ir, root, box=None, shares=None):
    """Tests a random query walks in the code printed from (ir, root), under cell_weights' prior; `box` ((c0, c1),
    (m0, m1)) counts only queries in those cells (the code's own block when it is part of a larger function);
    `shares`: query_shares(fn), when the caller has it."""
    weights = query_shares(fn) if shares is None else shares
    total, todo = 0.0, [(root, *(box or ((0, len(weights[0]) - 1), (0, len(weights[1]) - 1))))]
    while todo:
        node, *box = todo.pop()
        key = ir.nodes[node]
        if key[0] == "leaf":
            continue
        axis, cell, lo, hi = key
        (c0, c1), (m0, m1) = box
        total += (weights[0][c1] - weights[0][c0]) * (weights[1][m1] - weights[1][m0])
        below, above = _split(box, axis, cell)
        todo += [(lo, *below), (hi, *above)]
    return total


def _split(box, axis, cell):
    """The two blocks of cells ((c0, c1), (m0, m1)) a test `size(axis) < lo[cell]` sends a block's queries to."""
    a, b = box[axis]
    sides = (a, max(a, min(cell, b))), (min(max(cell, a), b), b)
    return [tuple(side if k == axis else box[k] for k in (0, 1)) for side in sides]


def _work(block):
    """The program's work on a block of cells: bands x columns x (bands + columns) once equal neighbours merge
    (merged_cells' counts: a column boundary is one where some row changes, and equal rows change alike)."""
    if block.size == 0:
        return 0
    bands = 1 + int((block[1:] != block[:-1]).any(axis=1).sum())
    columns = 1 + int((block[:, 1:] != block[:, :-1]).any(axis=0).sum())
    return bands * columns * (bands + columns)


def search_block(ir, block, comm_w, msg_w, corner=(0, 0)):
    """Root, in `ir`, of the fewest expected tests over one block of cells (method indices, its cells' weights
    comm_w and msg_w, its first cell at `corner` of the grid).

    The program's table is cost[h, w, r0, c0], the least expected tests of the h bands x w columns at (r0, c0);
    every cut of every block of one shape is scored at once: the near parts are a slice of the table, the far
    parts a strided view of the same memory (an ndarray over its buffer, no copy). Only the least is kept; the
    cut that gives it is found again for the blocks the emitted code reaches (`cut`)."""
    bands, columns, cells = merged_cells(block)
    n_rows, n_cols = cells.shape
    row_w = np.add.reduceat(comm_w, bands)
    col_w = np.add.reduceat(msg_w, columns)
    row_sum, col_sum = np.concatenate([[0.0], np.cumsum(row_w)]), np.concatenate([[0.0], np.cumsum(col_w)])
    cost = np.full((n_rows + 1, n_cols + 1, n_rows, n_cols), np.inf)
    s_h, s_w, s_r, s_c = cost.strides
    method = {}                 # (h, w) -> the method covering each block of that shape (by its corner), or -1
    for h in range(1, n_rows + 1):
        rows = n_rows - h + 1
        for w in range(1, n_cols + 1):
            cols = n_cols - w + 1
            if h == 1 and w == 1:
                same = cells.astype(np.int64)
            elif h == 1:
                left = method[1, w - 1][:, :cols]
                same = np.where(left == cells[:, w - 1:w - 1 + cols], left, -1)
            else:
                top, last = method[h - 1, w][:rows], method[1, w][h - 1:h - 1 + rows]
                same = np.where((top == last) & (top >= 0), top, -1)
            best = None
            if h > 1:       # a communicator cut k bands in: cost[k, w] at (r0, c0) + cost[h - k, w] at (r0 + k, c0)
                far = np.ndarray((h - 1, rows, cols), cost.dtype, cost, (h - 1) * s_h + w * s_w + s_r,
                                 (s_r - s_h, s_r, s_c))
                best = (cost[1:h, w, :rows, :cols] + far).min(axis=0)
            if w > 1:       # a message cut k columns in: cost[h, k] at (r0, c0) + cost[h, w - k] at (r0, c0 + k)
                far = np.ndarray((w - 1, rows, cols), cost.dtype, cost, h * s_h + (w - 1) * s_w + s_c,
                                 (s_c - s_w, s_r, s_c))
                least = (cost[h, 1:w, :rows, :cols] + far).min(axis=0)
                best = least if best is None else np.minimum(best, least)
            if best is None:                    # a single cell: one method covers it
                cost[h, w, :rows, :cols] = 0.0
            else:
                weight = np.outer(row_sum[h:h + rows] - row_sum[:rows], col_sum[w:w + cols] - col_sum[:cols])
                cost[h, w, :rows, :cols] = np.where(same >= 0, 0.0, weight + TIE + best)
            method[h, w] = same

    def cut(r0, h, c0, w):
        """The block's first least cut, as the table's minimum was taken (the same sums): k > 0 a communicator cut
        k bands in, -k a message cut k columns in; communicator cuts first, nearer first."""
        comm = [cost[k, w, r0, c0] + cost[h - k, w, r0 + k, c0] for k in range(1, h)]
        msg = [cost[h, k, r0, c0] + cost[h, w - k, r0, c0 + k] for k in range(1, w)]
        if comm and not (msg and min(msg) < min(comm)):
            return comm.index(min(comm)) + 1
        return -(msg.index(min(msg)) + 1)

    def build(r0, h, c0, w):
        if method[h, w][r0, c0] >= 0:
            return ir.leaf(method[h, w][r0, c0])
        k = cut(r0, h, c0, w)
        if k > 0:
            return ir.test(COMM, corner[0] + bands[r0 + k], build(r0, k, c0, w), build(r0 + k, h - k, c0, w))
        return ir.test(MSG, corner[1] + columns[c0 - k], build(r0, h, c0, -k), build(r0, h, c0 - k, w + k))
    return build(0, n_rows, 0, n_cols)


def expected_ir(fn, ir, tree_root):
    """Root, in `ir` (c_branches.DecisionIR), of the function with the fewest expected tests the search reaches:
    the whole grid searched when it is within MAX_WORK; else the tree's order (tree_root) kept at its top and,
    in every block of cells its tests reach that is within MAX_WORK, the block's own best order where it
    expects fewer tests than the tree's there (blocks in the tree's order until TOTAL_WORK is spent)."""
    painted = fn.cell_methods()
    comm_w, msg_w = cell_weights(fn, COMM), cell_weights(fn, MSG)
    if _work(painted) <= MAX_WORK:
        return search_block(ir, painted, comm_w, msg_w)
    spent, memo, shares = [0], {}, query_shares(fn, comm_w, msg_w)

    def reorder(node, box):
        key = ir.nodes[node]
        (c0, c1), (m0, m1) = box
        if key[0] == "leaf" or c0 >= c1 or m0 >= m1 or (node, box) in memo:   # (an empty block is never reached)
            return memo.get((node, box), node)
        block = painted[c0:c1, m0:m1]
        work = _work(block)
        if work <= MAX_WORK and spent[0] + work <= TOTAL_WORK:
            spent[0] += work
            found = search_block(ir, block, comm_w[c0:c1], msg_w[m0:m1], (c0, m0))
            better = expected_tests(fn, ir, found, box, shares) < expected_tests(fn, ir, node, box, shares)
            memo[node, box] = found if better else node
        else:
            axis, cell, lo, hi = key
            below, above = _split(box, axis, cell)
            memo[node, box] = ir.test(axis, cell, reorder(lo, below), reorder(hi, above))
        return memo[node, box]
    return reorder(tree_root, ((0, painted.shape[0]), (0, painted.shape[1])))
