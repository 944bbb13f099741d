"""The rules of a decision function with its layout level: what every rules-file writer prints.

`layout_rules(fn, library)` is the intermediate form the writers read (m2cgen's one IR, many emitters): one RuleList
(rule_list.py) per layer of the function, keyed by the layer's ppn bound (None: the function has no layout key),
so a writer prints the layout level the way its format says it, and never walks a function's layers itself.

A file whose key is the communicator size alone (Open MPI's rules files) takes the layers collapsed:
Open MPI's coll/tuned files (the classic file of 5.0.x, and the `any` entries of the JSON rules) and coll/han's
global level key on the communicator size only, so they cannot tell 8 ranks on 1 node from 8 nodes x 1. Such a
file takes, at each communicator size c, the forest's answer for ONE reference layout of c, the *packed* one:
nodes filled with P ranks, P the largest measured ppn (the forest's last bound), the way mpiexec's default
by-slot mapping and Slurm's block distribution place a job's ranks, which its first c ranks keep:

    reference ppn(c) = min(ceil(c / min_nodes), P)

min_nodes = 1 for a file every communicator reaches (one node when c <= P); min_nodes = 2 for the JSON `any`
entries, which only multi-node communicators with several ranks on a node reach (docs/formats-output.md,
"Layout forests in Open MPI's files"). The reference ppn does not decrease with c, so each member of the forest
answers one contiguous range of communicator sizes, spliced from that member's own rule list (so every key
conversion of the member, e.g. tuned's total size of the gather-type collectives, is kept per comm size).
"""

from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np

from .rule_list import CommRule, RuleList, build_rule_list, inside_rule_list, library_rule_list


@dataclass
class LayoutRules:
    """A decision function's rules: per layer (its ppn bound, or None without the layout key) its RuleList, keys in
    `library`'s units (None: bytes per rank); `inside`: over the measured range only (rule_list.inside_rule_list)."""
    fn: object
    library: Optional[str]
    layers: List[Tuple[Optional[int], RuleList]]

    @property
    def collective(self):
        return self.fn.collective

    @property
    def has_layout(self):
        return self.fn.has_layout

    def labels(self):
        """`ppn<=4`, ..., `ppn>4` per layer (decision_function.layer_label)."""
        return [self.fn.layer_label(i) for i in range(len(self.layers))]

    def collapsed(self, min_nodes=1):
        """One RuleList whose key is the communicator size alone: the packed layout of each size (module doc); a
        function without the layout key is its one list."""
        if not self.has_layout:
            return self.layers[0][1]
        return collapsed_rule_list(self.fn, self.library, min_nodes)

    def header_lines(self, min_nodes=1):
        """What a collapsed file's header says of its layers (none without the layout key)."""
        return [describe(self.fn, min_nodes)] + self.lost_lines(min_nodes) if self.has_layout else []

    def lost_lines(self, min_nodes=1):
        """The measured layouts a collapsed file answers otherwise than the function (none without the key)."""
        return [lost_line(self.fn, min_nodes)] if self.has_layout else []


def layout_rules(fn, library=None, inside=False):
    """The LayoutRules of a DecisionFunction: its layers' rule lists (library keys with `library`; `inside`: the
    measured range only, for a library whose files cannot name its default)."""
    from ..decision.decision_function import DecisionFunction

    def one(tree):
        if inside:
            return inside_rule_list(tree, library)
        return library_rule_list(tree, library) if library else build_rule_list(tree)
    fn = DecisionFunction.of(fn)
    return LayoutRules(fn, library, [(layer.ppn, one(layer.tree)) for layer in fn.layers])


def reference_ppn(comm_size, top, min_nodes=1):
    """The ppn of the packed layout of `comm_size` ranks on at least `min_nodes` nodes of at most `top` ranks."""
    return min(-(-int(comm_size) // int(min_nodes)), int(top))


def member_ranges(forest, min_nodes=1):
    """[(lo, hi or None, layer index)]: the communicator sizes whose reference layout each layer answers
    (ceiling rule: layer k takes ppn in (bound[k-1], bound[k]])."""
    bounds = [int(layer.ppn) for layer in forest.layers]
    out, lo = [], 1
    for k, bound in enumerate(bounds):
        hi = None if k + 1 == len(bounds) else bound * min_nodes
        if hi is not None and hi < lo:
            continue
        out.append((lo, hi, k))
        if hi is None:
            break
        lo = hi + 1
    return out


def member_at(forest, comm_size, min_nodes=1):
    """The layer index the collapsed file answers `comm_size` with."""
    ppn = reference_ppn(comm_size, forest.layers[-1].ppn, min_nodes)
    return int(forest.layer_index(np.array([ppn]))[0])


def _rule_at(comm_rules, size):
    chosen = comm_rules[0]
    for rule in comm_rules:
        if rule.comm_size <= size:
            chosen = rule
    return chosen


def splice(forest, lists, min_nodes=1, merge=True):
    """One RuleList answering, at every comm size c, what member `member_at(c)`'s rule list `lists[k]` answers."""
    comm_rules = []
    for lo, hi, k in member_ranges(forest, min_nodes):
        own = lists[k].comm_rules
        pieces = [CommRule(lo, _rule_at(own, lo).msg_rules)]
        pieces += [r for r in own if r.comm_size > lo and (hi is None or r.comm_size <= hi)]
        for piece in pieces:
            if not merge or not comm_rules or comm_rules[-1].msg_rules != piece.msg_rules:
                comm_rules.append(piece)
    first = lists[0]
    measured = (min(rl.measured[0] for rl in lists), max(rl.measured[1] for rl in lists),
                min(rl.measured[2] for rl in lists), max(rl.measured[3] for rl in lists))
    notes = [note for rl in lists for note in rl.notes]
    out = RuleList(first.collective, comm_rules, first.constraint, list(dict.fromkeys(s for rl in lists for s in rl.sources)),
                   measured, first.outside, first.units, list(dict.fromkeys(notes)))
    return out


def collapsed_rule_list(forest, library=None, min_nodes=1):
    """The forest as one 2-D RuleList at its packed layouts: keys in `library`'s units (None: bytes per rank).
    A key scaled by the comm size (tuned's total of the gather-type collectives) is scaled after the splice, per
    comm size from 1 to the largest measured one, so it is exact where a member answers below its own range."""
    from ..libraries import sizes
    from .rule_list import _per_comm_size, _within_key_max
    if library is None or sizes.written_form(library, forest.collective) != sizes.COMM:
        lists = [library_rule_list(layer.tree, library) if library else build_rule_list(layer.tree)
                 for layer in forest.layers]
        return splice(forest, lists, min_nodes)
    rl = splice(forest, [build_rule_list(layer.tree, merge_comm_sizes=False) for layer in forest.layers], min_nodes,
                merge=False)
    measured = rl.measured
    rl.measured = (1, measured[1], measured[2], measured[3])
    comms = _within_key_max(_per_comm_size(rl, library, forest.collective), library, forest.collective, rl.notes)
    rl.comm_rules = [c for i, c in enumerate(comms) if i == 0 or c.msg_rules != comms[i - 1].msg_rules]
    rl.measured, rl.units = measured, sizes.key(library, forest.collective).computed
    return rl


def describe(forest, min_nodes=1):
    """One header line: which member answers which communicator sizes, and the rule."""
    top = forest.layers[-1].ppn
    parts = [f"comm {lo}-{hi if hi is not None else 'up'}: ppn<={forest.layers[k].ppn} layout"
             for lo, hi, k in member_ranges(forest, min_nodes)]
    where = "on 1 node when c <= P" if min_nodes == 1 else f"on at least {min_nodes} nodes"
    return (f"{forest.collective}: layout forest collapsed to the packed layout of each comm size c (nodes filled "
            f"with P={top} ranks, {where}; ppn = min(ceil(c/{min_nodes}), {top})): " + ", ".join(parts))


def lost_layouts(forest, min_nodes=1, limit=6):
    # min_nodes 2 (the JSON `any` entries): layouts of 1 node or 1 rank per node have entries of their own
    """The measured layouts (nodes x ppn) whose measured sizes the collapsed file answers otherwise than the forest:
    [(nodes, ppn, points differing, points)] (docs/formats-output.md: what the file cannot express)."""
    out = []
    for layer in forest.layers:
        fn = layer.tree
        for ppn in layer.measured_ppn:
            for nodes in layer.nodes:
                comm = nodes * ppn
                if min_nodes > 1 and (nodes == 1 or ppn == 1):
                    continue
                k = member_at(forest, comm, min_nodes)
                other = forest.layers[k].tree
                if other is fn:
                    continue
                msgs = np.asarray(fn.msg_sizes)
                mine = fn.choices(np.full(len(msgs), comm), msgs).tolist()
                theirs = other.choices(np.full(len(msgs), comm), msgs).tolist()
                differ = sum(fn.methods[a] != other.methods[b] for a, b in zip(mine, theirs))
                if differ:
                    out.append((nodes, ppn, differ, len(msgs)))
    return sorted(set(out))[:limit] if limit else sorted(set(out))


def lost_line(forest, min_nodes=1):
    lost = lost_layouts(forest, min_nodes)
    if not lost:
        return f"{forest.collective}: every measured layout gets the forest's own answer at its measured message sizes"
    shown = ", ".join(f"{n}x{p} ({d} of {t} message sizes)" for n, p, d, t in lost)
    return (f"{forest.collective}: measured layouts answered by another layout's rules (this file cannot tell them "
            f"from the packed layout of their comm size): {shown}")


def library_lists(fns, library, min_nodes=1):
    """(RuleLists, header lines) of a file whose key is the communicator size alone: every function's rules
    collapsed (LayoutRules.collapsed), one per collective, and what its file's header states about its layers."""
    from ..errors import QuadselError
    from .escape import comment_text
    lists, lines, seen = [], [], set()
    for fn in fns:
        if fn.collective in seen:
            raise QuadselError(f"two trees for collective {comment_text(fn.collective)!r}: give one tree per collective")
        seen.add(fn.collective)
        rules = layout_rules(fn, library)
        lists.append(rules.collapsed(min_nodes))
        lines += rules.header_lines(min_nodes)
    return lists, lines
