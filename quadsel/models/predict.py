"""The decision map predicted from a sparse measurement (`quadsel build --model FORM`).

A point of the requested grid is **measured** when the sparse map holds every method's time there: its times
stay the measured ones. Every other point is **predicted**: every method's time there comes from its fitted
model (a method with no fit has none and never wins there). Measured and predicted times are never compared
at one point, so a model's bias cannot push a measured method out of a point. Predicted points are marked
(`DecisionMap.predicted`) and, like interpolated points, are never scored by a penalty (`filled`): only the
measured points are.
"""

from dataclasses import replace

import numpy as np

from ..decision.decision_map import DecisionMap
from ..decision.tree_file import MAX_CELLS
from ..errors import QuadselError
from .fit import fit_methods

MAX_TIMES = 1 << 24      # predicted times (points x methods): 128 MiB per cube of float64


def predict_decision_map(dmap, form, comm_sizes=None, msg_sizes=None):
    """(predicted DecisionMap over comm_sizes × msg_sizes (default: dmap's axes), fitted models)."""
    models = fit_methods(dmap, form)
    if all(m.params is None for m in models):
        raise QuadselError(f"cannot fit any method's model: every method needs at least as many measured points "
                           f"as its model has parameters, at 2 or more message sizes ({_counts(models)})")
    comm = np.array(sorted(set(dmap.comm_sizes.tolist() if comm_sizes is None else comm_sizes)), dtype=np.int64)
    msg = np.array(sorted(set(dmap.msg_sizes.tolist() if msg_sizes is None else msg_sizes)), dtype=np.int64)
    shape = (len(comm), len(msg), len(dmap.methods))
    if 4 * shape[0] * shape[1] > MAX_CELLS or shape[0] * shape[1] * shape[2] > MAX_TIMES:
        # the tree's cells (sizes and the gaps between them) must stay within what a tree file may hold
        raise QuadselError(f"a predicted grid of {shape[0]} comm sizes x {shape[1]} msg sizes x {shape[2]} methods is "
                           f"too large (at most {MAX_CELLS // 4} points and {MAX_TIMES} times): give fewer sizes")
    cost, cost_se = np.full(shape, np.nan), np.full(shape, np.nan)
    default = np.full(shape[:2], np.nan)
    (ci, cj), (mi, mj) = _common(comm, dmap.comm_sizes), _common(msg, dmap.msg_sizes)
    cost[np.ix_(ci, mi)] = dmap.cost[np.ix_(cj, mj)]
    if dmap.cost_se is not None:
        cost_se[np.ix_(ci, mi)] = dmap.cost_se[np.ix_(cj, mj)]
    if dmap.default_cost is not None:
        default[np.ix_(ci, mi)] = dmap.default_cost[np.ix_(cj, mj)]
    predicted = np.isnan(cost).any(axis=2)
    cc, mm = np.meshgrid(comm, msg, indexing="ij")
    model_cost = np.full(shape, np.nan)
    for k, model in enumerate(models):
        if model.params is not None:
            model_cost[:, :, k] = model.predict(cc.ravel(), mm.ravel()).reshape(shape[:2])
    cost[predicted] = np.nan
    cost_se[predicted] = np.nan
    cost_filled = np.where(predicted[:, :, None], model_cost, cost)
    ranking = np.where(np.isnan(cost_filled), np.inf, cost_filled)
    pmap = DecisionMap(dmap.collective, comm, msg, list(dmap.methods), cost, cost_filled, predicted.copy(),
                       np.argmin(ranking, axis=2), None if np.isnan(default).all() else default, dmap.sources,
                       None if np.isnan(cost_se).all() else cost_se, dmap.library, predicted,
                       replaced=dmap.replaced)
    return pmap, models


def as_measured(pmap):
    """The predicted map with its predictions taken as data: what the tree builders (and the leaf budget's
    held-out folds, decision/size.py) are given, so that a predicted point weighs like a measured one."""
    everywhere = np.zeros(pmap.shape, dtype=bool)
    return replace(pmap, cost=pmap.cost_filled.copy(), filled=everywhere, predicted=None)


def model_provenance(form, models, pmap):
    """What the tree file records of a model-based build (provenance.model)."""
    rows = [[int(pmap.comm_sizes[c]), [int(pmap.msg_sizes[m]) for m in np.nonzero(pmap.predicted[c])[0]]]
            for c in range(pmap.shape[0])]
    return {"form": form, "predicted_points": int(pmap.predicted.sum()),
            "measured_points": int((~pmap.predicted).sum()),
            "predicted": [row for row in rows if row[1]],       # [comm size, [predicted msg sizes]]
            "methods": [m.to_json() for m in models]}


def _common(axis, sparse_axis):
    """Index pairs (into axis, into sparse_axis) of the sizes both hold."""
    where = {v: i for i, v in enumerate(sparse_axis.tolist())}
    pairs = [(i, where[v]) for i, v in enumerate(axis.tolist()) if v in where]
    return (np.array([p[0] for p in pairs], dtype=np.int64), np.array([p[1] for p in pairs], dtype=np.int64))


def _counts(models):
    return ", ".join(f"{m.method.label}: {m.points}" for m in models)
