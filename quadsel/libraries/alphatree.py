"""The α-tree and multilevel α-tree broadcast (Jakimovski & Gusev, after Bernaschi & Iannello): quadsel's own
bcast algorithms, which no MPI library ships. Free of MPI: the method names, the ids the generated C returns,
and the tree itself (who sends to whom, in which order). `libraries/alpha_bcast.py` runs it on point-to-point MPI.

The α-tree over s ranks (the first is its root): the root hands the last k = max(1, ⌊α·s⌋) ranks to the first
of them, who becomes the root of an α-tree over those k, and goes on with the s − k ranks left, until it is
alone. α = 0 is the flat tree (the root sends to everyone, last rank first); α = 0.5 halves every range, the
binomial tree (for a power-of-two size, edge for edge MPICH's binomial; docs/alpha-tree.md).

The multilevel α-tree has one α per level of the machine's hierarchy, outermost first: with L values, ranks
are grouped by the first L − 1 levels (node, then socket); at each level an α-tree spans the groups' leaders
(the root leads its own groups, the first rank leads the others), and the last α spans the ranks of a group
of the finest level. A rank sends to its children of the outer levels first.

Method names: `alpha-0.25` (one level: the whole communicator, topology unaware), `alpha-0.10-0.35` (two
levels: across nodes, within a node), `alpha-0.00-0.50-0.25` (three: nodes, sockets, within a socket).
α is in hundredths (the paper's resolution), 0 ≤ α ≤ 0.5.
"""

import math
import re
from typing import List, NamedTuple, Optional, Sequence, Tuple

from ..errors import QuadselError

PREFIX = "alpha-"
MAX_LEVELS = 3
MAX_PERCENT = 50
# The ids the generated C returns for an α-tree method: above every library's own algorithm ids (< 1000).
ID_BASE = {1: 1000, 2: 100000, 3: 10000000}
_LABEL = re.compile(r"^alpha-([0-9]*\.?[0-9]+)(?:-([0-9]*\.?[0-9]+))?(?:-([0-9]*\.?[0-9]+))?$")


def percent(alpha):
    """α (a number or its text) -> hundredths, 0..50; anything else is a QuadselError."""
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        raise QuadselError(f"α {alpha!r} is not a number") from None
    if not math.isfinite(value):      # nan, inf: round() would raise
        raise QuadselError(f"α {str(alpha)[:40]!r} is not a finite number (α is 0 to 0.5, in steps of 0.01)")
    hundredths = round(value * 100)
    if not 0 <= value <= MAX_PERCENT / 100 or abs(value * 100 - hundredths) > 1e-6:
        raise QuadselError(f"α {alpha!r} must lie in [0, 0.5] in steps of 0.01")
    return int(hundredths)


def label(percents: Sequence[int]) -> str:
    """The method name of an α-tree with these α (hundredths, outermost level first): `alpha-0.10-0.35`."""
    if not 1 <= len(percents) <= MAX_LEVELS:
        raise QuadselError(f"an α-tree has 1 to {MAX_LEVELS} levels, not {len(percents)}")
    return PREFIX + "-".join(f"{p / 100:.2f}" for p in percents)


def parse(name) -> Optional[Tuple[int, ...]]:
    """The α (hundredths) of an α-tree method name, or None when `name` is no α-tree name."""
    match = _LABEL.match(str(name).strip().lower())
    if not match:
        return None
    try:
        return tuple(percent(g) for g in match.groups() if g is not None)
    except QuadselError:
        return None


def is_alpha(name) -> bool:
    return parse(name) is not None


def canonical(name) -> Optional[str]:
    """`alpha-.1-0.35` -> `alpha-0.10-0.35`; None for other names."""
    percents = parse(name)
    return None if percents is None else label(percents)


def describe(name) -> str:
    percents = parse(name)
    where = {1: "one level", 2: "levels node, within node", 3: "levels node, socket, within socket"}[len(percents)]
    return f"quadsel alpha-tree bcast ({where}): alpha " + ", ".join(f"{p / 100:.2f}" for p in percents)


def method_id(percents: Sequence[int]) -> int:
    """The int the C decision function returns for this α-tree (docs/alpha-tree.md, "The C function"):
    one level 1000 + p; two levels 100000 + 100·p1 + p2; three 10000000 + 10000·p1 + 100·p2 + p3
    (p = α in hundredths, outermost level first)."""
    number = ID_BASE[len(percents)]
    for i, p in enumerate(percents):
        number += p * 100 ** (len(percents) - 1 - i)
    return number


def percents_of_id(number: int) -> Optional[Tuple[int, ...]]:
    """The inverse of method_id (None for a library's own id)."""
    levels = 3 if number >= ID_BASE[3] else 2 if number >= ID_BASE[2] else 1 if number >= ID_BASE[1] else 0
    if not levels:
        return None
    digits = tuple((number // 100 ** (levels - 1 - i)) % 100 for i in range(levels))
    return digits if method_id(digits) == number and max(digits) <= MAX_PERCENT else None


# What the generated C defines when a tree returns α-tree ids (the mapping above, decoded).
C_MACROS = (
    "#define QUADSEL_IS_ALPHA_TREE(id) ((id) >= 1000)",
    "#define QUADSEL_ALPHA_LEVELS(id) ((id) >= 10000000 ? 3 : (id) >= 100000 ? 2 : 1)",
    "#define QUADSEL_ALPHA_PERCENT(id, level) ((int)(((id) / ((QUADSEL_ALPHA_LEVELS(id) - 1 - (level)) == 2 ? "
    "10000 : (QUADSEL_ALPHA_LEVELS(id) - 1 - (level)) == 1 ? 100 : 1)) % 100))",
)


# -- the tree ----------------------------------------------------------------------------------------
class Schedule(NamedTuple):
    """Who sends to whom: parent[r] (None for the root) and children[r] in the order r sends to them."""
    parent: List[Optional[int]]
    children: List[List[int]]

    def sends(self):
        return [len(c) for c in self.children]

    def edges(self):
        return [(r, c) for r, kids in enumerate(self.children) for c in kids]


def alpha_edges(members: Sequence[int], pct: int):
    """(sender, receiver) pairs of the α-tree over `members` (members[0] the root), each sender's in order."""
    edges, ranges = [], [(0, len(members))]
    while ranges:
        lo, hi = ranges.pop()
        while hi - lo > 1:
            k = max(1, (pct * (hi - lo)) // 100)
            child = hi - k
            edges.append((members[lo], members[child]))
            ranges.append((child, hi))
            hi = child
    return edges


def schedule(size: int, root: int, percents: Sequence[int], keys: Optional[Sequence[Sequence]] = None) -> Schedule:
    """The multilevel α-tree on ranks 0..size-1 rooted at `root`.

    keys[r] holds rank r's group at each of the len(percents) - 1 outer levels (e.g. (node, socket)); one α
    needs no keys. Ranks are taken from the root on, cyclically (root, root+1, ..., root-1), as the libraries'
    trees do; a group's leader is the root if it is in it, else its first rank in that order.
    """
    if not 0 <= root < size:
        raise QuadselError(f"root {root} outside a communicator of {size}")
    levels = len(percents)
    if keys is None:
        keys = [()] * size
    if len(keys) != size or any(len(k) < levels - 1 for k in keys):
        raise QuadselError(f"{levels} α levels need {levels - 1} group key(s) for each of the {size} ranks")
    parent: List[Optional[int]] = [None] * size
    children: List[List[int]] = [[] for _ in range(size)]

    def span(members, level):
        if level == levels - 1:
            edges = alpha_edges(members, percents[level])
        else:
            groups = {}
            for r in members:     # insertion order: the root's group first, members' order inside
                groups.setdefault(keys[r][level], []).append(r)
            edges = alpha_edges([g[0] for g in groups.values()], percents[level])
        for sender, receiver in edges:
            parent[receiver] = sender
            children[sender].append(receiver)
        if level < levels - 1:
            for g in groups.values():
                span(g, level + 1)

    span([(root + i) % size for i in range(size)], 0)
    return Schedule(parent, children)
