"""The layout key's layers (issue 30): one size tree per ranks per node, the MPICH csel way (docs/methodology.md,
"The layout axis").

The same communicator size comes in many layouts (64 ranks as 64 nodes x 1, 8 x 8 or 1 x 64), and switch points
move with them. Measurements of different layouts are never pooled: the rows are grouped by ranks per node (ppn),
and for each measured ppn the size tree over (comm size = nodes x ppn, message size) is built with the same
builder settings (the caller's `build_one`, i.e. build_size_tree). Adjacent groups whose trees decide identically
everywhere are merged. The result is a DecisionFunction with the layout key (decision_function.py: its query rule).
"""

import numpy as np

from ..ingest.layout import layout_groups  # noqa: F401 (the layers' groups: one per ppn)
from .decision_function import DecisionFunction, Layer


def group_table(rows, table):
    """The rows of one group as an ingest Table carrying `table`'s library, notes and replaced points."""
    from ..ingest import Table
    out = Table(rows, (), getattr(table, "library", None), aggregated=getattr(table, "aggregated", False))
    out.replaced = list(getattr(table, "replaced", ()))
    return out


def layer_maps(groups, collective, table=None):
    """{ppn: (its decision map, the measured node counts)} of {ppn: rows of `collective`}."""
    from .decision_map import build_decision_map
    out = {}
    for ppn, rows in groups.items():
        dmap = build_decision_map(group_table(rows, table), collective)
        comms = set(dmap.comm_sizes.tolist())
        out[ppn] = dmap, tuple(sorted({m.nodes for m in rows if not m.is_default and m.comm_size in comms}))
    return out


def build_layered(maps, build_one, provenance=None):
    """The DecisionFunction with the layout key of {ppn: (decision map, node counts)}: per ppn `build_one(dmap)`
    (the size tree with the caller's settings), adjacent layers that decide identically merged."""
    layers = [Layer(ppn, (ppn,), nodes, build_one(dmap)) for ppn, (dmap, nodes) in maps.items()]
    collective = next(iter(maps.values()))[0].collective
    return DecisionFunction(collective, merge_identical(layers), dict(provenance or {}))


def build_from_groups(groups, collective, build_one, table=None, provenance=None):
    """(the DecisionFunction with the layout key, {ppn: decision map}) of {ppn: rows} (layer_maps, build_layered)."""
    maps = layer_maps(groups, collective, table)
    return build_layered(maps, build_one, provenance), {ppn: dmap for ppn, (dmap, _) in maps.items()}


def merge_identical(layers):
    """Adjacent layers whose trees decide identically at every size are one layer (the higher ppn bound; the tree
    measured at more communicator sizes, the lower layer's on equal counts: the same answers either way, but verify
    takes the layouts to check from the kept tree's sizes -- keeping ppn 1's tree of 2 ranks lost 2 x 2 there)."""
    out = []
    for layer in layers:
        if out and same_decisions(out[-1].tree, layer.tree):
            prev = out[-1]
            tree = layer.tree if len(layer.tree.comm_sizes) > len(prev.tree.comm_sizes) else prev.tree
            out[-1] = Layer(layer.ppn, prev.measured_ppn + layer.measured_ppn,
                            tuple(sorted(set(prev.nodes) | set(layer.nodes))), tree)
        else:
            out.append(layer)
    return out


def same_decisions(a, b):
    """Do two size trees answer every (comm, msg) query alike? Each is constant on its cells, so it is
    enough to compare them at every cell start of either (the common refinement of their cells)."""
    comm = np.union1d(a.comm_axis.lo, b.comm_axis.lo)
    msg = np.union1d(a.msg_axis.lo, b.msg_axis.lo)
    cc, mm = (x.ravel() for x in np.meshgrid(comm, msg, indexing="ij"))
    pairs = set(zip(a.choices(cc, mm).tolist(), b.choices(cc, mm).tolist()))
    return all(a.methods[i] == b.methods[j] for i, j in pairs)
