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
from ..layout import Layout
from ..libraries import DEFAULT_ALGORITHM, get as get_library, label_of
from ..targets.library_call import Pick
from ..targets.rules_file import VERIFIABLE, detect_format, read_rules_file


class _SizeTreeSelection:
    """One size tree's picks (a layer of a decision function)."""

    def __init__(self, tree, library):
        self.tree, self.library, self.collective = tree, library, tree.collective
        self.comm_sizes = [int(c) for c in tree.comm_sizes.tolist()]
        self.msg_sizes = [int(m) for m in tree.msg_sizes.tolist()]

    def method_pick(self, method):
        if method.algorithm == DEFAULT_ALGORITHM:      # a region handed back to the library
            return Pick(DEFAULT_ALGORITHM, 0)
        return Pick(label_of(self.library, self.collective, method),
                    int(method.segsize) if get_library(self.library).forces_segsize else 0)

    def pick(self, comm_size, msg, call=None):
        return self.method_pick(self.tree.query(comm_size, msg))

    def methods(self):
        return [self.method_pick(m) for m in self.tree.methods]


class TreeSelection:
    """A decision function as verify's selection: pick(comm, msg, call, ppn) -> Pick of the layer for that ppn
    (every ppn alike without the layout key, which a point then need not carry)."""

    def __init__(self, fn, library, path=None):
        self.fn, self.library, self.path = fn, library, path
        self.collective = fn.collective
        self.layers = [_SizeTreeSelection(layer.tree, library) for layer in fn.layers]
        self.comm_sizes = sorted({c for sel in self.layers for c in sel.comm_sizes})
        self.msg_sizes = sorted({s for sel in self.layers for s in sel.msg_sizes})

    @property
    def has_layout(self):
        return self.fn.has_layout

    @property
    def layouts(self):
        """The measured layouts: each layer's measured ppn with its node counts whose product it measured."""
        out = set()
        for layer, sel in zip(self.fn.layers, self.layers):
            for ppn in layer.measured_ppn:
                out |= {Layout(n, ppn) for n in layer.nodes if n * ppn in sel.comm_sizes}
        return sorted(out, key=lambda layout: (layout.comm_size, layout.nodes))

    def method_pick(self, method):
        return self.layers[0].method_pick(method)

    def pick(self, comm_size, msg, call=None, ppn=None):
        if self.has_layout and ppn is None:
            raise QuadselError(f"{self.path}: a layout forest picks per layout (a bug: a point without its layout)")
        return self.layers[int(self.fn.layer_index([ppn or 1])[0])].pick(comm_size, msg, call)

    def methods(self):
        seen = {}
        for sel in self.layers:
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
    """A DecisionFunction becomes a TreeSelection of what the library's file of it does (targets/written.py);
    selections pass through."""
    from ..decision.decision_function import DecisionFunction
    from ..decision.size_tree import SizeTree
    from ..targets.written import as_written
    if not isinstance(item, (DecisionFunction, SizeTree)):
        return item
    return TreeSelection(as_written(DecisionFunction.of(item), library), library)


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
            from ..decision.decision_function import DecisionFunction
            fn = DecisionFunction.load(path)
            for tree in fn.size_trees:   # with the layout key: verified per layout (verify/layouts.py)
                _check_tree_library(tree, path, library)
            from ..targets.written import as_written
            fn = as_written(fn, library)     # timed and proven as the file the library loads (targets/written.py)
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
