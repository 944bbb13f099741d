"""The rule list: a small language-neutral form of a decision function that every rules-file emitter reads.

In the manner of m2cgen's one IR and many emitters: the quadtree is flattened once into, per communicator
cell of its grid (a measured size, or with the between rule the interval after it), the message-size lower
bounds at which the chosen method changes. It answers every query as DecisionFunction.query does
(quadsel/decision/decision_function.py), §3.2:

  - comm size   -> the comm rule with the largest `comm_size` <= it (below the first: the first);
  - message size -> in that comm rule, the msg rule with the largest `msg_size` <= it.

The first message rule of every comm rule starts at 0 (boundary expansion below the smallest measured
message, and what Open MPI's classic rules file demands). Consecutive equal methods are merged, and so
are consecutive communicator sizes whose rules are identical.
"""

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import numpy as np

from .. import __version__
from ..decision.decision_map import Method
from ..errors import QuadselError
from ..libraries import get as get_library, sizes
from .escape import comment_text


@dataclass(frozen=True)
class MsgRule:
    msg_size: int        # lower bound in bytes; the rule holds up to the next rule's msg_size - 1
    method: Method


@dataclass(frozen=True)
class CommRule:
    comm_size: int       # lower bound; the rule holds up to the next rule's comm_size - 1
    msg_rules: Tuple[MsgRule, ...]

    def lookup(self, msg_size):
        chosen = self.msg_rules[0]
        for rule in self.msg_rules:
            if rule.msg_size <= msg_size:
                chosen = rule
        return chosen.method


@dataclass
class RuleList:
    collective: str
    comm_rules: List[CommRule]
    constraint: str = "exact"
    sources: List[str] = field(default_factory=list)
    measured: Tuple[int, int, int, int] = (0, 0, 0, 0)    # smallest/largest measured comm size, message size
    outside: str = "extrapolate"      # "default": the rules hand sizes outside `measured` back to the library
    units: str = "bytes per rank"   # what msg_size counts: the decision map's, or a library's key (library_rule_list)
    notes: List[str] = field(default_factory=list)        # what a conversion to a library's key could not keep
    outside_sides: Optional[list] = None    # outside="default": the sides handed back (None: all; issue 39)
    outside_words: Optional[str] = None     # where, when some sides or beyond a bound (library_default.handed_words)

    def lookup(self, comm_size, msg_size):
        """Method for any communicator and message size (the floor rule of the decision function)."""
        chosen = self.comm_rules[0]
        for rule in self.comm_rules:
            if rule.comm_size <= comm_size:
                chosen = rule
        return chosen.lookup(msg_size)

    @property
    def methods(self):
        """Every method some rule uses, in first-use order."""
        return list(dict.fromkeys(r.method for c in self.comm_rules for r in c.msg_rules))

    def ranges(self):
        """[(comm_lo, comm_hi or None, [(msg_lo, msg_hi or None, method)])]: inclusive ranges, None = no upper end.

        The form of range-based formats (Open MPI JSON rules, MPICH csel): the first comm range
        starts at 1, the last ones are open.
        """
        out = []
        for i, comm in enumerate(self.comm_rules):
            lo = 1 if i == 0 else comm.comm_size
            hi = self.comm_rules[i + 1].comm_size - 1 if i + 1 < len(self.comm_rules) else None
            msgs = []
            for j, rule in enumerate(comm.msg_rules):
                m_hi = comm.msg_rules[j + 1].msg_size - 1 if j + 1 < len(comm.msg_rules) else None
                msgs.append((rule.msg_size, m_hi, rule.method))
            out.append((lo, hi, msgs))
        return out


def msg_rules_of_row(fn, painted, row, same=None):
    """Merged message rules of one communicator cell: lower bounds (the cells' first sizes), the first one 0.
    `same`: per method index the first index of an equal method (same_methods), when the caller has it."""
    same = same_methods(fn.methods) if same is None else same
    methods = painted[row]
    first = np.flatnonzero(np.r_[True, same[methods[1:]] != same[methods[:-1]]])   # consecutive equal: one rule
    return tuple(MsgRule(0 if i == 0 else int(fn.msg_axis.lo[cell]), fn.methods[methods[cell]])
                 for i, cell in enumerate(first.tolist()))


def same_methods(methods):
    """Per method index the first index of an equal method (a table may name one method twice)."""
    first = {}
    return np.array([first.setdefault(method, k) for k, method in enumerate(methods)], dtype=np.int64)


def build_rule_list(fn, merge_comm_sizes=True):
    """The RuleList of a DecisionFunction: one comm rule per communicator cell (merged when identical).

    The first comm rule's key is the smallest measured communicator size (the libraries read a size below
    the first key with the first rule); every other key is its cell's first size.
    """
    from ..decision.library_default import handed_words
    painted, comm_rules, same = fn.cell_methods(), [], same_methods(fn.methods)
    below = fn.comm_axis.below          # outside=default: row 0 holds the comm sizes below the measured ones
    for row in range(len(fn.comm_axis)):
        if below and row == 0 and int(fn.comm_sizes[0]) <= 1:
            continue   # no communicator has fewer than 1 rank
        msg_rules = msg_rules_of_row(fn, painted, row, same)
        if merge_comm_sizes and comm_rules and comm_rules[-1].msg_rules == msg_rules:
            continue   # the floor rule already gives this comm size the previous size's rules
        key = (1 if below else int(fn.comm_sizes[0])) if not comm_rules else int(fn.comm_axis.lo[row])
        comm_rules.append(CommRule(key, msg_rules))
    measured = (int(fn.comm_sizes[0]), int(fn.comm_sizes[-1]), int(fn.msg_sizes[0]), int(fn.msg_sizes[-1]))
    return RuleList(fn.collective, comm_rules, fn.constraint, list(fn.provenance.get("sources", [])), measured,
                    fn.options.outside, outside_sides=fn.options.outside_sides, outside_words=handed_words(fn))


def library_rule_list(fn, library):
    """The RuleList of fn with message keys in what `library` matches on (libraries/sizes.py).

    RANK: the decision map's own keys. COMM (key = bytes per rank x comm size): one comm rule per communicator
    size of the measured range, each scaled by its own size -- exact at every size in the range; beyond
    EXPAND_MAX sizes one per cell, scaled by its first size (exact at the measured sizes). NONE: one rule per communicator cell,
    the method the tree picks at the most measured message sizes (a note says where that loses a choice).
    """
    kind = sizes.written_form(library, fn.collective)
    if kind == sizes.RANK:
        return build_rule_list(fn)
    rl = build_rule_list(fn, merge_comm_sizes=False)
    computed = sizes.key(library, fn.collective).computed
    if kind == sizes.COMM:
        comms = _per_comm_size(rl, library, fn.collective)
        comms = _within_key_max(comms, library, fn.collective, rl.notes)
    else:
        painted, columns = fn.cell_methods(), fn.msg_axis.measured_cells()
        comms, lost = [], []
        for row, comm in enumerate(rl.comm_rules):
            chosen = painted[row, columns].tolist()
            best = max(dict.fromkeys(chosen), key=chosen.count)      # ties: the first in message order
            comms.append(CommRule(comm.comm_size, (MsgRule(0, fn.methods[best]),)))
            if len(set(chosen)) > 1:
                lost.append(comm.comm_size)
        if lost:
            if (library, fn.collective) in sizes.ROOT_ONLY:
                computed += ", which the other ranks compute as 0"
            rl.notes.append(f"{fn.collective}: {sizes.TITLES[library]} matches it on {computed}, so the choice cannot "
                            f"change with the message size: at comm sizes {', '.join(map(str, lost[:8]))}"
                            f"{' ...' if len(lost) > 8 else ''} the method the tree picks at most measured message "
                            f"sizes is written")
    merged = [c for i, c in enumerate(comms) if i == 0 or c.msg_rules != comms[i - 1].msg_rules]
    rl.comm_rules, rl.units = merged, computed
    return rl


EXPAND_MAX = 4096    # comm rules a xp collective gets at most (one per comm size of the measured range)


def _per_comm_size(rl, library, collective):
    """CommRules scaled by their own communicator size (form COMM), one per size of the measured range when
    it has at most EXPAND_MAX sizes; outside the range (and beyond the cap, between cells' first sizes) the
    nearest key's factor applies."""
    lo, hi = rl.measured[0], rl.measured[1]
    expand = hi - lo + 1 <= EXPAND_MAX
    out = []
    for i, comm in enumerate(rl.comm_rules):
        last = rl.comm_rules[i + 1].comm_size - 1 if i + 1 < len(rl.comm_rules) else comm.comm_size
        top = min(last, hi) if expand else comm.comm_size
        for size in range(comm.comm_size, max(top, comm.comm_size) + 1):   # a rule above the range keeps its own
            out.append(CommRule(size, tuple(MsgRule(sizes.lower_bound(library, collective, r.msg_size, size), r.method)
                                            for r in comm.msg_rules)))
    return out


def _within_key_max(comms, library, collective, notes):
    """The comm rules without the message rules whose key is beyond what `library` reads (sizes.KEY_MAX: Open MPI
    reads a key as a C long). Such a key is a total over the ranks (per rank x comm size) that no call reaches
    (its buffers would hold more than 8 EiB), so leaving the rule out changes no call: every key up to the
    maximum still gets the tree's method. A note says where (docs/formats-output.md, "Total-size keys")."""
    top = sizes.KEY_MAX.get(library)
    if top is None:
        return comms
    out, cut = [], []
    for comm in comms:
        kept = tuple(r for r in comm.msg_rules if r.msg_size <= top)
        if len(kept) < len(comm.msg_rules):
            cut.append(comm.comm_size)
        out.append(comm if len(kept) == len(comm.msg_rules) else CommRule(comm.comm_size, kept))
    if cut:
        notes.append(f"{collective}: message keys beyond {top} ({sizes.TITLES[library]} reads a key as a C long; "
                     f"no call's total size reaches it) are left out at comm sizes {', '.join(map(str, cut[:8]))}"
                     f"{' ...' if len(cut) > 8 else ''}")
    return out


def rule_lists(fns, library=None):
    """One RuleList per tree (one tree per collective); with a `library`, keys in what it matches on."""
    lists, seen = [], set()
    for fn in fns:
        if fn.collective in seen:
            raise QuadselError(f"two trees for collective {comment_text(fn.collective)!r}: give one tree per collective")
        seen.add(fn.collective)
        lists.append(library_rule_list(fn, library) if library else build_rule_list(fn))
    return lists


def header_lines(rule_lists, library):
    """The comment lines at the top of a rules file for `library` (openmpi, intelmpi, mpich)."""
    lines = [f"generated by quadsel {__version__} from quadtree decision functions (each key a lower bound)"]
    for rl in rule_lists:
        sources = ", ".join(comment_text(s) for s in rl.sources) or "unknown"
        lines.append(f"{comment_text(rl.collective)}: {comment_text(rl.constraint)} tree; sources: {sources}")
        c0, c1, m0, m1 = rl.measured
        outside = (f"the library decides: {get_library(library).own_selection}" if rl.outside == "default"
                   else "the nearest measured size's rules apply (extrapolated)")
        if rl.outside_words:
            outside += f" {rl.outside_words}, the nearest measured size's rules elsewhere (extrapolated)"
        lines.append(f"{comment_text(rl.collective)}: measured comm sizes {c0}-{c1}, message sizes {m0}-{m1} bytes per "
                     f"rank; outside them {outside}")
        if rl.units != "bytes per rank":
            lines.append(f"{comment_text(rl.collective)}: message keys are {rl.units} (docs/collectives.md)")
        lines.extend(comment_text(note) for note in rl.notes)
    return lines


def inside_rule_list(fn, library):
    """The RuleList of fn over its measured range only: every region outside it (which a tree built with
    outside=default hands back to the library default) gets the rules of its nearest measured cells.

    For the libraries whose files cannot name their own default (Intel MPI: I_MPI_ADJUST preset 0 and the JSON
    tuning file's presets are Intel's basic logic, not its tuned default); a note says where that changes the
    tree's answer. Keys are bytes per rank, which is `library`'s key for the collectives its files take
    (sizes.RANK; others are refused by sizes.key)."""
    sizes.key(library, fn.collective)                      # QuadselError for a collective without a size key
    if sizes.written_form(library, fn.collective) != sizes.RANK:
        raise QuadselError(f"{fn.collective}: {sizes.TITLES[library]} does not match it on bytes per rank")
    painted, same = fn.cell_methods(), same_methods(fn.methods)
    ca, ma = fn.comm_axis, fn.msg_axis
    inside = lambda axis: [i for i in range(len(axis)) if axis.left[i] >= 0 and axis.right[i] >= 0]  # noqa: E731
    rows, cols = inside(ca), np.asarray(inside(ma), dtype=np.int64)
    comm_rules = []
    for row in rows:
        methods = painted[row, cols]
        first = np.flatnonzero(np.r_[True, same[methods[1:]] != same[methods[:-1]]])
        msg_rules = tuple(MsgRule(0 if k == 0 else int(ma.lo[cols[c]]), fn.methods[methods[c]])
                          for k, c in enumerate(first.tolist()))
        if comm_rules and comm_rules[-1].msg_rules == msg_rules:
            continue
        comm_rules.append(CommRule(int(fn.comm_sizes[0]) if not comm_rules else int(ca.lo[row]), msg_rules))
    measured = (int(fn.comm_sizes[0]), int(fn.comm_sizes[-1]), int(fn.msg_sizes[0]), int(fn.msg_sizes[-1]))
    rl = RuleList(fn.collective, comm_rules, fn.constraint, list(fn.provenance.get("sources", [])), measured)
    if fn.options.outside == "default":
        rl.notes.append(f"{fn.collective}: the tree hands the sizes outside its measured range (comm sizes "
                        f"{measured[0]}-{measured[1]}, message sizes {measured[2]}-{measured[3]} B) back to the library "
                        f"default, which {sizes.TITLES[library]}'s files cannot name: the nearest measured size's rules "
                        "are written there (extrapolated)")
    return rl
