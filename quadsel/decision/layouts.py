"""The layout axis (issue 30): one 2-D tree per ranks per node, the MPICH csel way (docs/methodology.md, "The layout
axis").

The same communicator size comes in many layouts (64 ranks as 64 nodes x 1, 8 x 8 or 1 x 64), and switch points
move with them. Measurements of different layouts are never pooled: the rows are grouped by ranks per node (ppn),
and for each measured ppn the existing 2-D tree over (comm size = nodes x ppn, message size) is built with the
same builder settings (the caller's `build_one`, i.e. build_decision_function). Adjacent groups whose trees
decide identically everywhere are merged.

Query rule, the one Python, the C and every rules file follow: the first member whose ppn bound is >= the
query's ppn (MPICH's `comm_avg_ppn<=P`), else the last member; then that member's 2-D query rule. A query given
nodes instead of ppn takes ppn = ceil(comm size / nodes), the smallest P with comm size <= P x nodes (what
MPICH's csel tests, src/mpi/coll/src/csel.c).
"""

from dataclasses import dataclass, field
from typing import List

import numpy as np

from ..errors import QuadselError
from ..ingest.layout import layout_groups  # noqa: F401 (the forest's groups: one per ppn)

# Rules for a ppn between or beyond the measured ones: "ceiling" is the deployed one (MPICH's comm_avg_ppn<=P);
# the others are the alternatives benchmarks/layouts.py compares it with on held-out layouts.
UNSEEN_PPN_RULES = ("ceiling", "lower", "nearest")


def group_table(rows, table):
    """The rows of one group as an ingest Table carrying `table`'s library, notes and replaced points."""
    from ..ingest import Table
    out = Table(rows, (), getattr(table, "library", None), aggregated=getattr(table, "aggregated", False))
    out.replaced = list(getattr(table, "replaced", ()))
    return out


@dataclass
class LayoutMember:
    ppn: int                    # the bound: this member answers queries with previous bound < ppn <= this
    measured_ppn: List[int]     # the measured ppn it was built from (several when identical neighbours merged)
    nodes: List[int]            # the measured node counts
    fn: object                  # its DecisionFunction over (comm size, message size)

    @property
    def leaves(self):
        return int(self.fn.stats()["leaves"])


@dataclass
class LayoutForest:
    collective: str
    members: List[LayoutMember]
    provenance: dict = field(default_factory=dict)

    @property
    def bounds(self):
        return np.array([m.ppn for m in self.members], dtype=np.int64)

    def member_of(self, ppn, rule="ceiling"):
        """Member index of every ppn (array): the deployed `ceiling` rule, or an alternative (UNSEEN_PPN_RULES)."""
        return member_index(self.bounds, ppn, rule)

    def query(self, ppn, comm_size, msg_size, rule="ceiling"):
        """The Method chosen for one call."""
        fn = self.members[int(self.member_of(np.array([ppn]), rule)[0])].fn
        return fn.query(comm_size, msg_size)

    def choices(self, ppn, comm_sizes, msg_sizes, rule="ceiling"):
        """The Method chosen for equally long arrays of ppn, comm and msg sizes (a list)."""
        ppn, comm_sizes, msg_sizes = (np.asarray(a) for a in (ppn, comm_sizes, msg_sizes))
        which = self.member_of(ppn, rule)
        out = [None] * len(ppn)
        for k in np.unique(which).tolist():
            at = np.flatnonzero(which == k)
            fn = self.members[k].fn
            for i, index in zip(at.tolist(), fn.choices(comm_sizes[at], msg_sizes[at]).tolist()):
                out[i] = fn.methods[index]
        return out

    def stats(self):
        """Per member and in all: the total leaves are the sum of the members' (one number wherever printed)."""
        per = [{"ppn": m.ppn, "measured_ppn": list(m.measured_ppn), "leaves": m.leaves,
                "nodes": int(m.fn.stats()["nodes"])} for m in self.members]
        return {"members": len(per), "leaves": sum(p["leaves"] for p in per),
                "nodes": sum(p["nodes"] for p in per), "per_layout": per}

    def leaf_line(self):
        """`ppn<=1: 5, ppn<=4: 7, any: 3 leaves (15 in all)`: what build prints."""
        each = ", ".join(f"{member_label(self.members, i)}: {m.leaves}" for i, m in enumerate(self.members))
        return f"{each} leaves ({self.stats()['leaves']} in all)"


def member_label(members, i):
    """`ppn<=4` for a member, `ppn>4` for the last one (it takes every larger ppn), `any ppn` for a single one."""
    if i + 1 < len(members):
        return f"ppn<={members[i].ppn}"
    return f"ppn>{members[i - 1].ppn}" if i else "any ppn"


def member_index(bounds, ppn, rule="ceiling"):
    """Member of every ppn given the members' ppn bounds (increasing). ceiling: the first bound >= ppn, else the
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


def build_forest(groups, collective, build_one, table=None, provenance=None):
    """The LayoutForest of {ppn: rows}: per ppn its decision map and `build_one(dmap)` (the 2-D build with the
    caller's settings), adjacent members that decide identically merged. Returns (forest, {ppn: dmap})."""
    from .decision_map import build_decision_map
    members, maps = [], {}
    for ppn, rows in groups.items():
        dmap = build_decision_map(group_table(rows, table), collective)
        maps[ppn] = dmap
        nodes = sorted({m.nodes for m in rows if not m.is_default and m.comm_size in set(dmap.comm_sizes.tolist())})
        members.append(LayoutMember(ppn, [ppn], nodes, build_one(dmap)))
    collective = next(iter(maps.values())).collective
    return LayoutForest(collective, merge_identical(members), dict(provenance or {})), maps


def merge_identical(members):
    """Adjacent members whose trees decide identically at every size are one member (the higher ppn bound, the
    lower member's tree: the same answers)."""
    out = []
    for member in members:
        if out and same_decisions(out[-1].fn, member.fn):
            prev = out[-1]
            out[-1] = LayoutMember(member.ppn, prev.measured_ppn + member.measured_ppn,
                                   sorted(set(prev.nodes) | set(member.nodes)), prev.fn)
        else:
            out.append(member)
    return out


def same_decisions(a, b):
    """Do two 2-D decision functions answer every (comm, msg) query alike? Each is constant on its cells, so it is
    enough to compare them at every cell start of either (the common refinement of their cells)."""
    comm = np.union1d(a.comm_axis.lo, b.comm_axis.lo)
    msg = np.union1d(a.msg_axis.lo, b.msg_axis.lo)
    cc, mm = (x.ravel() for x in np.meshgrid(comm, msg, indexing="ij"))
    pairs = set(zip(a.choices(cc, mm).tolist(), b.choices(cc, mm).tolist()))
    return all(a.methods[i] == b.methods[j] for i, j in pairs)


def query_ppn(comm_size, ppn=None, nodes=None):
    """The ppn of a query given --ppn or --nodes (ceil(comm / nodes): MPICH's comm_size <= P x nodes)."""
    if (ppn is None) == (nodes is None):
        raise QuadselError("a layout forest needs the layout of the query: give --ppn P or --nodes N")
    if ppn is not None:
        return int(ppn)
    return -(-int(comm_size) // int(nodes))
