"""models/forms.py and fit.py: each form's fit recovers the parameters of data the model generated."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from quadsel.decision.decision_map import Method, build_decision_map
from quadsel.models import forms
from quadsel.models.fit import fit_methods, fit_model, method_model

from helpers import table_from_cube

COMM = [2, 3, 4, 8, 13, 16, 32, 64, 128]
MSG = [2 ** i for i in range(0, 23, 2)]


def _design(model):
    cc, mm = np.meshgrid(COMM, MSG, indexing="ij")
    return model.terms(cc.ravel(), mm.ravel())


@settings(max_examples=40, deadline=None)
@given(algorithm=st.sampled_from(["1", "2", "3", "4", "5", "6", "8", "9"]),
       segsize=st.sampled_from([0, 1024, 8192]),
       form=st.sampled_from(["hockney", "paper"]),
       scale=st.tuples(st.floats(0.05, 50.0), st.floats(0.05, 50.0), st.floats(1e-5, 1e-2)))
def test_fit_recovers_the_parameters_that_generated_the_data(algorithm, segsize, form, scale):
    method = Method(algorithm, segsize)
    model = method_model(method, "bcast", "openmpi", form)
    truth = np.array(scale[-model_params(model):])
    x = _design(model)
    assert fit_model(x, x @ truth) == pytest.approx(truth, rel=1e-3)


def model_params(model):
    return 2 if model.form == "paper" else 3


def test_paper_form_only_where_the_paper_models_the_algorithm():
    assert method_model(Method("6"), "bcast", "openmpi", "paper").form == "paper"
    assert method_model(Method("3", 8192), "bcast", None, "paper").family == "pipeline"
    assert method_model(Method("8"), "bcast", "openmpi", "paper").form == "hockney"    # scatter-allgather
    assert method_model(Method("5"), "reduce", "openmpi", "paper").form == "hockney"   # the paper is bcast only
    assert method_model(Method("binomial"), "bcast", "mpich", "paper").form == "hockney"
    assert method_model(Method("6"), "bcast", "openmpi", "hockney").form == "hockney"


def test_paper_stage_counts():
    # binomial, unsegmented, P = 8: floor(log2 8) = 3 stages of the whole message
    assert forms.paper_terms("binomial", [8], [100], 0).tolist() == [[3, 300]]
    # chain (the paper's K-chain, K = 4), P = 9, 8 KiB segments of 32 KiB: ceil(8/4) + 4 - 1 = 5 stages
    assert forms.paper_terms("chain", [9], [32768], 8192).tolist() == [[5, 5 * 8192]]
    # pipeline (the paper's chain), P = 5, 2 segments: P + n - 2 = 5 stages
    assert forms.paper_terms("pipeline", [5], [16384], 8192).tolist() == [[5, 5 * 8192]]
    # flat tree: P - 1 sends of the whole message
    assert forms.paper_terms("basic_linear", [4], [10], 0).tolist() == [[3, 30]]
    # split binary, P = 4, 4 segments: floor(log2 4) + 2 - 1 = 3 stages + one exchange of m/2
    assert forms.paper_terms("split_binary_tree", [4], [4096], 1024).tolist() == [[4, 3 * 1024 + 2048]]


def test_fit_methods_per_method_and_too_sparse_methods_left_out():
    truth = {"1": [0.5, 0.2, 1e-4], "6": [0.5, 1.0, 2e-4]}
    cc, mm = np.meshgrid(COMM, MSG, indexing="ij")
    cost = np.stack([forms.hockney_terms(f, cc.ravel(), mm.ravel(), 0) @ truth[a]
                     for a, f in (("1", "linear"), ("6", "tree"))], axis=1).reshape(len(COMM), len(MSG), 2)
    cost[:, 1:, 1] = np.nan                       # binomial measured at one message size only: not fitted
    dmap = build_decision_map(table_from_cube(cost, COMM, MSG, [("1", 0), ("6", 0)]))
    linear, binomial = fit_methods(dmap, "hockney")
    assert linear.params == pytest.approx(truth["1"], rel=1e-4) and linear.error < 1e-6
    assert binomial.params is None and binomial.points == len(COMM)
    assert linear.to_json()["params"]["b_us_per_byte"] == pytest.approx(1e-4, rel=1e-4)
