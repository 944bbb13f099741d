"""A size tree: the quadtree over the two size keys (communicator size, message size) of one decision map,
together with what it needs to answer queries: the grid's axes, the method table, how it was built.

The query rule (one rule for Python, the generated C and every emitter), §3.2 generalised:
  1. each size -> its cell on its axis (decision/grid.py): the measured size at or below it (`floor`), or
     with the between rule the open interval between two measured sizes; below the smallest measured size
     the first cell, above the largest the last;
  2. descend the quadtree (decision/quadtree.py) from the root: south when the communicator cell is at or
     past the node's communicator cut, east likewise for the message cell, until a leaf.
Cell boundaries are integer sizes, so every step is an integer comparison `size >= bound`.

A decision function (decision_function.py) is one size tree, or one per range of the layout key.
"""

from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np

from .decision_map import Method
from . import tree_file
from .grid import COMM_TOP, Axis
from .options import BuildOptions
from .quadtree import Quadtree


@dataclass
class SizeTree:
    collective: str
    comm_sizes: np.ndarray
    msg_sizes: np.ndarray
    methods: List[Method]
    tree: Quadtree
    options: BuildOptions = field(default_factory=BuildOptions)
    provenance: dict = field(default_factory=dict)
    paper_stats: Optional[dict] = None       # midpoint: the padded tree's statistics as the paper counts them

    def __post_init__(self):
        outside = self.options.outside == "default"     # outside cells: the library default's (library_default.py)
        self.comm_axis = Axis.of(self.comm_sizes, self.options.between, outside, top=COMM_TOP,
                                 reach=self.options.reach("comm"))
        self.msg_axis = Axis.of(self.msg_sizes, self.options.between, outside, reach=self.options.reach("msg"))

    # -- queries ---------------------------------------------------------------------------------
    def choices(self, comm_sizes, msg_sizes):
        """Method index chosen for equally shaped arrays of any communicator and message sizes."""
        leaves = self.tree.leaves_of(self.comm_axis.cells(comm_sizes), self.msg_axis.cells(msg_sizes))
        return self.tree.method[leaves]

    def query(self, comm_size, msg_size):
        """Method chosen for any communicator and message size."""
        return self.methods[int(self.choices(np.array([comm_size]), np.array([msg_size]))[0])]

    def choice_grid(self):
        """(C, M) method index chosen at every measured grid point."""
        painted = self.cell_methods()
        return painted[np.ix_(self.comm_axis.measured_cells(), self.msg_axis.measured_cells())]

    def cell_methods(self):
        """(rows, cols) method index of every cell of the grid (measured sizes and gaps)."""
        return self.tree.paint(len(self.comm_axis), len(self.msg_axis))

    @property
    def constraint(self):
        return self.options.constraint

    @property
    def max_depth(self):
        return self.options.max_depth

    @property
    def accuracy_threshold(self):
        return self.options.accuracy_threshold

    @property
    def leaf_rule(self):
        return self.options.leaf_rule

    def stats(self):
        """The deployed tree's statistics (depths, `leaves` -- leaf_count, the one count every output prints --
        and nodes); for the paper's builder also `paper`: those of its padded tree as the paper counts them
        (padding-only quadrants included), a figure of its own."""
        out = self.tree.stats()
        if self.paper_stats:
            out["paper"] = dict(self.paper_stats)
        return out

    # -- persistence (the tree file, docs/formats-tree.md) ---------------------------------------
    def to_json(self):
        return tree_file.to_json(self)

    def dumps(self):
        return tree_file.dumps(self)

    def save(self, path):
        from ..output import write_text
        write_text(path, self.dumps())

    @classmethod
    def from_json(cls, data, path="<tree>"):
        return cls(**tree_file.from_json(data, path))


def leaf_count(tree):
    """The one leaf count every output prints (build, report, query --info, the C's header, the tree file's
    `stats.leaves`): the leaves of the tree as deployed -- the regions of the tree the query rule descends to,
    those that hand the sizes outside the measured range back to the library included. A leaf budget
    (`--max-leaves`) bounds this count."""
    return tree.tree.n_leaves
