"""The grid table (`--flavor table`, c_grid.py): its layout, what its object file holds, and the search's limits.
(That it answers what Python answers is test_c_forms.py's.)"""

import numpy as np

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.targets import emit
from quadsel.targets.c_grid import _padded, generate_c_grid, grid_bytes, grid_fits, grid_table

from helpers import random_table
from test_c_table import data_symbols


def test_padded_search_covers_every_count_of_bounds():
    for n in range(0, 70):
        length, steps = _padded(list(range(n)))
        assert length >= n and length + 1 == 2 ** len(steps) and sum(steps) == length
        assert length < 2 * n + 1


def test_bands_and_columns_merge_equal_neighbours_only():
    rows, _, _ = random_table(np.random.default_rng(5), 9, 14, 3)
    fn = build_size_tree(build_decision_map(rows), split="measured", max_leaves=6)
    grid, painted = grid_table(fn), fn.cell_methods()
    cells = grid.cells
    assert (np.diff(cells, axis=0) != 0).any(axis=1).all() and (np.diff(cells, axis=1) != 0).any(axis=0).all()
    # every cell of the painted map is its band's and column's entry
    comm = fn.comm_axis.lo
    msg = fn.msg_axis.lo
    band = np.searchsorted(np.asarray(grid.comm_bound) + 1, comm, side="right")
    column = np.searchsorted(np.asarray(grid.msg_bound) + 1, msg, side="right")
    assert (cells[np.ix_(band, column)] == painted).all()


def test_object_file_holds_the_padded_bounds_cells_and_methods(c_compiler, tmp_path):
    rows, _, _ = random_table(np.random.default_rng(6), 12, 20, 5)
    fn = build_size_tree(build_decision_map(rows))
    grid = grid_table(fn)
    symbols = data_symbols(c_compiler, generate_c_grid(fn, name="t"), tmp_path)
    assert symbols == {"t_comm_bound": 4 * _padded(grid.comm_bound)[0], "t_msg_bound": 8 * _padded(grid.msg_bound)[0],
                       "t_cells": grid.cells.size, "t_alg": 4 * len(fn.methods), "t_seg": 4 * len(fn.methods)}
    assert sum(symbols.values()) == grid_bytes(fn)


def test_flavor_table_is_the_grid_when_it_fits():
    rows, _, _ = random_table(np.random.default_rng(7), 6, 8, 3)
    fn = build_size_tree(build_decision_map(rows))
    assert grid_fits(fn)
    source = emit("c", [fn], flavor="table", name="t")
    assert "t_cells[" in source and "t_nodes[" not in source
    assert source == generate_c_grid(fn, name="t")
