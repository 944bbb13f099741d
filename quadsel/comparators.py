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
- ModelSelector     per method a Hockney-style model T = c + a·L(P, m) + b·B(P, m) fitted with a robust
                    (Huber) least-squares fit, after the model-based selector of Nuriyev et al. (2022).

The library default is not a selector: its *measured* time (rows named `default`) is scored directly.
"""

from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np

from .decision_map import Method
from .mpi_facts import OMPI_ALGORITHMS



def algorithm_name(algorithm, collective):
    """Open MPI id -> its name ("6" -> "binomial" for bcast); other names as they are."""
    if str(algorithm).isdigit():
        return OMPI_ALGORITHMS.get(collective, {}).get(int(algorithm), str(algorithm))
    return str(algorithm)


def method_name(method, collective):
    """Legend/table name of a method: algorithm + segment, e.g. "6 binomial", "3 pipeline/seg8192"."""
    name = method.algorithm
    if name.isdigit() and int(name) in OMPI_ALGORITHMS.get(collective, {}):
        name = f"{name} {OMPI_ALGORITHMS[collective][int(name)]}"
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

    def stats(self):
        """Depth statistics (None when the structure has no depth) and leaves/nodes."""
        return {"depth_min": None, "depth_max": None, "depth_mean": None, "leaves": None, "nodes": None}

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
    fn: object = None   # DecisionFunction

    kind = "quadtree"

    @classmethod
    def of(cls, fn):
        return cls(list(fn.methods), fn)

    @property
    def constraint(self):
        return self.fn.constraint

    @property
    def size(self):
        return self.fn.tree.n_leaves

    def stats(self):
        return self.fn.tree.stats()

    def predict(self, comm_sizes, msg_sizes):
        grid = self.fn.choice_grid()
        return grid[_floor(self.fn.comm_sizes, comm_sizes), _floor(self.fn.msg_sizes, msg_sizes)]


@dataclass
class SingleBest(Selector):
    choice: int = 0
    collective: str = ""

    kind = "single"

    @classmethod
    def fit(cls, dmap):
        """The method with the lowest mean penalty over the measured points (unknown costs count as +inf)."""
        relative = dmap.cost_filled / dmap.best_cost()[:, :, None] - 1.0
        relative = np.where(np.isnan(relative), np.inf, relative)[dmap.measured]
        return cls(list(dmap.methods), int(np.argmin(relative.mean(axis=0))), dmap.collective)

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
        """CART on the measured points, label = best method, no sample weights, at most `max_leaf_nodes` leaves.

        Raises ImportError when scikit-learn (the `compare` extra) is missing. A budget of 1 leaf (which
        scikit-learn does not accept) is the majority method.
        """
        from sklearn.tree import DecisionTreeClassifier
        cc, mm = _grid(dmap.comm_sizes, dmap.msg_sizes)
        scope = dmap.measured
        x, y = features(cc[scope], mm[scope]), dmap.best[scope]
        majority = int(np.bincount(y, minlength=len(dmap.methods)).argmax())
        tree = None
        if max_leaf_nodes >= 2 and len(np.unique(y)) > 1:
            tree = DecisionTreeClassifier(max_leaf_nodes=int(max_leaf_nodes), random_state=0).fit(x, y)
        return cls(list(dmap.methods), int(max_leaf_nodes), tree, majority)

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

    def predict(self, comm_sizes, msg_sizes):
        shape = np.shape(comm_sizes)
        if self.tree is None:
            return np.full(shape, self.majority, dtype=np.int64)
        return self.tree.predict(features(comm_sizes, msg_sizes)).astype(np.int64).reshape(shape)


# -- analytical models ------------------------------------------------------------------------------
# Family of each algorithm name: the structure its Hockney-style model follows (docs/report.md lists them).
FAMILIES = {
    "linear": ("basic_linear", "linear", "flat", "flat_tree"),
    "pipeline": ("chain", "pipeline", "k_chain", "kchain"),
    "split_binary": ("split_binary_tree", "split_binary"),
    "tree": ("binary_tree", "binary", "in-order_binary", "in_order_binary", "binomial", "knomial", "tree",
             "pipelined_tree", "recursive_doubling", "recursive_multiplying", "recexch", "nonoverlapping"),
    "scatter_allgather": ("scatter_allgather", "scatter_recursive_doubling_allgather", "rabenseifner",
                          "reduce_scatter_gather", "reduce_scatter_allgather", "k_reduce_scatter_allgather"),
    "ring": ("scatter_allgather_ring", "scatter_ring_allgather", "ring", "segmented_ring"),
}
_FAMILY_OF = {name: family for family, names in FAMILIES.items() for name in names}

# Latency term L (number of sequential message steps) and byte term B (bytes on the critical path) of
# each family, with D = ceil(log2 P), s = bytes per segment (m when unsegmented), n = ceil(m / s) segments.
FORMS = {
    "linear": "L = P-1, B = (P-1)·m (the root sends the whole message P-1 times)",
    "pipeline": "L = (P-1) + n - 1, B = L·s (a chain of P-1 hops, n segments pipelined)",
    "tree": "L = D + n - 1, B = L·s (tree of height D, n segments pipelined)",
    "split_binary": "L = D + ceil(n/2), B = (D + ceil(n/2) - 1)·s + m/2 (halves down two subtrees, then exchanged)",
    "scatter_allgather": "L = 2·D, B = 2·m·(P-1)/P (recursive halving then doubling)",
    "ring": "L = D + P - 1, B = 2·m·(P-1)/P (binomial scatter, ring allgather)",
}


def model_family(method, collective):
    """(family, name, assumed): the model form of a method; unknown names are assumed tree-like."""
    name = algorithm_name(method.algorithm, collective).lower().replace("-", "_")
    family = _FAMILY_OF.get(name) or _FAMILY_OF.get(name.replace("_", "-"))
    return (family, name, False) if family else ("tree", name, True)


def model_terms(family, comm_sizes, msg_sizes, segsize):
    """Design matrix columns (1, L, B) of one family at the given sizes: T = c + a·L + b·B."""
    p = np.asarray(comm_sizes, dtype=float).ravel()
    m = np.asarray(msg_sizes, dtype=float).ravel()
    s = np.where((segsize > 0) & (m > segsize), float(segsize), np.maximum(m, 1.0))
    n = np.ceil(np.maximum(m, 1.0) / s)
    d = np.ceil(np.log2(np.maximum(p, 1.0)))
    if family == "linear":
        latency, volume = p - 1, (p - 1) * m
    elif family == "pipeline":
        latency = (p - 1) + n - 1
        volume = latency * np.minimum(s, m)
    elif family == "tree":
        latency = d + n - 1
        volume = latency * np.minimum(s, m)
    elif family == "split_binary":
        half = np.ceil(n / 2)
        latency = d + half
        volume = (d + half - 1) * np.minimum(s, m) + m / 2
    elif family == "scatter_allgather":
        latency, volume = 2 * d, 2 * m * (p - 1) / p
    elif family == "ring":
        latency, volume = d + p - 1, 2 * m * (p - 1) / p
    else:
        raise ValueError(f"unknown model family {family!r}")
    return np.column_stack([np.ones_like(p), latency, volume])


def fit_model(x, t, huber_scale=0.1):
    """Non-negative parameters θ of t ≈ x·θ: robust least squares on log(x·θ) - log(t) with Huber loss.

    The model stays linear in its parameters; only the residual is taken on a log scale, so a 0.2 µs point
    weighs like a 20 ms one (plain least squares fits only the largest messages — the weakness Nuriyev et
    al. note of linear regression) and over- and under-prediction by the same factor cost the same, which
    is what a selection by predicted-time ratios needs. The Huber loss (quadratic up to ~10 % error, linear
    beyond) keeps single spikes from bending the fit. Start: non-negative least squares on t-relative rows.
    """
    from scipy.optimize import least_squares, nnls
    relative = x / t[:, None]
    norms = np.linalg.norm(relative, axis=0)
    norms[norms == 0] = 1.0
    a = x / norms
    start, _ = nnls(relative / norms, np.ones(len(t)))
    start = np.maximum(start, 1e-9 * max(start.max(), 1.0))
    tiny = 1e-12 * float(t.min())

    def residual(theta):
        return np.log(np.maximum(a @ theta, tiny)) - np.log(t)

    def jacobian(theta):
        return a / np.maximum(a @ theta, tiny)[:, None]

    fit = least_squares(residual, start, jac=jacobian, bounds=(0.0, np.inf), loss="huber", f_scale=huber_scale,
                        method="trf", x_scale="jac", xtol=1e-12, ftol=1e-12, gtol=1e-12)
    return fit.x / norms


@dataclass
class MethodModel:
    method: Method
    family: str
    name: str
    assumed: bool
    params: Optional[np.ndarray]     # (c, a, b) in µs, µs per step, µs per byte; None when not fitted
    points: int

    def predict(self, comm_sizes, msg_sizes):
        terms = model_terms(self.family, comm_sizes, msg_sizes, self.method.segsize)
        return terms @ self.params

    def to_json(self):
        return {"method": self.method.label, "algorithm": self.name, "family": self.family,
                "form": "T = c + a·L + b·B; " + FORMS[self.family], "assumed": self.assumed, "points": self.points,
                "params": None if self.params is None else {"c_us": float(self.params[0]),
                                                            "a_us": float(self.params[1]),
                                                            "b_us_per_byte": float(self.params[2])}}


@dataclass
class ModelSelector(Selector):
    collective: str = ""
    models: List[MethodModel] = field(default_factory=list)

    kind = "model"
    N_PARAMS = 3

    @classmethod
    def fit(cls, dmap):
        """Fit every method on its own measured points; a method with fewer points than parameters is left out."""
        cc, mm = _grid(dmap.comm_sizes, dmap.msg_sizes)
        models = []
        for k, method in enumerate(dmap.methods):
            family, name, assumed = model_family(method, dmap.collective)
            known = ~np.isnan(dmap.cost[:, :, k])
            params = None
            if known.sum() >= cls.N_PARAMS:
                x = model_terms(family, cc[known], mm[known], method.segsize)
                params = fit_model(x, dmap.cost[:, :, k][known])
            models.append(MethodModel(method, family, name, assumed, params, int(known.sum())))
        if all(m.params is None for m in models):
            raise ValueError("no method has enough measured points to fit a model")
        return cls(list(dmap.methods), dmap.collective, models)

    @property
    def constraint(self):
        return "hockney fit"

    @property
    def size(self):
        return self.N_PARAMS * sum(m.params is not None for m in self.models)

    def predicted_times(self, comm_sizes, msg_sizes):
        """(N, K) predicted µs of every method (inf for methods without a fit)."""
        comm_sizes, msg_sizes = np.ravel(comm_sizes), np.ravel(msg_sizes)
        out = np.full((comm_sizes.size, len(self.models)), np.inf)
        for k, model in enumerate(self.models):
            if model.params is not None:
                out[:, k] = model.predict(comm_sizes, msg_sizes)
        return out

    def predict(self, comm_sizes, msg_sizes):
        shape = np.shape(comm_sizes)
        return np.argmin(self.predicted_times(comm_sizes, msg_sizes), axis=1).astype(np.int64).reshape(shape)

    def to_json(self):
        return [m.to_json() for m in self.models]


def cart_available():
    try:
        import sklearn.tree  # noqa: F401
    except ImportError:
        return False
    return True



def choice_on(selector, dmap):
    """(C, M) indices into `dmap.methods` of what `selector` chooses at every grid point of `dmap`.

    The selector may have been built on another (training) map: its methods are matched by identity.
    """
    cc, mm = _grid(dmap.comm_sizes, dmap.msg_sizes)
    own = selector.predict(cc, mm)
    lookup = method_index(dmap.methods)
    translate = np.array([lookup[m] for m in selector.methods], dtype=np.int64)
    return translate[own]
