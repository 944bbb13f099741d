"""The spanning trees the libraries' tree-shaped collective algorithms use, as a parent array.

Written from the descriptions of Open MPI's ompi/mca/coll/base/coll_base_topo.c (5.0.x and main) and of the
coll_base_bcast.c / coll_base_reduce.c functions that build them (which builder each algorithm calls, with the
fan-out and radix coll/tuned passes when an algorithm is forced), and of MPICH's binomial bcast/reduce.
`quadsel trace` groups ranks by their place in these trees (depth, subtree); nothing here talks to MPI.

A tree is `parents`: parents[r] is the rank r receives from (bcast) or sends its partial result to
(reduce), -1 for the root. `Shape` adds which way the data flows: "down" (root to leaves: a rank depends
on its ancestors), "up" (leaves to root: a rank depends on its subtree).
"""

from dataclasses import dataclass
from typing import List, Optional

from .openmpi import DEFAULT_CHAIN_FANOUT

KNOMIAL_RADIX = 4        # coll_tuned_bcast_algorithm_knomial_radix default
TREE_FANOUT = 2          # COLL_BASE_UPDATE_BINTREE builds build_tree(2, ...)


@dataclass(frozen=True)
class Shape:
    name: str               # e.g. "binomial (bmtree)"
    parents: List[int]
    flow: str               # "down" or "up"
    note: str = ""          # what the tree leaves out (a final exchange, a move to the root)

    @property
    def root(self):
        return self.parents.index(-1)


def _shift(vparents, root):
    """Parent array over real ranks from one over virtual ranks (vrank = rank - root mod size)."""
    size = len(vparents)
    parents = [-1] * size
    for v, p in enumerate(vparents):
        parents[(v + root) % size] = -1 if p < 0 else (p + root) % size
    return parents


def bmtree(size, root=0):
    """ompi_coll_base_topo_build_bmtree: a rank's parent is its virtual rank with the highest set bit
    cleared, so the root's children are 1, 2, 4, … and 1's are 3, 5, …"""
    return _shift([-1] + [v ^ (1 << (v.bit_length() - 1)) for v in range(1, size)], root)


def in_order_bmtree(size, root=0):
    """ompi_coll_base_topo_build_in_order_bmtree (reduce binomial) and MPICH's binomial: the parent is the
    virtual rank with the lowest set bit cleared (0's children 1, 2, 4; 2's child 3; 4's 5, 6)."""
    return _shift([-1] + [v & (v - 1) for v in range(1, size)], root)


def kary_tree(size, fanout=TREE_FANOUT, root=0):
    """ompi_coll_base_topo_build_tree: virtual ranks by levels of fanout**level nodes; a node at level l
    has children v + fanout**l * (i + 1), i < fanout (breadth-first numbering, level by level)."""
    vparents = [-1] * size
    level_start, width = 0, 1          # first vrank of the level, fanout**level
    while level_start < size:
        for v in range(level_start, min(size, level_start + width)):
            for i in range(fanout):
                child = v + width * (i + 1)
                if child >= size:
                    break
                vparents[child] = v
        level_start += width
        width *= fanout
    return _shift(vparents, root)


def kmtree(size, radix=KNOMIAL_RADIX, root=0):
    """ompi_coll_base_topo_build_kmtree: the parent of v is v rounded down to a multiple of radix*mask,
    for the smallest power mask of the radix where v is not already such a multiple."""
    vparents = [-1] * size
    for v in range(1, size):
        mask = 1
        while v % (radix * mask) == 0:
            mask *= radix
        vparents[v] = v // (radix * mask) * (radix * mask)
    return _shift(vparents, root)


def chain(size, fanout=DEFAULT_CHAIN_FANOUT, root=0):
    """ompi_coll_base_topo_build_chain: the non-root virtual ranks 1..size-1 cut into `fanout` consecutive
    chains hanging off the root, the first (size-1) mod fanout of them one longer. fanout 1 = pipeline."""
    fanout = max(1, min(fanout, size - 1)) if size > 1 else 1
    rest = size - 1
    vparents, start = [-1] * size, 1
    for c in range(fanout):
        length = rest // fanout + (1 if c < rest % fanout else 0)
        for k in range(length):
            vparents[start + k] = 0 if k == 0 else start + k - 1
        start += length
    return _shift(vparents, root)


def in_order_bintree(size):
    """ompi_coll_base_topo_build_in_order_bintree (reduce in-order binary): rooted at size-1; a subtree of
    n ranks whose root is its last rank has its right part (n >> 1 ranks) first, its left part next."""
    parents = [-1] * size

    def build(first, n, parent):
        top = first + n - 1
        parents[top] = parent
        right = n >> 1
        left = n - right - 1
        if right:
            build(first, right, top)
        if left:
            build(first + right, left, top)
    if size:
        build(0, size, -1)
    return parents


def flat(size, root=0):
    return _shift([-1] + [0] * (size - 1), root)


def openmpi_shape(collective, algorithm, size, root=0):
    """The tree coll/tuned's forced algorithm `algorithm` (id) builds, or None when it is not a tree
    (scatter-allgather, rabenseifner, recursive doubling, rings, the library default)."""
    try:
        alg = int(algorithm)
    except (TypeError, ValueError):
        return None
    if collective == "bcast":
        table = {1: ("linear (flat)", flat(size, root), ""),
                 2: (f"chain ({DEFAULT_CHAIN_FANOUT} chains)", chain(size, DEFAULT_CHAIN_FANOUT, root), ""),
                 3: ("pipeline (one chain)", chain(size, 1, root), ""),
                 4: ("split binary tree (binary tree)", kary_tree(size, 2, root),
                     "each half of the message goes down one subtree, then left and right swap halves"),
                 5: ("binary tree", kary_tree(size, 2, root), ""),
                 6: ("binomial (bmtree)", bmtree(size, root), ""),
                 7: (f"knomial (radix {KNOMIAL_RADIX})", kmtree(size, KNOMIAL_RADIX, root), "")}
        flow = "down"
    elif collective == "reduce":
        table = {1: ("linear (flat)", flat(size, root), ""),
                 2: (f"chain ({DEFAULT_CHAIN_FANOUT} chains)", chain(size, DEFAULT_CHAIN_FANOUT, root), ""),
                 3: ("pipeline (one chain)", chain(size, 1, root), ""),
                 4: ("binary tree", kary_tree(size, 2, root), ""),
                 5: ("binomial (in-order bmtree)", in_order_bmtree(size, root), ""),
                 6: ("in-order binary tree", in_order_bintree(size),
                     f"rooted at rank {size - 1}, which then sends the result to the root")}
        flow = "up"
    elif collective == "allreduce":
        table = {1: ("linear reduce + linear bcast (flat)", flat(size, 0),
                     "all send to rank 0, which sends the result back to all")}
        flow = "up"
    else:
        return None
    if alg not in table:
        return None
    name, parents, note = table[alg]
    return Shape(name, parents, flow, note)


def mpich_shape(collective, algorithm, size, root=0):
    """MPICH's binomial bcast and reduce (parent = lowest set bit of the relative rank cleared)."""
    if algorithm == "binomial" and collective in ("bcast", "reduce"):
        return Shape("binomial", in_order_bmtree(size, root), "down" if collective == "bcast" else "up")
    return None


def algorithm_shape(library, collective, algorithm, size, root=0) -> Optional[Shape]:
    if size < 1:
        return None
    if library == "openmpi":
        return openmpi_shape(collective, algorithm, size, root)
    if library == "mpich":
        return mpich_shape(collective, algorithm, size, root)
    return None


def depths(parents):
    """Depth of every rank (root 0); ValueError if `parents` is not one tree."""
    out = [None] * len(parents)
    for r in range(len(parents)):
        path, v = [], r
        while v != -1 and out[v] is None:
            if v in path or not -1 <= parents[v] < len(parents):
                raise ValueError(f"not a tree at rank {v}")
            path.append(v)
            v = parents[v]
        base = -1 if v == -1 else out[v]
        for k, node in enumerate(reversed(path)):
            out[node] = base + 1 + k
    if sum(1 for p in parents if p == -1) != 1:
        raise ValueError("a tree has exactly one root")
    return out


def children(parents):
    kids = [[] for _ in parents]
    for r, p in enumerate(parents):
        if p >= 0:
            kids[p].append(r)
    return kids


def subtree_of(parents):
    """For every rank the child of the root whose subtree holds it (the root: itself)."""
    out = []
    for r in range(len(parents)):
        v = r
        while parents[v] != -1 and parents[parents[v]] != -1:
            v = parents[v]
        out.append(v)
    return out


def descendants(parents):
    """The ranks below every rank (not itself)."""
    kids = children(parents)
    out = [None] * len(parents)

    def walk(v):
        if out[v] is None:
            below = []
            for c in kids[v]:
                below += [c] + walk(c)
            out[v] = below
        return out[v]
    depth = depths(parents)
    for r in sorted(range(len(parents)), key=lambda r: -depth[r]):   # deepest first: short recursion
        walk(r)
    return out


def ancestors(parents):
    out = []
    for r in range(len(parents)):
        chain_, v = [], parents[r]
        while v != -1:
            chain_.append(v)
            v = parents[v]
        out.append(chain_)
    return out
