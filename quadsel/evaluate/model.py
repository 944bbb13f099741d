"""The analytical-model comparator: per method a Hockney-style model T = c + a·L(P, m) + b·B(P, m), fitted with a
robust (Huber) least-squares fit, after the model-based selector of Nuriyev et al. (2022); it picks the
method of least predicted time (quadsel.evaluate.comparators for the selector interface)."""

from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np

from ..decision.decision_map import Method
from ..libraries import openmpi
from .comparators import Selector, _grid


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
    name = openmpi.algorithm_name(collective, method.algorithm).lower().replace("-", "_")
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


