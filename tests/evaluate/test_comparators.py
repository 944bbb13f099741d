import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from quadsel.evaluate.comparators import CartSelector, QuadtreeSelector, RunLengthTable, SingleBest, choice_on, method_name
from quadsel.evaluate.model import ModelSelector
from quadsel.models.fit import fit_model
from quadsel.models.forms import FORMS, hockney_terms as model_terms, model_family
from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import Method, build_decision_map
from quadsel.evaluate.penalty import penalty_grid, summarize

from helpers import random_table, table_from_cube


def _dmap(seed, n_comm=6, n_msg=9, n_methods=3):
    rows, _, _ = random_table(np.random.default_rng(seed), n_comm, n_msg, n_methods)
    return build_decision_map(rows)


def _mean(dmap, selector):
    return summarize(penalty_grid(dmap, choice_on(selector, dmap)), dmap).mean


@given(st.integers(0, 10**6), st.integers(1, 9), st.integers(1, 12), st.integers(1, 4))
@settings(max_examples=40, deadline=None)
def test_run_length_table_is_exact_on_its_training_points(seed, n_comm, n_msg, n_methods):
    dmap = _dmap(seed, n_comm, n_msg, n_methods)
    table = RunLengthTable.fit(dmap)
    assert np.array_equal(choice_on(table, dmap), dmap.best)
    assert summarize(penalty_grid(dmap, choice_on(table, dmap)), dmap).max == 0.0
    # runs are merged: neighbouring rules of one communicator size never repeat a method
    for bounds, choice in table.rules:
        assert bounds[0] == 0 and np.all(choice[1:] != choice[:-1])
    assert table.size == sum(1 + np.count_nonzero(np.diff(dmap.best[c])) for c in range(n_comm))


def test_run_length_table_reads_sizes_with_the_floor_rule():
    cost = np.array([[[1.0, 2.0], [2.0, 1.0], [2.0, 1.0]], [[2.0, 1.0], [1.0, 2.0], [1.0, 2.0]]])
    dmap = build_decision_map(table_from_cube(cost, [4, 16], [8, 64, 512], [("1", 0), ("2", 0)]))
    table = RunLengthTable.fit(dmap)
    assert table.size == 4
    assert [b.tolist() for b, _ in table.rules] == [[0, 64], [0, 64]]
    one, two = Method("1"), Method("2")
    assert table.choose(2, 0) == one          # below the first comm size: the first one's rules
    assert table.choose(15, 63) == one and table.choose(15, 64) == two and table.choose(15, 10**9) == two
    assert table.choose(10**5, 8) == two and table.choose(16, 100) == one


@pytest.mark.parametrize("seed", range(5))
def test_single_best_is_the_best_constant_choice_and_never_beats_the_exact_tree(seed):
    dmap = _dmap(seed)
    single = SingleBest.fit(dmap)
    exact = QuadtreeSelector.of(build_size_tree(dmap))
    assert _mean(dmap, exact) == 0.0 and _mean(dmap, single) >= 0.0
    constant = [summarize(penalty_grid(dmap, np.full(dmap.shape, k)), dmap).mean for k in range(len(dmap.methods))]
    assert _mean(dmap, single) == pytest.approx(min(constant))
    assert single.size == 1


@pytest.mark.parametrize("seed", range(3))
def test_quadtree_selector_answers_like_the_decision_function(seed):
    dmap = _dmap(seed)
    fn = build_size_tree(dmap, max_depth=2)
    selector = QuadtreeSelector.of(fn)
    assert np.array_equal(choice_on(selector, dmap), fn.choice_grid())
    rng = np.random.default_rng(seed)
    for comm, msg in zip(rng.integers(1, 400, 50), rng.integers(0, 1 << 22, 50)):
        assert selector.choose(int(comm), int(msg)) == fn.query(int(comm), int(msg))
    assert selector.size == fn.tree.n_leaves


def test_choice_on_matches_methods_of_another_map():
    full = _dmap(3, n_methods=3)
    keep = [m for m in full.methods if m.algorithm != full.methods[0].algorithm]
    rows = [r for r in random_table(np.random.default_rng(3), 6, 9, 3)[0] if Method(r.algorithm, r.segsize) in keep]
    train = build_decision_map(rows)
    grid = choice_on(SingleBest.fit(train), full)
    assert full.methods[int(grid[0, 0])] in keep


@pytest.mark.parametrize("budget", [1, 2, 4, 9, 30])
def test_cart_respects_its_leaf_budget(budget):
    pytest.importorskip("sklearn")
    dmap = _dmap(11, 8, 12, 4)
    cart = CartSelector.fit(dmap, budget)
    assert 1 <= cart.size <= budget
    stats = cart.stats()
    assert stats["leaves"] == cart.size and stats["nodes"] == 2 * cart.size - 1
    assert choice_on(cart, dmap).shape == dmap.shape


def test_cart_with_enough_leaves_reproduces_the_map():
    pytest.importorskip("sklearn")
    dmap = _dmap(5, 5, 7, 3)
    cart = CartSelector.fit(dmap, dmap.best.size)
    assert np.array_equal(choice_on(cart, dmap), dmap.best)


@pytest.mark.parametrize("family", sorted(FORMS))
@pytest.mark.parametrize("segsize", [0, 8192])
def test_model_fit_recovers_known_parameters(family, segsize):
    comm = np.repeat([2, 3, 4, 8, 13, 16, 32, 64], 12)
    msg = np.tile(2 ** np.arange(0, 24, 2), 8)
    truth = np.array([0.7, 1.9, 3e-4])
    x = model_terms(family, comm, msg, segsize)
    params = fit_model(x, x @ truth)
    assert params == pytest.approx(truth, rel=1e-4)


def test_model_selector_picks_the_fastest_predicted_method():
    comm_sizes, msg_sizes = [2, 4, 8, 16, 32, 64], [2 ** i for i in range(0, 21, 2)]
    methods = [("1", 0), ("6", 0)]          # bcast: basic_linear (P-1 steps) and binomial (log2 P steps)
    cc, mm = np.meshgrid(comm_sizes, msg_sizes, indexing="ij")
    linear = model_terms("linear", cc.ravel(), mm.ravel(), 0) @ [0.5, 0.2, 1e-4]
    tree = model_terms("tree", cc.ravel(), mm.ravel(), 0) @ [0.5, 1.0, 1e-4]
    cost = np.stack([linear, tree], axis=1).reshape(len(comm_sizes), len(msg_sizes), 2)
    dmap = build_decision_map(table_from_cube(cost, comm_sizes, msg_sizes, methods))
    model = ModelSelector.fit(dmap)
    assert [m.family for m in model.models] == ["linear", "tree"]
    assert model.models[0].params == pytest.approx([0.5, 0.2, 1e-4], rel=1e-4)
    assert np.array_equal(choice_on(model, dmap), dmap.best)
    assert model.size == 6
    assert model.choose(1000, 1 << 20) == Method("6")      # far outside the data: still the formula


def test_model_families_and_names():
    assert model_family(Method("6"), "bcast")[:2] == ("tree", "binomial")
    assert model_family(Method("3", 8192), "bcast")[0] == "pipeline"
    assert model_family(Method("7"), "reduce")[0] == "scatter_allgather"
    assert model_family(Method("scatter_ring_allgather"), "bcast")[0] == "ring"
    assert model_family(Method("smp"), "bcast") == ("tree", "smp", True)
    assert method_name(Method("6"), "bcast") == "6 binomial"
    assert method_name(Method("3", 8192), "bcast") == "3 pipeline/seg8192"
    assert method_name(Method("binomial"), "bcast") == "binomial"
