"""The decision function: one tree over typed keys, the way MPICH's csel is (src/mpi/coll/src/csel.c).

Its keys are, outermost first, the layout (ranks per node, `ppn`: csel's `comm_avg_ppn<=P`), the communicator
size and the message size. The layout key is optional: a function without it is one size tree (size_tree.py, the
paper's quadtree over communicator x message size) for every layout; with it, one layer per range of ppn, each
holding the size tree of that range. Every stage and every writer reads this one type: a writer asks for its
layers (targets/layout_rules.py), never whether it has any.

Query rule, the one Python, the C and every rules file follow: the first layer whose ppn bound is >= the query's
ppn (MPICH's `comm_avg_ppn<=P`), else the last; then that layer's size tree (size_tree.py). A query given nodes
instead of ppn takes ppn = ceil(comm size / nodes), the smallest P with comm size <= P x nodes (what MPICH's csel
tests). A function without the layout key answers every ppn alike.
"""

from dataclasses import dataclass, field, replace
from typing import List, Optional, Tuple

import numpy as np

from ..errors import QuadselError
from . import forest_file, tree_file
from .builder import build_size_tree
from .decision_map import DecisionMap, Method  # noqa: F401
from .options import DEFAULT_BUILD, PAPER_BUILD, SPLITS, BuildOptions  # noqa: F401 (the builder's interface)
from .size_tree import SizeTree

# Rules for a ppn between or beyond the layers' bounds: "ceiling" is the deployed one (MPICH's comm_avg_ppn<=P);
# the others are the alternatives benchmarks/layouts.py compares it with on held-out layouts.
UNSEEN_PPN_RULES = ("ceiling", "lower", "nearest")


@dataclass(frozen=True)
class Layer:
    """One range of the layout key: ppn in (the previous layer's bound, `ppn`], and its size tree."""
    ppn: Optional[int]              # the bound; None: the function has no layout key (every ppn)
    measured_ppn: Tuple[int, ...]   # the measured ppn it was built from (several when identical neighbours merged)
    nodes: Tuple[int, ...]          # the measured node counts
    tree: SizeTree

    @property
    def leaves(self):
        return int(self.tree.stats()["leaves"])


@dataclass
class DecisionFunction:
    collective: str
    layers: List[Layer]
    provenance: dict = field(default_factory=dict)

    @classmethod
    def of(cls, tree):
        """The decision function of one size tree: no layout key (its provenance is the tree's). A decision
        function is returned as it is, so that every consumer can take either."""
        if isinstance(tree, DecisionFunction):
            return tree
        return cls(tree.collective, [Layer(None, (), (), tree)], tree.provenance)

    def with_trees(self, trees):
        """The same function with each layer's size tree replaced (without the layout key its provenance is the
        new tree's)."""
        if not self.has_layout:
            return DecisionFunction.of(trees[0])
        return DecisionFunction(self.collective, [replace(layer, tree=tree) for layer, tree in zip(self.layers, trees)],
                                dict(self.provenance))

    # -- the keys ----------------------------------------------------------------------------------
    @property
    def has_layout(self):
        """Does the function test the layout key (ranks per node)?"""
        return self.layers[0].ppn is not None

    @property
    def keys(self):
        return ("ppn", "comm_size", "msg_size") if self.has_layout else ("comm_size", "msg_size")

    @property
    def size_trees(self):
        return [layer.tree for layer in self.layers]

    @property
    def size_tree(self):
        """The one size tree of a function without the layout key (for an output that has no layout level)."""
        if self.has_layout:
            raise QuadselError(f"the {self.collective} decision function has a layout key ({self.leaf_line()}): "
                               "give the layout, --ppn P, for the layer a job of P ranks per node runs")
        return self.layers[0].tree

    @property
    def methods(self):
        """Every method of its size trees, in first-use order."""
        return list(dict.fromkeys(m for tree in self.size_trees for m in tree.methods))

    @property
    def library(self):
        return self.provenance.get("library") or self.layers[0].tree.provenance.get("library")

    @property
    def constraint(self):
        """The constraint its size trees were built under (None when they differ)."""
        found = {tree.constraint for tree in self.size_trees}
        return found.pop() if len(found) == 1 else None

    @property
    def bounds(self):
        return np.array([layer.ppn for layer in self.layers], dtype=np.int64)

    # -- queries -----------------------------------------------------------------------------------
    def layer_index(self, ppn, rule="ceiling"):
        """Layer index of every ppn (array): the deployed `ceiling` rule, or an alternative (UNSEEN_PPN_RULES)."""
        if not self.has_layout:
            return np.zeros(np.shape(ppn), dtype=np.int64)
        return layer_index(self.bounds, ppn, rule)

    def at_ppn(self, ppn):
        """The function a job of `ppn` ranks per node runs: its layer's size tree, without the layout key."""
        return DecisionFunction.of(self.layers[int(self.layer_index(np.array([ppn]))[0])].tree)

    def query(self, comm_size, msg_size, ppn=None, nodes=None, rule="ceiling"):
        """The Method chosen for one call (ppn, or nodes, needed with the layout key)."""
        if self.has_layout:
            ppn = query_ppn(comm_size, ppn, nodes)
        tree = self.layers[int(self.layer_index(np.array([ppn or 1]), rule)[0])].tree
        return tree.query(comm_size, msg_size)

    def methods_at(self, ppn, comm_sizes, msg_sizes, rule="ceiling"):
        """The Method chosen for equally long arrays of ppn, comm and msg sizes (a list)."""
        ppn, comm_sizes, msg_sizes = (np.asarray(a) for a in (ppn, comm_sizes, msg_sizes))
        which = self.layer_index(ppn, rule)
        out = [None] * len(comm_sizes)
        for k in np.unique(which).tolist():
            at = np.flatnonzero(which == k)
            tree = self.layers[k].tree
            for i, index in zip(at.tolist(), tree.choices(comm_sizes[at], msg_sizes[at]).tolist()):
                out[i] = tree.methods[index]
        return out

    # -- what it is --------------------------------------------------------------------------------
    def stats(self):
        """The size tree's statistics; with the layout key per layer and in all: the total leaves are the sum of
        the layers' (one number wherever printed)."""
        if not self.has_layout:
            return self.size_tree.stats()
        per = [{"ppn": layer.ppn, "measured_ppn": list(layer.measured_ppn), "leaves": layer.leaves,
                "nodes": int(layer.tree.stats()["nodes"])} for layer in self.layers]
        return {"members": len(per), "leaves": sum(p["leaves"] for p in per),
                "nodes": sum(p["nodes"] for p in per), "per_layout": per}

    def layer_label(self, i):
        return layer_label([layer.ppn for layer in self.layers], i)

    def leaf_line(self):
        """`ppn<=1: 5, ppn<=4: 7, any: 3 leaves (15 in all)`: what build prints."""
        each = ", ".join(f"{self.layer_label(i)}: {layer.leaves}" for i, layer in enumerate(self.layers))
        return f"{each} leaves ({self.stats()['leaves']} in all)"

    # -- persistence (the tree file, docs/formats-tree.md: one format per shape, one checked reader) --------
    def to_json(self):
        return forest_file.to_json(self) if self.has_layout else tree_file.to_json(self.size_tree)

    def dumps(self):
        import json
        return json.dumps(self.to_json(), indent=1) + "\n"

    def save(self, path):
        from ..output import write_text
        write_text(path, self.dumps())

    @classmethod
    def load(cls, path):
        """Read a tree file of either shape, checked whole before use (tree_file.read: strict JSON and its schema,
        then the structure)."""
        data, text = tree_file.read(path)
        return cls.from_json(data, path, text)

    @classmethod
    def from_json(cls, data, path="<tree>", text=None):
        if forest_file.is_forest(data):
            collective, members, provenance = forest_file.from_json(data, path, text)
            layers = [Layer(ppn, tuple(measured), tuple(nodes), SizeTree(**args)) for ppn, measured, nodes, args in members]
            return cls(collective, layers, provenance)
        return cls.of(SizeTree(**tree_file.from_json(data, path)))


def build_decision_function(dmap: DecisionMap, **options):
    """The decision function of one decision map (no layout key): its size tree (builder.build_size_tree)."""
    return DecisionFunction.of(build_size_tree(dmap, **options))


def layer_label(bounds, i):
    """`ppn<=4` for a layer, `ppn>4` for the last one (it takes every larger ppn), `any ppn` for a single one."""
    if i + 1 < len(bounds):
        return f"ppn<={bounds[i]}"
    return f"ppn>{bounds[i - 1]}" if i else "any ppn"


def layer_index(bounds, ppn, rule="ceiling"):
    """Layer of every ppn given the layers' ppn bounds (increasing). ceiling: the first bound >= ppn, else the
    last (MPICH's comm_avg_ppn<=P); lower: the last bound <= ppn, else the first; nearest: the bound nearest in
    log2(ppn), a tie to the larger."""
    ppn = np.asarray(ppn, dtype=np.int64)
    last = len(bounds) - 1
    if rule == "ceiling":
        return np.minimum(np.searchsorted(bounds, ppn, side="left"), last)
    if rule == "lower":
        return np.maximum(np.searchsorted(bounds, ppn, side="right") - 1, 0)
    if rule == "nearest":
        up = np.minimum(np.searchsorted(bounds, ppn, side="left"), last)
        down = np.maximum(up - 1, 0)
        log = np.log2(np.maximum(ppn, 1))
        return np.where(np.abs(np.log2(bounds[down]) - log) < np.abs(np.log2(bounds[up]) - log), down, up)
    raise ValueError(f"unknown ppn rule {rule!r} (choose from {', '.join(UNSEEN_PPN_RULES)})")


def query_ppn(comm_size, ppn=None, nodes=None):
    """The ppn of a query given --ppn or --nodes (ceil(comm / nodes): MPICH's comm_size <= P x nodes)."""
    if (ppn is None) == (nodes is None):
        raise QuadselError("a layout forest needs the layout of the query: give --ppn P or --nodes N")
    if ppn is not None:
        return int(ppn)
    return -(-int(comm_size) // int(nodes))
