"""What users would use instead of a quadtree, as selectors scored with the same penalty (§4.2).

Every selector answers "which method at (comm size, msg size)?" for *any* sizes, so it can be scored on
measured points it was built from and on held-out points it never saw (quadsel.holdout):

- QuadtreeSelector  the quadtree decision function and its documented floor query rule (§3.2);
- SingleBest        one method everywhere: the one with the lowest mean penalty on the training points;
- RunLengthTable    what open-mpi/ompi-collectives-tuning emits: per measured communicator size the argmin
                    at each measured message size, consecutive equal choices merged; floor rule on both axes
                    as Open MPI's classic rules file reads;
- CartSelector      a CART decision tree (scikit-learn, optional extra `compare`) on (log2 P, log2 m)
                    with a leaf budget, as the C4.5 study of the same authors did;
- ModelSelector     (model.py) per method a Hockney-style model T = c + a·L(P, m) + b·B(P, m) fitted with a
                    robust (Huber) least-squares fit, after the model-based selector of Nuriyev et al. (2022).

The library default is not a selector: its *measured* time (rows named `default`) is scored directly.
"""

from dataclasses import dataclass, field
from typing import List

import numpy as np

from ..decision.decision_map import Method
from ..libraries import openmpi



def method_name(method, collective):
    """Legend/table name of a method: algorithm + segment, e.g. "6 binomial", "3 pipeline/seg8192"."""
    name = method.algorithm
    if name.isdigit() and int(name) in openmpi.ALGORITHMS.get(collective, {}):
        name = f"{name} {openmpi.ALGORITHMS[collective][int(name)]}"
    return name if method.segsize == 0 else f"{name}/seg{method.segsize}"


def method_index(methods):
    return {m: i for i, m in enumerate(methods)}


# -- the selector interface -------------------------------------------------------------------------
@dataclass
class Selector:
    """Base: a rule choosing one of `methods` for arbitrary (comm size, msg size)."""

    kind = "selector"           # the `method` column of the report
    methods: List[Method]

    @property
    def constraint(self):
        return self.kind

    @property
    def size(self):
        return None

    @property
    def deployed_assignments(self):
        """Deployed size as leaf assignments of its C decision function, where the selector has one."""
        return None

    @property
    def deployed_rules(self):
        """Deployed size as rules (a rules file's message rules), where the selector has one."""
        return None

    def stats(self):
        """Depth statistics (None when the structure has no depth) and leaves/nodes."""
        return {"depth_min": None, "depth_max": None, "depth_mean": None, "leaves": None, "nodes": None,
                "paper_leaves": None}

    def predict(self, comm_sizes, msg_sizes):
        """Indices into self.methods for equally shaped arrays of communicator and message sizes."""
        raise NotImplementedError

    def choose(self, comm_size, msg_size):
        return self.methods[int(self.predict(np.array([comm_size]), np.array([msg_size]))[0])]


def _floor(axis, values):
    """§3.2 floor rule, vectorised: largest axis value <= value; below the smallest, the first."""
    return np.maximum(np.searchsorted(axis, values, side="right") - 1, 0)


def _grid(comm_sizes, msg_sizes):
    return np.meshgrid(np.asarray(comm_sizes), np.asarray(msg_sizes), indexing="ij")


@dataclass
class QuadtreeSelector(Selector):
    """A quadtree: `quadtree` rows are the paper's builder (or other options), `quadsel` rows the default build's."""

    fn: object = None   # DecisionFunction

    @classmethod
    def of(cls, fn):
        return cls(list(fn.methods), fn)

    @property
    def kind(self):
        return "quadsel" if self.fn.options.is_default else "quadtree"

    @property
    def constraint(self):
        return self.fn.options.size_constraint if self.kind == "quadsel" else self.fn.constraint

    @property
    def deployed_assignments(self):
        from ..targets.c_branches import function_size
        return function_size(self.fn).assignments    # the C `codegen` writes, as its header counts it

    @property
    def deployed_rules(self):
        from ..targets.rule_list import build_rule_list
        return sum(len(c.msg_rules) for c in build_rule_list(self.fn).comm_rules)

    @property
    def size(self):
        from ..decision.size_tree import leaf_count
        return leaf_count(self.fn)

    def stats(self):
        """The deployed tree's statistics; `paper_leaves`: the paper's padded count (the paper's builder only)."""
        stats = self.fn.stats()
        paper = stats.pop("paper", None)
        stats["paper_leaves"] = paper["leaves"] if paper else None
        return stats

    def predict(self, comm_sizes, msg_sizes):
        return self.fn.choices(comm_sizes, msg_sizes)


@dataclass
class TreeFileSelector(QuadtreeSelector):
    """A tree read from a file (`quadsel report --tree`), scored as it is, never rebuilt."""

    name: str = ""

    @property
    def kind(self):
        return "tree"

    @property
    def constraint(self):
        return f"{self.name}: {self.fn.constraint}"


@dataclass
class OutsideRuleSelector(QuadtreeSelector):
    """The default build with one outside rule for every side of the measured range ("handed back": the library
    decides there; "extrapolated": the nearest measured decision), where the build itself decides each side by its
    folds: `report --holdout` rows that say what each rule costs on sizes it never saw (issue 39)."""

    rule: str = ""

    @property
    def kind(self):
        return "quadsel"

    @property
    def constraint(self):
        return f"{self.fn.options.size_constraint}, outside {self.rule}"


@dataclass
class SingleBest(Selector):
    choice: int = 0
    collective: str = ""

    kind = "single"

    @classmethod
    def fit(cls, dmap):
        """The method with the lowest mean penalty over the measured points, scored as every report scores it
        (decision_map.penalty_cube: a method is charged the worst penalty where it was not measured)."""
        from ..decision.decision_map import penalty_cube
        return cls(list(dmap.methods), int(np.argmin(penalty_cube(dmap)[dmap.measured].mean(axis=0))),
                   dmap.collective)

    @property
    def constraint(self):
        return f"single={method_name(self.methods[self.choice], self.collective)}"

    @property
    def size(self):
        return 1

    def predict(self, comm_sizes, msg_sizes):
        return np.full(np.shape(comm_sizes), self.choice, dtype=np.int64)


@dataclass
class RunLengthTable(Selector):
    comm_sizes: np.ndarray = None
    rules: list = field(default_factory=list)   # per comm size: (msg lower bounds array, method index array)

    kind = "runlength"

    @classmethod
    def fit(cls, dmap):
        """Per communicator size: argmin at each measured message size, runs of one method merged.

        A communicator size without any measured point gets no rules (queries fall to the one below). The
        first rule of each size starts at message size 0, as Open MPI requires of a rules file.
        """
        sizes, rules = [], []
        for c, comm in enumerate(dmap.comm_sizes):
            cols = np.flatnonzero(dmap.measured[c])
            if cols.size == 0:
                continue
            choice = dmap.best[c, cols]
            start = np.concatenate(([True], choice[1:] != choice[:-1]))
            bounds = dmap.msg_sizes[cols][start].astype(np.int64)
            bounds[0] = 0
            sizes.append(int(comm))
            rules.append((bounds, choice[start].astype(np.int64)))
        return cls(list(dmap.methods), np.asarray(sizes, dtype=np.int64), rules)

    @property
    def constraint(self):
        return "per comm size"

    @property
    def size(self):
        return int(sum(len(bounds) for bounds, _ in self.rules))

    @property
    def deployed_rules(self):
        return self.size

    def predict(self, comm_sizes, msg_sizes):
        comm_sizes, msg_sizes = np.asarray(comm_sizes), np.asarray(msg_sizes)
        out = np.empty(comm_sizes.shape, dtype=np.int64)
        row = _floor(self.comm_sizes, comm_sizes)
        for r, (bounds, choice) in enumerate(self.rules):
            hit = row == r
            out[hit] = choice[_floor(bounds, msg_sizes[hit])]
        return out


def features(comm_sizes, msg_sizes):
    """CART features: (log2 P, log2 m) — the log scales the decision map is read on. A 0-byte message sits
    at log2 0.5, just left of 1 byte, as in the message-axis interpolation (log2 max(m, 1) would merge them)."""
    return np.column_stack([np.log2(np.maximum(np.ravel(comm_sizes), 1)),
                            np.log2(np.maximum(np.ravel(msg_sizes), 0.5))])


@dataclass
class CartSelector(Selector):
    budget: int = 0
    tree: object = None          # sklearn DecisionTreeClassifier, or None when one class (majority only)
    majority: int = 0

    kind = "cart"

    @classmethod
    def fit(cls, dmap, max_leaf_nodes):
        """CART on the measured points, label = the fastest measured choice -- the library default included, as
        a class of its own where it was measured (issue 39: what a user trains in five lines) -- no sample
        weights, at most `max_leaf_nodes` leaves.

        Raises ImportError when scikit-learn (the `compare` extra) is missing. A budget of 1 leaf (which
        scikit-learn does not accept) is the majority method.
        """
        from sklearn.tree import DecisionTreeClassifier
        from ..decision.decision_map import DEFAULT_METHOD
        cc, mm = _grid(dmap.comm_sizes, dmap.msg_sizes)
        scope = dmap.measured
        x, y = features(cc[scope], mm[scope]), dmap.best[scope]
        methods = list(dmap.methods)
        if dmap.default_cost is not None:
            with np.errstate(invalid="ignore"):
                fastest = np.nanmin(np.where(np.isnan(dmap.cost), np.inf, dmap.cost), axis=2)
                y = np.where((dmap.default_cost < fastest)[scope], len(methods), y)
            methods.append(DEFAULT_METHOD)
        majority = int(np.bincount(y, minlength=len(methods)).argmax())
        tree = None
        if max_leaf_nodes >= 2 and len(np.unique(y)) > 1:
            tree = DecisionTreeClassifier(max_leaf_nodes=int(max_leaf_nodes), random_state=0).fit(x, y)
        return cls(methods, int(max_leaf_nodes), tree, majority)

    @property
    def constraint(self):
        return f"max_leaf_nodes={self.budget}"

    @property
    def size(self):
        return 1 if self.tree is None else int(self.tree.get_n_leaves())

    def stats(self):
        if self.tree is None:
            return {"depth_min": 0, "depth_max": 0, "depth_mean": 0.0, "leaves": 1, "nodes": 1}
        t = self.tree.tree_
        depth = np.zeros(t.node_count, dtype=np.int64)
        for node in range(t.node_count):          # children always come after their parent
            for child in (t.children_left[node], t.children_right[node]):
                if child >= 0:
                    depth[child] = depth[node] + 1
        leaf_depths = depth[t.children_left < 0]
        return {"depth_min": int(leaf_depths.min()), "depth_max": int(leaf_depths.max()),
                "depth_mean": float(leaf_depths.mean()), "leaves": int(leaf_depths.size), "nodes": int(t.node_count)}

    @property
    def deployed_assignments(self):
        return self.size     # its C (m2cgen, sklearn-porter) assigns once per leaf

    def predict(self, comm_sizes, msg_sizes):
        shape = np.shape(comm_sizes)
        if self.tree is None:
            return np.full(shape, self.majority, dtype=np.int64)
        return self.tree.predict(features(comm_sizes, msg_sizes)).astype(np.int64).reshape(shape)


def cart_available():
    try:
        import sklearn.tree  # noqa: F401
    except ImportError:
        return False
    return True



def choice_on(selector, dmap):
    """(C, M) indices into `dmap.methods` of what `selector` chooses at every grid point of `dmap`.

    The selector may have been built on another map (a training part, another run): its methods are matched
    by identity, and a method the map does not have is -1 (penalty.penalty_grid charges it the worst); the
    library default (a region the selector hands back to it) is penalty.LIBRARY_DEFAULT.
    """
    cc, mm = _grid(dmap.comm_sizes, dmap.msg_sizes)
    own = selector.predict(cc, mm)
    from ..decision.decision_map import DEFAULT_METHOD
    from .penalty import LIBRARY_DEFAULT
    lookup = method_index(dmap.methods)
    lookup.setdefault(DEFAULT_METHOD, LIBRARY_DEFAULT)     # a region handed back to the library
    translate = np.array([lookup.get(m, -1) for m in selector.methods], dtype=np.int64)
    return translate[own]
