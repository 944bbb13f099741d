"""§3.3 without the walk: the tree's regions as a small grid table searched branch-free (C `--flavor table`).

The quadtree's leaves tile the grid of cells (decision_function.py). Adjacent communicator cells whose rows
of methods are equal form one band, and the message cells where no band changes method are merged into one
column: the leaves become a bands x columns table of method indices (one byte each up to 256 methods).
A query is two searches, one per axis, over the sorted lower bounds of the bands and of the columns, then
one load. Each search is a fixed number of steps `i += (size > bound[i + step - 1]) ? step : 0` (step = half
the padded length, then a quarter, ...): no loop and no data-dependent branch, so random queries cost what
repeated ones cost, unlike a walk of the nodes (a dependent chain of loads, one level at a time) or the
if/else-if (whose branches mispredict on random sizes). Bounds are stored as the largest size before the
band or column (`lo - 1`, so `>` moves past it); the arrays are padded to 2^k - 1 entries with INT_MAX /
SIZE_MAX, which no size exceeds.

The grid can grow as bands x columns where the tree grows as its leaves; past GRID_BUDGET bytes (more than
twice the node table's and more than 4 KiB) `--flavor table` emits the node table instead (c_table.py).
"""

from dataclasses import dataclass

import numpy as np

from ..errors import QuadselError
from .c_common import algorithm_ids, common_context, library_of
from .c_table import INT_MAX, method_table, table_bytes
from .templating import render

MIN_BUDGET = 4096     # bytes a grid may always take (a few cache lines; the node table's walk is slower)


@dataclass
class GridTable:
    comm_bound: list      # largest communicator size before each band after the first, increasing
    msg_bound: list       # largest message size before each column after the first, increasing
    cells: np.ndarray     # (bands, columns) method index

    @property
    def shape(self):
        return self.cells.shape


def _starts(lines):
    """Indices where a sequence of rows (tuples) changes, the first included."""
    return [0] + [i for i in range(1, len(lines)) if lines[i] != lines[i - 1]]


def merged_cells(painted):
    """(first cell of each band, first cell of each column, bands x columns method indices) of a block of cells."""
    bands = _starts([tuple(row) for row in painted.tolist()])
    columns = _starts([tuple(col) for col in painted[bands].T.tolist()])
    return bands, columns, painted[np.ix_(bands, columns)]


def grid_table_cells(fn):
    """merged_cells of fn's whole grid."""
    return merged_cells(fn.cell_methods())


def grid_table(fn):
    """The GridTable of a DecisionFunction: its cell methods with equal neighbouring rows and columns merged."""
    bands, columns, cells = grid_table_cells(fn)
    comm_bound = [int(fn.comm_axis.lo[i]) - 1 for i in bands[1:]]
    if any(b >= INT_MAX for b in comm_bound):
        raise QuadselError("a communicator size of the tree does not fit a C int")
    return GridTable(comm_bound, [int(fn.msg_axis.lo[i]) - 1 for i in columns[1:]], cells)


def _padded(bounds):
    """(length 2^k - 1 >= len(bounds), the search's steps 2^(k-1), ..., 1)."""
    k = 0
    while (1 << k) - 1 < len(bounds):
        k += 1
    return (1 << k) - 1, [1 << j for j in range(k - 1, -1, -1)]


def _cell_type(n):
    return "uint8_t" if n <= 2**8 else "uint16_t" if n <= 2**16 else "uint32_t"


def grid_bytes(fn, grid=None):
    """Bytes of the grid form's data: both padded bound arrays, the cells, the method table."""
    grid = grid or grid_table(fn)
    cell = {"uint8_t": 1, "uint16_t": 2, "uint32_t": 4}[_cell_type(len(fn.methods))]
    return (4 * _padded(grid.comm_bound)[0] + 8 * _padded(grid.msg_bound)[0] + cell * grid.cells.size
            + 8 * len(fn.methods))


def grid_fits(fn):
    """Whether `--flavor table` emits the grid (else the node table): its bytes within GRID_BUDGET."""
    return grid_bytes(fn) <= max(MIN_BUDGET, 2 * table_bytes(fn))


def generate_c_grid(fn, name=None, library=None):
    """The decision function as the grid table searched branch-free (§3.3, a table without the walk)."""
    library = library_of(fn, library)
    ids = algorithm_ids(fn.methods, fn.collective, library)
    grid = grid_table(fn)
    n_comm, comm_steps = _padded(grid.comm_bound)
    n_msg, msg_steps = _padded(grid.msg_bound)
    comm_bound = [str(b) for b in grid.comm_bound] + ["INT_MAX"] * (n_comm - len(grid.comm_bound))
    msg_bound = [f"(size_t){b}" for b in grid.msg_bound] + ["SIZE_MAX"] * (n_msg - len(grid.msg_bound))
    return render("c_grid.c.j2", comm_bound=comm_bound, msg_bound=msg_bound, comm_steps=comm_steps,
                  msg_steps=msg_steps, bands=grid.shape[0], columns=grid.shape[1],
                  cells=[", ".join(str(k) for k in row) for row in grid.cells.tolist()],
                  cell_type=_cell_type(len(fn.methods)), methods=method_table(fn, ids),
                  data_bytes=grid_bytes(fn, grid), **common_context(fn, name, ids, library))
