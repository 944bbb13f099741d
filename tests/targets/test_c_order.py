"""The merged if/else-if in the order with the fewest expected tests (c_order.py): what it expects, against the
quadtree's order, and where it keeps the quadtree's order. (That both orders answer what Python answers is
test_c_forms.py's.)"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.targets import c_order
from quadsel.targets.c import generate_c
from quadsel.targets.c_branches import COMM, MSG, DecisionIR, function_size, ordered_ir, walked_tests

from helpers import random_table, table_from_cube


def random_fn(seed, n_comm, n_msg, n_methods, **options):
    rows, _, _ = random_table(np.random.default_rng(seed), n_comm, n_msg, n_methods)
    return build_size_tree(build_decision_map(rows), **options)


def diagonal_fn(n):
    """One method on the diagonal of an n x n map, another elsewhere: a grid of n x n bands and columns."""
    best = np.eye(n, dtype=int)
    cost = np.where(np.arange(2)[None, None, :] == best[:, :, None], 1.0, 2.0)
    rows = table_from_cube(cost, np.arange(2, 2 + n), np.arange(1, n + 1) * 8, [("1", 0), ("2", 0)])
    return build_size_tree(build_decision_map(rows), split="measured")


def test_prior_is_a_distribution_over_the_measured_range():
    fn = random_fn(1, 5, 9, 3, outside="default")       # cells below and above the measured sizes
    for axis in (COMM, MSG):
        weights = c_order.cell_weights(fn, axis)
        assert weights.sum() == pytest.approx(1.0)
        assert weights[0] == 0.0 and weights[-1] == 0.0 and (weights[1:-1] > 0).all()


def test_expected_tests_of_a_single_test_is_one_and_of_a_leaf_zero():
    fn = random_fn(2, 4, 4, 2)
    ir = DecisionIR()
    a, b = ir.leaf(0), ir.leaf(1)
    assert c_order.expected_tests(fn, ir, a) == 0.0
    assert c_order.expected_tests(fn, ir, ir.test(MSG, 2, a, b)) == pytest.approx(1.0)
    # a second test reached only below the first cut: its weight is that side's share of the queries
    share = c_order.cell_weights(fn, COMM)[:2].sum()
    nested = ir.test(COMM, 2, ir.test(MSG, 2, a, b), b)
    assert c_order.expected_tests(fn, ir, nested) == pytest.approx(1.0 + share)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 8), st.integers(1, 12), st.integers(1, 4),
       st.sampled_from([{}, {"split": "measured"}, {"split": "measured", "between": "least-bad"},
                        {"outside": "default"}, {"max_depth": 2}]))
def test_emitted_order_never_expects_more_tests_than_the_trees(seed, n_comm, n_msg, n_methods, options):
    fn = random_fn(seed, n_comm, n_msg, n_methods, **options)
    ir, root, tree_root = ordered_ir(fn)
    assert c_order._work(fn.cell_methods()) <= c_order.MAX_WORK      # small grids are searched whole
    found = c_order.expected_ir(fn, ir, tree_root)
    walked, tree = walked_tests(fn)
    assert walked <= tree + 1e-9
    assert walked == pytest.approx(min(c_order.expected_tests(fn, ir, found), tree))
    assert function_size(fn).tests == ir.tests(root)
    header = generate_c(fn)
    assert f"{walked:.2f} in this order" in header and f"{tree:.2f} in the quadtree's" in header


def test_orfeo_bcast_exact_trees_walk_under_half_the_tests_of_the_trees_order(orfeo):
    from quadsel.decision.options import DEFAULT_BUILD, PAPER_BUILD
    from quadsel.ingest import read_measurements
    files = sorted(orfeo.glob("bcast_algo*.csv")) + [orfeo / "bcast_default.csv"]
    dmap = build_decision_map(read_measurements([str(f) for f in files]))
    for options in (dict(PAPER_BUILD, outside="default"), dict(DEFAULT_BUILD, max_leaves=None, outside="default")):
        walked, tree = walked_tests(build_size_tree(dmap, **options))
        assert walked < 0.6 * tree


def test_grids_past_the_work_limit_keep_the_trees_order(monkeypatch):
    fn = random_fn(3, 6, 9, 3)
    assert generate_c(fn) != generate_c(fn, order="tree")
    monkeypatch.setattr(c_order, "MAX_WORK", 0)
    assert generate_c(fn) == generate_c(fn, order="tree")


def test_large_diagonal_is_searched_in_blocks_and_keeps_the_node_table(c_program):
    from quadsel.targets import emit
    from quadsel.targets.c_grid import grid_fits
    from test_c_forms import python_answers
    fn = diagonal_fn(100)
    assert c_order._work(fn.cell_methods()) > c_order.MAX_WORK
    walked, tree = walked_tests(fn)
    assert walked <= tree
    assert not grid_fits(fn) and "_nodes[" in emit("c", [fn], flavor="table")
    program = c_program({"d_merged": generate_c(fn, name="d_merged"),
                         "d_table": emit("c", [fn], flavor="table", name="d_table")})
    sizes = [(int(c) + d, int(m) + e) for c, m in zip(fn.comm_sizes, fn.msg_sizes) for d in (-1, 0) for e in (-1, 0, 1)]
    expected = python_answers(fn, *zip(*sizes))
    for form in (0, 1):
        assert program.ask([("f", form, c, m) for c, m in sizes]) == expected


def test_a_grid_past_the_limit_is_searched_block_by_block_below_the_trees_top(monkeypatch, c_program):
    from test_c_forms import boundary_queries, python_answers
    fn = random_fn(4, 12, 16, 3, split="measured")
    whole, tree = walked_tests(fn)
    monkeypatch.setattr(c_order, "MAX_WORK", 600)           # the whole grid is past it, blocks of it are not
    assert c_order._work(fn.cell_methods()) > 600
    walked, tree_again = walked_tests(fn)
    assert tree_again == tree and whole <= walked < tree
    program = c_program({"blocks": generate_c(fn, name="blocks")})
    queries = boundary_queries(fn)
    assert program.ask([("f", 0, c, m) for c, m in queries]) == python_answers(fn, *zip(*queries))
    monkeypatch.setattr(c_order, "TOTAL_WORK", 0)            # no block searched: the tree's order throughout
    assert walked_tests(fn) == (tree, tree)


def _least_tests(cells, row_w, col_w):
    """The program's optimum written plainly: every sub-rectangle of merged cells, every cut of it, memoised."""
    import functools
    rows, cols = np.concatenate([[0.0], np.cumsum(row_w)]), np.concatenate([[0.0], np.cumsum(col_w)])

    @functools.lru_cache(maxsize=None)
    def least(r0, r1, c0, c1):
        if len(np.unique(cells[r0:r1, c0:c1])) == 1:
            return 0.0
        cuts = [least(r0, k, c0, c1) + least(k, r1, c0, c1) for k in range(r0 + 1, r1)]
        cuts += [least(r0, r1, c0, k) + least(r0, r1, k, c1) for k in range(c0 + 1, c1)]
        return (rows[r1] - rows[r0]) * (cols[c1] - cols[c0]) + c_order.TIE + min(cuts)
    return least(0, cells.shape[0], 0, cells.shape[1])


@given(st.integers(0, 10**6), st.integers(1, 7), st.integers(1, 7), st.integers(1, 3), st.booleans())
@settings(max_examples=120, deadline=None)
def test_the_search_finds_the_fewest_expected_tests_of_any_order(seed, n_rows, n_cols, n_methods, even):
    """search_block's order expects the fewest tests of any order of cuts (each test's share of queries, plus TIE),
    against that optimum written plainly; the tests it emits walk to the same figure, and answer each cell's
    method. `even`: equal weights, where many orders tie."""
    from quadsel.targets.c_grid import merged_cells
    rng = np.random.default_rng(seed)
    block = rng.integers(0, n_methods, size=(n_rows, n_cols))
    comm_w = np.ones(n_rows) if even else rng.uniform(0.0, 1.0, n_rows)
    msg_w = np.ones(n_cols) if even else rng.uniform(0.0, 1.0, n_cols)
    bands, columns, cells = merged_cells(block)
    best = _least_tests(cells, np.add.reduceat(comm_w, bands), np.add.reduceat(msg_w, columns))
    ir = DecisionIR()
    root = c_order.search_block(ir, block, comm_w, msg_w, corner=(0, 0))
    rows, cols = np.concatenate([[0.0], np.cumsum(comm_w)]), np.concatenate([[0.0], np.cumsum(msg_w)])
    walked, todo = 0.0, [(root, (0, n_rows), (0, n_cols))]
    while todo:
        node, (r0, r1), (c0, c1) = todo.pop()
        key = ir.nodes[node]
        if key[0] == "leaf":
            assert (block[r0:r1, c0:c1] == key[1]).all()
            continue
        axis, cell, lo, hi = key
        walked += (rows[r1] - rows[r0]) * (cols[c1] - cols[c0]) + c_order.TIE
        if axis == COMM:
            todo += [(lo, (r0, cell), (c0, c1)), (hi, (cell, r1), (c0, c1))]
        else:
            todo += [(lo, (r0, r1), (c0, cell)), (hi, (r0, r1), (cell, c1))]
    assert walked == pytest.approx(best, rel=1e-12, abs=1e-12)


@given(st.integers(0, 10**6), st.integers(1, 9), st.integers(1, 9), st.integers(1, 3))
@settings(max_examples=80, deadline=None)
def test_the_work_counts_the_merged_bands_and_columns(seed, n_rows, n_cols, n_methods):
    from quadsel.targets.c_grid import merged_cells
    block = np.random.default_rng(seed).integers(0, n_methods, size=(n_rows, n_cols))
    block = block[np.sort(np.random.default_rng(seed + 1).integers(0, n_rows, n_rows))]     # equal rows too
    bands, columns, _ = merged_cells(block)
    assert c_order._work(block) == len(bands) * len(columns) * (len(bands) + len(columns))
