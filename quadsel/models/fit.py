"""Fitting each method's model (forms.py) on its measured points: a robust non-negative least-squares fit on
the log of the time, as Nuriyev et al. fit theirs with a Huber regressor (§6.2), separately per method (§5.2)."""

from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from ..decision.decision_map import Method
from . import forms


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
    form: str                        # "hockney" or "paper"
    family: str                      # hockney: the family (forms.FORMS); paper: the algorithm name
    name: str
    assumed: bool                    # hockney form of an algorithm quadsel does not know (taken tree-like)
    params: Optional[np.ndarray]     # hockney (c, a, b); paper (α, β); µs and µs per byte; None when not fitted
    points: int
    error: Optional[float] = None    # median |predicted / measured - 1| on the points fitted

    def terms(self, comm_sizes, msg_sizes):
        if self.form == "paper":
            return forms.paper_terms(self.family, comm_sizes, msg_sizes, self.method.segsize)
        return forms.hockney_terms(self.family, comm_sizes, msg_sizes, self.method.segsize)

    def predict(self, comm_sizes, msg_sizes):
        return self.terms(comm_sizes, msg_sizes) @ self.params

    def to_json(self):
        if self.form == "paper":
            text, names = forms.PAPER_FORMS[self.family], ("alpha_us", "beta_us_per_byte")
        else:
            text, names = "T = c + a·L + b·B; " + forms.FORMS[self.family], ("c_us", "a_us", "b_us_per_byte")
        return {"method": self.method.label, "algorithm": self.name, "form": self.form, "family": self.family,
                "model": text, "assumed": self.assumed, "points": self.points,
                "median_fit_error": None if self.error is None else round(float(self.error), 6),
                "params": None if self.params is None else {k: float(v) for k, v in zip(names, self.params)}}


def method_model(method, collective, library, form):
    """The unfitted model of one method under `form` ("hockney", or "paper" where the paper models it)."""
    family, name, assumed = forms.model_family(method, collective)
    if form == "paper" and forms.paper_models(method, collective, library):
        return MethodModel(method, "paper", name, name, False, None, 0)
    return MethodModel(method, "hockney", family, name, assumed, None, 0)


def fit_methods(dmap, form="hockney") -> List[MethodModel]:
    """Every method of `dmap` fitted on its own measured points (§5.2: parameters per algorithm). A method with
    fewer points than parameters, or measured at a single message size, keeps params None (never predicted)."""
    cc, mm = np.meshgrid(dmap.comm_sizes, dmap.msg_sizes, indexing="ij")
    models = []
    for k, method in enumerate(dmap.methods):
        model = method_model(method, dmap.collective, dmap.library, form)
        known = ~np.isnan(dmap.cost[:, :, k])
        model.points = int(known.sum())
        x = model.terms(cc[known], mm[known])
        if model.points >= x.shape[1] and np.unique(mm[known]).size >= 2:
            t = dmap.cost[:, :, k][known]
            model.params = fit_model(x, t)
            model.error = float(np.median(np.abs(x @ model.params / t - 1)))
        models.append(model)
    return models
