"""What `quadsel verify` verifies: the selections of quadsel trees and of rules files, one per collective.

A selection has `collective`, `path`, a grid (`comm_sizes`, `msg_sizes`; None for a rules file) and
`pick(comm, msg, call=None)` -> quadsel.targets.library_call.Pick, the method to force for the `quadsel` arm.
A tree's pick is the tree's method; a rules file's pick is what the library does when it loads the file
(quadsel.targets.rules_file), the library default where it decides by itself or ignores the file.
"""

from dataclasses import dataclass, field
from typing import List

from ..errors import QuadselError
from ..inputs import read_text
from ..libraries import DEFAULT_ALGORITHM, get as get_library, label_of
from ..targets.library_call import Pick
from ..targets.rules_file import VERIFIABLE, detect_format, read_rules_file


class TreeSelection:
    def __init__(self, fn, library, path=None):
        self.fn = fn
        self.library = library
        self.collective = fn.collective
        self.path = path
        self.comm_sizes = [int(c) for c in fn.comm_sizes.tolist()]
        self.msg_sizes = [int(m) for m in fn.msg_sizes.tolist()]

    def method_pick(self, method):
        if method.algorithm == DEFAULT_ALGORITHM:      # a region handed back to the library
            return Pick(DEFAULT_ALGORITHM, 0)
        return Pick(label_of(self.library, self.collective, method),
                    int(method.segsize) if get_library(self.library).forces_segsize else 0)

    def pick(self, comm_size, msg, call=None):
        return self.method_pick(self.fn.query(comm_size, msg))

    def methods(self):
        return [self.method_pick(m) for m in self.fn.methods]


class ForestSelection:
    """A layout forest as verify's selection: pick(comm, msg, call, ppn) -> Pick of the member for that ppn."""

    def __init__(self, forest, library, path=None):
        self.forest, self.library, self.path = forest, library, path
        self.collective = forest.collective
        self.members = [TreeSelection(m.fn, library, path) for m in forest.members]
        self.comm_sizes = sorted({c for m in self.members for c in m.comm_sizes})
        self.msg_sizes = sorted({s for m in self.members for s in m.msg_sizes})

    @property
    def layouts(self):
        """The measured layouts: each member's measured ppn with its node counts whose product it measured."""
        out = set()
        for member, sel in zip(self.forest.members, self.members):
            for ppn in member.measured_ppn:
                out |= {(n, ppn) for n in member.nodes if n * ppn in sel.comm_sizes}
        return sorted(out, key=lambda lp: (lp[0] * lp[1], lp[0]))

    def member(self, ppn):
        return self.members[int(self.forest.member_of([ppn])[0])]

    def method_pick(self, method):
        return self.members[0].method_pick(method)

    def pick(self, comm_size, msg, call=None, ppn=None):
        if ppn is None:
            raise QuadselError(f"{self.path}: a layout forest picks per layout (a bug: a point without its layout)")
        return self.member(ppn).pick(comm_size, msg, call)

    def methods(self):
        seen = {}
        for sel in self.members:
            for pick in sel.methods():
                seen.setdefault((pick.label, pick.segsize), pick)
        return list(seen.values())


def _check_tree_library(fn, path, library):
    """A tree of another library's measurements names that library's algorithms: refused in one line."""
    from ..libraries import title
    from ..targets.c_common import tree_library
    own = tree_library(fn)
    if own is not None and own != library:
        raise QuadselError(f"{path}: a tree of {title(own)} measurements, but mpi4py loads {title(library)}: its "
                           "methods are not this library's")


def as_selection(item, library):
    """A DecisionFunction becomes a TreeSelection; selections pass through."""
    return item if hasattr(item, "pick") else TreeSelection(item, library)


@dataclass
class Inputs:
    selections: list = field(default_factory=list)      # in input order
    trees: list = field(default_factory=list)           # TreeSelection
    rules_files: list = field(default_factory=list)     # quadsel.targets.rules_file.RulesFile
    notes: List[str] = field(default_factory=list)      # one line each, for stderr


def _unjson(node):
    """A JObject tree as plain dicts (key order kept), to compare with MPICH's own selection."""
    from ..json_lines import JObject
    return {k: _unjson(v) for k, _, v in node.items} if isinstance(node, JObject) else node


def load_inputs(paths, library, library_version, mpich_builtin=None):
    """Read TREE_OR_RULES arguments; check they fit the loaded library; one selection per collective.

    mpich_builtin: a function returning MPICH's own selection (a dict): collectives of an MPICH file whose
    subtree is exactly MPICH's own are MPICH's default, so not verified (a deployable quadsel file carries
    them for every collective it does not tune)."""
    out = Inputs()
    seen = {}
    for path in paths:
        text = read_text(path, what="rules file")   # regular files only, size-limited
        if detect_format(text) == "tree":
            from ..decision.forest_file import load_tree
            fn = load_tree(path)
            if hasattr(fn, "members"):   # a layout forest: verified per layout (verify/layouts.py)
                for member in fn.members:
                    _check_tree_library(member.fn, path, library)
                selections = [ForestSelection(fn, library, path)]
            else:
                _check_tree_library(fn, path, library)
                selections = [TreeSelection(fn, library, path)]
            out.trees += selections
        else:
            rules = read_rules_file(path, text, library_version)
            if rules.library != library:
                from ..libraries import title
                article = "an" if title(rules.library)[0] in "AEIOUM" else "a"   # an MPICH, an Open MPI, an Intel MPI
                raise QuadselError(f"{path}: {article} {title(rules.library)} rules file, but mpi4py loads {title(library)}")
            out.rules_files.append(rules)
            out.notes += [f"warning: {w}" for w in rules.warnings]
            if rules.ignored:
                out.notes.append(f"WARNING: {rules.ignored}; verifying the library default instead")
            selections = rules.selections()
            if rules.format == "mpich-json" and mpich_builtin is not None:
                builtin = mpich_builtin()
                own = {c: _unjson(rules._data.get(f"collective={c}")) for c in rules.collectives}
                same = [s.collective for s in selections if own.get(s.collective) == builtin.get(f"collective={s.collective}")]
                if same and len(same) < len(selections):
                    out.notes.append(f"note: {path}: {', '.join(same)}: MPICH's own selection, not verified")
                    selections = [s for s in selections if s.collective not in same]
            others = [c for c in rules.collectives if c not in VERIFIABLE]
            if others:
                shown = ", ".join(others[:6]) + (f" and {len(others) - 6} more" if len(others) > 6 else "")
                out.notes.append(f"note: {path}: verify measures {', '.join(VERIFIABLE)}; not verified: {shown}")
            if not selections:
                raise QuadselError(f"{path}: no rules for {', '.join(VERIFIABLE)} to verify")
        for sel in selections:
            if sel.collective in seen:
                raise QuadselError(f"{path}: {sel.collective} is also selected by {seen[sel.collective]}: "
                                   f"give one tree or rules file per collective")
            seen[sel.collective] = path
        out.selections += selections
    return out
