"""models/predict.py: the predicted decision map marks its predicted points, and no penalty scores them."""

import numpy as np
import pytest

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.errors import QuadselError
from quadsel.evaluate.penalty import penalty_grid, summarize
from quadsel.models import forms
from quadsel.models.predict import as_measured, model_provenance, predict_decision_map

from helpers import table_from_cube

COMM = [2, 4, 8, 16, 32, 64]
MSG = [2 ** i for i in range(0, 21, 2)]
METHODS = [("1", 0), ("6", 0)]
TRUTH = {"1": [0.5, 0.2, 1e-4], "6": [0.5, 1.0, 1e-4]}


def full_cube(comm=COMM, msg=MSG):
    cc, mm = np.meshgrid(comm, msg, indexing="ij")
    return np.stack([forms.hockney_terms(f, cc.ravel(), mm.ravel(), 0) @ TRUTH[a]
                     for a, f in (("1", "linear"), ("6", "tree"))], axis=1).reshape(len(comm), len(msg), 2)


def sparse_map(keep):
    cost = full_cube()
    cost[~keep] = np.nan
    return build_decision_map(table_from_cube(cost, COMM, MSG, METHODS))


def test_predicted_points_are_marked_and_never_scored():
    rng = np.random.default_rng(3)
    keep = rng.random((len(COMM), len(MSG))) < 0.3
    keep[0, :2] = keep[-1, -2:] = True
    sparse = sparse_map(keep)
    pmap, models = predict_decision_map(sparse, "hockney", COMM, MSG)
    assert np.array_equal(pmap.predicted, ~keep)
    assert np.array_equal(pmap.filled, pmap.predicted)                 # never scored, like interpolated points
    assert np.isnan(pmap.cost[pmap.predicted]).all()                   # no measured time claimed there
    assert np.allclose(pmap.cost_filled, full_cube(), rtol=1e-3)       # the model generated the data
    assert np.array_equal(pmap.best, np.argmin(full_cube(), axis=2))
    # scoring any choice counts the measured points only
    choice = rng.integers(0, 2, size=pmap.shape)
    score = summarize(penalty_grid(pmap, choice), pmap)
    assert score.points == keep.sum()
    assert np.isnan(penalty_grid(pmap, choice)[pmap.predicted]).all()
    # the tree file records which points were predicted
    fn = build_size_tree(as_measured(pmap), split="measured", between="least-bad", leaf_rule="penalty",
                                 provenance={"model": model_provenance("hockney", models, pmap)})
    recorded = fn.provenance["model"]
    assert recorded["predicted_points"] == (~keep).sum() and recorded["measured_points"] == keep.sum()
    marked = {(c, m) for c, msgs in recorded["predicted"] for m in msgs}
    assert marked == {(COMM[i], MSG[j]) for i, j in zip(*np.nonzero(~keep))}
    assert np.array_equal(fn.choice_grid(), np.argmin(full_cube(), axis=2))   # exact tree of the prediction


def test_a_point_missing_one_method_is_predicted_whole():
    keep = np.ones((len(COMM), len(MSG), 2), dtype=bool)
    keep[2, 3, 1] = False
    cost = full_cube()
    cost[~keep] = np.nan
    pmap, _ = predict_decision_map(build_decision_map(table_from_cube(cost, COMM, MSG, METHODS)), "hockney")
    assert pmap.predicted.sum() == 1 and pmap.predicted[2, 3]
    assert np.isnan(pmap.cost[2, 3]).all()


def test_grid_beyond_the_sample_and_measured_sizes_kept():
    keep = np.zeros((len(COMM), len(MSG)), dtype=bool)
    keep[:3, :] = True                                   # comm sizes 2-8 measured, 16-64 and 128 predicted
    pmap, _ = predict_decision_map(sparse_map(keep), "hockney", COMM + [128], MSG)
    assert pmap.comm_sizes.tolist() == COMM + [128]
    assert not pmap.predicted[:3].any() and pmap.predicted[3:].all()
    assert np.allclose(pmap.cost_filled, full_cube(COMM + [128]), rtol=1e-3)


def test_nothing_to_fit_is_one_error():
    keep = np.zeros((len(COMM), len(MSG)), dtype=bool)
    keep[0, 0] = True
    with pytest.raises(QuadselError, match="cannot fit any method's model"):
        predict_decision_map(sparse_map(keep), "hockney")
