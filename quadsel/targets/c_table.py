"""§3.3 made compact: the quadtree as a breadth-first node table with implicit children (the blob's layout, and
C `--flavor table` where the grid table, c_grid.py, would be too large).

Nodes are numbered breadth-first, so the children of a node are consecutive: a node stores the index of its
first child (NW, then NE, SW, SE of the quadrants it has), the index of its communicator cut and of its
message cut into two threshold tables (0 = no cut on that axis), and nothing about the block it covers. A
leaf has neither cut and stores its method index in place of the first child. Each axis's thresholds are
stored once, as the largest size still on the near side of the cut (`lo - 1`, so a query goes south / east
when `size > bound`); entry 0 of each table is a placeholder no size exceeds (INT_MAX, SIZE_MAX), so a
missing cut needs no test. Narrow nodes (4 bytes: uint16 first child or method, uint8 + uint8 cut indices)
hold trees under 65,536 nodes, with at most 255 distinct cuts per axis and 65,536 methods; anything larger
takes wide nodes (8 bytes: uint32, uint16, uint16). The loadable blob (blob.py) stores the same table.
"""

from dataclasses import dataclass

import numpy as np

from ..errors import QuadselError
from .c_common import algorithm_ids, common_context, library_of
from .templating import render

INT_MAX, SIZE_MAX = 2**31 - 1, 2**64 - 1     # the placeholders (C: INT_MAX, SIZE_MAX)
NARROW = {"bytes": 4, "next": "uint16_t", "cut": "uint8_t", "max_next": 2**16 - 1, "max_cut": 2**8 - 1}
WIDE = {"bytes": 8, "next": "uint32_t", "cut": "uint16_t", "max_next": 2**32 - 1, "max_cut": 2**16 - 1}


@dataclass
class CompactTable:
    next: np.ndarray          # (N,) first child of an internal node, method index of a leaf
    comm_cut: np.ndarray      # (N,) index into comm_bound, 0 = no communicator cut
    msg_cut: np.ndarray       # (N,) index into msg_bound, 0 = no message cut
    comm_bound: list          # [INT_MAX, …] largest communicator size north of each cut, increasing
    msg_bound: list           # [SIZE_MAX, …] largest message size west of each cut, increasing
    layout: dict              # NARROW or WIDE

    @property
    def n_nodes(self):
        return len(self.next)


def compact_table(tree, comm_lo, msg_lo):
    """The breadth-first table of a Quadtree whose cuts are cells with lower bounds comm_lo / msg_lo."""
    order, position = [0], {0: 0}
    first = []
    for node in order:                                 # grows while it is walked: breadth-first
        kids = [int(k) for k in tree.children[node] if k >= 0]
        first.append(len(order))
        for kid in kids:
            position[kid] = len(order)
            order.append(kid)
    comm_cells = sorted({int(c) for c in tree.comm_cut if c >= 0})
    msg_cells = sorted({int(c) for c in tree.msg_cut if c >= 0})
    comm_index = {cell: i + 1 for i, cell in enumerate(comm_cells)}
    msg_index = {cell: i + 1 for i, cell in enumerate(msg_cells)}
    nodes = np.asarray(order)
    leaf = tree.is_leaf[nodes]
    table = CompactTable(
        next=np.where(leaf, tree.method[nodes], np.asarray(first)),
        comm_cut=np.asarray([comm_index.get(int(c), 0) for c in tree.comm_cut[nodes]], dtype=np.int64),
        msg_cut=np.asarray([msg_index.get(int(c), 0) for c in tree.msg_cut[nodes]], dtype=np.int64),
        comm_bound=[INT_MAX] + [int(comm_lo[c]) - 1 for c in comm_cells],
        msg_bound=[SIZE_MAX] + [int(msg_lo[c]) - 1 for c in msg_cells],
        layout=NARROW)
    if any(b >= INT_MAX for b in table.comm_bound[1:]):
        raise QuadselError("a communicator size of the tree does not fit a C int")
    longest = max(len(comm_cells), len(msg_cells))
    if table.n_nodes > NARROW["max_next"] or int(table.next.max()) > NARROW["max_next"] or longest > NARROW["max_cut"]:
        table.layout = WIDE
    if table.n_nodes > WIDE["max_next"] or longest > WIDE["max_cut"]:
        raise QuadselError(f"the tree is too large for the node table ({table.n_nodes} nodes, {longest} cuts "
                           "on one axis)")
    return table


def table_of(fn):
    return compact_table(fn.tree, fn.comm_axis.lo, fn.msg_axis.lo)


def method_table(fn, ids):
    """Per method index: its algorithm id (number) and segment size."""
    return [{"alg": ids[m.algorithm].number, "alg_expr": ids[m.algorithm].expr, "seg": int(m.segsize)}
            for m in fn.methods]


def table_bytes(fn):
    """Bytes of the table form's data: nodes, both threshold tables (with placeholders), the method table."""
    table = table_of(fn)
    return (table.layout["bytes"] * table.n_nodes + 4 * len(table.comm_bound) + 8 * len(table.msg_bound)
            + 8 * len(fn.methods))


def generate_c_table(fn, name=None, library=None):
    """The decision function as the compact node table walked by a small loop (§3.3, emlearn's loadable form)."""
    library = library_of(fn, library)
    ids = algorithm_ids(fn.methods, fn.collective, library)
    table = table_of(fn)
    nodes = [f"{{ {n}, {c}, {m} }}" for n, c, m in zip(table.next.tolist(), table.comm_cut.tolist(),
                                                       table.msg_cut.tolist())]
    msg_bound = ["SIZE_MAX"] + [f"(size_t){b}" for b in table.msg_bound[1:]]
    comm_bound = ["INT_MAX"] + [str(b) for b in table.comm_bound[1:]]
    return render("c_table.c.j2", nodes=nodes, layout=table.layout, comm_bound=comm_bound, msg_bound=msg_bound,
                  methods=method_table(fn, ids), data_bytes=table_bytes(fn), **common_context(fn, name, ids, library))
