"""A quadtree together with what it needs to answer queries: axes, padding, method table, provenance.

The query rule (one rule for Python, the generated C and every emitter), §3.2:
  1. comm size -> the largest measured communicator size <= it (below the smallest: the smallest);
     message size likewise ("floor", as Open MPI's rules files read);
  2. that measured (row, column) -> its first copy in the padded map;
  3. descend the quadtree to the leaf holding that cell.
"""

import datetime
import json
from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np

from .. import __version__
from .decision_map import DecisionMap, Method, floor_index
from ..errors import InputError
from .padding import first_copy, pad, pad_index, padded_size
from .quadtree import LEAF, LEAF_RULES, Quadtree, build_quadtree

FORMAT_NAME = "quadsel-quadtree"
FORMAT_VERSION = 1


@dataclass
class DecisionFunction:
    collective: str
    comm_sizes: np.ndarray
    msg_sizes: np.ndarray
    methods: List[Method]
    pad_mode: str
    row_map: np.ndarray          # padded row -> original comm index
    col_map: np.ndarray          # padded column -> original msg index
    tree: Quadtree
    max_depth: Optional[int] = None
    accuracy_threshold: float = 1.0
    provenance: dict = field(default_factory=dict)
    leaf_rule: str = "majority"

    def __post_init__(self):
        self.first_row = first_copy(self.row_map, len(self.comm_sizes))
        self.first_col = first_copy(self.col_map, len(self.msg_sizes))

    # -- queries ---------------------------------------------------------------------------------
    def query_index(self, ci, mi):
        """Method index chosen for measured grid point (ci, mi)."""
        return int(self.tree.method[self.tree.leaf_at(self.first_row[ci], self.first_col[mi])])

    def query(self, comm_size, msg_size):
        """Method chosen for any communicator and message size (the documented floor rule)."""
        ci = floor_index(self.comm_sizes, comm_size)
        mi = floor_index(self.msg_sizes, msg_size)
        return self.methods[self.query_index(ci, mi)]

    def choice_grid(self):
        """(C, M) method index chosen at every measured grid point."""
        painted = self.tree.paint()
        return painted[np.ix_(self.first_row, self.first_col)]

    @property
    def constraint(self):
        if self.max_depth is None and self.accuracy_threshold >= 1.0:
            return "exact"
        parts = []
        if self.max_depth is not None:
            parts.append(f"max_depth={self.max_depth}")
        if self.accuracy_threshold < 1.0:
            parts.append(f"threshold={self.accuracy_threshold:g}")
        if self.leaf_rule != "majority":
            parts.append(f"leaf={self.leaf_rule}")
        return ",".join(parts)

    # -- the region each node answers for, in real sizes (used by the emitters) -------------------
    def node_ranges(self, node):
        """Original index ranges [a, b) of comm sizes and msg sizes whose queries reach `node`'s block."""
        r0, c0, s = self.tree.row[node], self.tree.col[node], self.tree.size[node]
        rows = np.searchsorted(self.first_row, [r0, r0 + s])
        cols = np.searchsorted(self.first_col, [c0, c0 + s])
        return (int(rows[0]), int(rows[1])), (int(cols[0]), int(cols[1]))

    def reachable_children(self, node):
        """The children of an internal node that some query can reach, with their quadrant names."""
        out = []
        for quadrant, child in enumerate(self.tree.children[node]):
            (a, b), (c, d) = self.node_ranges(child)
            if a < b and c < d:
                out.append((quadrant, int(child)))
        return out

    # -- persistence -------------------------------------------------------------------------------
    def to_json(self):
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "collective": self.collective,
            "axes": {"comm_sizes": self.comm_sizes.tolist(), "msg_sizes": self.msg_sizes.tolist()},
            "methods": [m.to_json() for m in self.methods],
            "padding": {"mode": self.pad_mode, "row_map": self.row_map.tolist(), "col_map": self.col_map.tolist()},
            "constraints": {"max_depth": self.max_depth, "accuracy_threshold": self.accuracy_threshold,
                            "leaf_rule": self.leaf_rule},
            "tree": self.tree.to_json(),
            "stats": self.tree.stats(),
            "provenance": self.provenance,
        }

    def dumps(self):
        return json.dumps(self.to_json(), indent=1) + "\n"

    @classmethod
    def from_json(cls, data, path="<tree>"):
        try:
            if data.get("format") != FORMAT_NAME:
                raise ValueError(f"not a quadsel tree file (format is {data.get('format')!r})")
            if data.get("version") != FORMAT_VERSION:
                raise ValueError(f"unsupported tree file version {data.get('version')!r} (this quadsel reads {FORMAT_VERSION})")
            fn = cls(
                collective=str(data["collective"]),
                comm_sizes=np.asarray(data["axes"]["comm_sizes"], dtype=np.int64),
                msg_sizes=np.asarray(data["axes"]["msg_sizes"], dtype=np.int64),
                methods=[Method(str(m["algorithm"]), int(m["segsize"])) for m in data["methods"]],
                pad_mode=str(data["padding"]["mode"]),
                row_map=np.asarray(data["padding"]["row_map"], dtype=np.int64),
                col_map=np.asarray(data["padding"]["col_map"], dtype=np.int64),
                tree=Quadtree.from_json(data["tree"]),
                max_depth=data["constraints"]["max_depth"],
                accuracy_threshold=float(data["constraints"]["accuracy_threshold"]),
                provenance=data.get("provenance", {}),
                leaf_rule=str(data["constraints"].get("leaf_rule", "majority")),
            )
            fn.validate()
            return fn
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            detail = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
            raise InputError(path, None, f"invalid quadsel tree file: {detail}") from None

    def validate(self):
        t, side = self.tree, len(self.row_map)
        if len(self.col_map) != side or side != t.size[0]:
            raise ValueError("padding maps do not match the tree's size")
        if np.any(np.diff(self.comm_sizes) <= 0) or np.any(np.diff(self.msg_sizes) <= 0):
            raise ValueError("axes must be strictly increasing")
        if np.any(np.diff(self.row_map) < 0) or np.any(np.diff(self.col_map) < 0):
            raise ValueError("padding maps must be non-decreasing")
        if set(self.row_map.tolist()) != set(range(len(self.comm_sizes))) or set(self.col_map.tolist()) != set(range(len(self.msg_sizes))):
            raise ValueError("padding maps must cover every axis value")
        internal = t.children[:, 0] != LEAF
        if np.any(t.children[internal] <= np.arange(t.n_nodes)[internal, None]) or np.any(t.children >= t.n_nodes):
            raise ValueError("tree children must point forward to existing nodes")
        if self.leaf_rule not in LEAF_RULES:
            raise ValueError(f"unknown leaf rule {self.leaf_rule!r}")
        if np.any((t.method < 0) | (t.method >= len(self.methods))):
            raise ValueError("tree refers to a method that is not in the method table")

    def save(self, path):
        from ..output import write_text
        write_text(path, self.dumps())

    @classmethod
    def load(cls, path):
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except OSError as exc:
            raise InputError(path, None, f"cannot read: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise InputError(path, exc.lineno, f"not valid JSON: {exc.msg}") from None
        if not isinstance(data, dict):
            raise InputError(path, None, "invalid quadsel tree file: top level is not an object")
        return cls.from_json(data, path)


def relative_penalty(dmap: DecisionMap):
    """(C, M, K) relative penalty of every method at every point: T[k] / T[best] - 1 (NaN where unknown)."""
    return dmap.cost_filled / dmap.best_cost()[:, :, None] - 1.0


def build_decision_function(dmap: DecisionMap, max_depth=None, accuracy_threshold=1.0, pad_mode="spread",
                            provenance=None, leaf_rule="majority"):
    """Pad the decision map (§3), build the constrained quadtree (§3.1), wrap it with its query rule."""
    side = padded_size(*dmap.shape)
    row_map = pad_index(dmap.shape[0], side, pad_mode)
    col_map = pad_index(dmap.shape[1], side, pad_mode)
    penalty = relative_penalty(dmap)[np.ix_(row_map, col_map)]
    penalty[pad(dmap.filled, row_map, col_map)] = np.nan        # filled points are never scored, nor weighed
    # each measured point weighs 1 in total, however many padded copies it has
    weight = np.outer(1.0 / np.bincount(row_map)[row_map], 1.0 / np.bincount(col_map)[col_map])
    tree = build_quadtree(pad(dmap.best, row_map, col_map), max_depth=max_depth,
                          accuracy_threshold=accuracy_threshold, penalty=penalty, leaf_rule=leaf_rule, weight=weight)
    info = {"quadsel_version": __version__,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "sources": list(dmap.sources),
            "filled_points": int(dmap.filled.sum())}
    info.update(provenance or {})
    return DecisionFunction(dmap.collective, dmap.comm_sizes, dmap.msg_sizes, list(dmap.methods), pad_mode,
                            row_map, col_map, tree, max_depth, float(accuracy_threshold), info, leaf_rule)
