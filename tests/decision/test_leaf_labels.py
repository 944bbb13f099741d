"""The ties shape the tree, the measured times label its leaves (decision/leaf_labels.py)."""

import numpy as np
from hypothesis import given, settings, strategies as st

from quadsel.decision.best_first import grow_best_first
from quadsel.decision.builder import DEFAULT_BUILD, build_size_tree
from quadsel.decision.decision_map import DEFAULT_METHOD, build_decision_map
from quadsel.decision.grid import build_grid
from quadsel.decision.leaf_labels import label_costs, relabel
from quadsel.decision.library_default import with_default_column
from quadsel.decision.split import BlockCosts
from quadsel.evaluate.comparators import SingleBest, choice_on
from quadsel.ingest.table import Measurement

COMMS, MSGS = [2, 4, 8], [1, 64, 4096, 65536]


def rows(times, se, default=None):
    """Measurements of {algorithm: (C, M) times} with standard error `se` (200 calls each)."""
    out = []
    for alg, grid in times.items():
        for i, c in enumerate(COMMS):
            for j, m in enumerate(MSGS):
                out.append(Measurement("bcast", alg, 0, c, m, float(grid[i][j]), se * 200 ** 0.5, 200))
    if default is not None:
        out += [Measurement("bcast", "default", 0, c, m, float(default[i][j]), se * 200 ** 0.5, 200)
                for i, c in enumerate(COMMS) for j, m in enumerate(MSGS)]
    return out


def test_one_method_everywhere_is_the_single_best_not_the_least_often_significantly_worse():
    """Method 7 is 7 % slower than basic_linear everywhere, within the noise; basic_linear is beyond the noise
    slower at one point. Judged by the ties, 7 is never worse; by the measured times it loses 7 % almost
    everywhere. One leaf must be basic_linear, the single best method (two pooled runs of the ompi5-bcast
    example gave such a map, and its one-leaf tree lost 8.35 % against 3.69 % for the single best)."""
    linear = np.full((3, 4), 100.0)
    linear[2, 3] = 150.0
    knomial = np.full((3, 4), 107.0)
    dmap = build_decision_map(rows({"1": linear, "7": knomial}, se=5.0))
    fn = build_size_tree(dmap, **dict(DEFAULT_BUILD, max_leaves=1))
    assert {str(fn.query(c, m).algorithm) for c in COMMS for m in MSGS} == {"1"}
    assert (choice_on(SingleBest.fit(dmap), dmap) == 0).all()                  # the single best: "1" too
    tied = build_grid(dmap, "least-bad", "ci")
    assert tied.penalty[:, :, 1].sum() == 0 < tied.penalty[:, :, 0].sum()      # the ties alone would pick "7"


@settings(deadline=None, max_examples=40)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([1, 2, 3, 5, 8]), st.booleans())
def test_relabelling_keeps_the_shape_and_gives_each_leaf_its_least_measured_penalty(seed, budget, keep):
    rng = np.random.default_rng(seed)
    times = {str(k): rng.uniform(90, 110, size=(3, 4)) for k in (1, 2, 6)}
    default = rng.uniform(90, 110, size=(3, 4))
    dmap = build_decision_map(rows(times, se=rng.uniform(0.5, 8.0), default=default))
    work = with_default_column(dmap) if keep else dmap
    grid = build_grid(work, "least-bad", "ci")
    tree = grow_best_first(grid, budget, "penalty")
    labels = label_costs(grid)
    kept = work.methods.index(DEFAULT_METHOD) if keep else None
    out = relabel(tree, labels, grid.shape, "penalty", kept)
    for name in ("children", "comm_cut", "msg_cut", "depth"):
        assert np.array_equal(getattr(out, name), getattr(tree, name))
    r0, r1, c0, c1 = tree.blocks(*grid.shape)
    for node in np.flatnonzero(tree.is_leaf).tolist():
        if kept is not None and tree.method[node] == kept:
            assert out.method[node] == kept                      # the library default's leaves keep it
            continue
        block = grid.measured[r0[node]:r1[node], c0[node]:c1[node]] * \
            grid.weight[r0[node]:r1[node], c0[node]:c1[node], None]
        sums = block.sum(axis=(0, 1))
        assert sums[out.method[node]] <= sums.min() + 1e-9


def test_without_ties_within_the_noise_the_tree_is_left_alone():
    rng = np.random.default_rng(3)
    dmap = build_decision_map(rows({str(k): rng.uniform(90, 110, size=(3, 4)) for k in (1, 2, 6)}, se=2.0))
    assert build_grid(dmap, "least-bad", 0.0).measured is None
    assert build_grid(dmap, "least-bad", 5.0).measured is None        # a fixed tolerance: the user's equivalence
    no_spread = build_decision_map([Measurement(m.collective, m.algorithm, m.segsize, m.comm_size, m.msg_size, m.time)
                                    for m in rows({"1": np.full((3, 4), 1.0), "2": np.full((3, 4), 1.01)}, se=1.0)])
    assert build_grid(no_spread, "least-bad", "ci").measured is None  # ci without spread: nothing is tied
    exact = build_size_tree(dmap, split="measured", between="least-bad", leaf_rule="penalty")
    assert (exact.choice_grid() == np.argmin(dmap.cost, axis=2)).all()


@settings(deadline=None, max_examples=40)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from(["penalty", "majority"]))
def test_methods_of_many_blocks_are_each_blocks_method(seed, leaf_rule):
    """BlockCosts.methods (relabel's one array pass) gives BlockCosts.method of every block."""
    rng = np.random.default_rng(seed)
    dmap = build_decision_map(rows({str(k): rng.uniform(90, 110, size=(3, 4)) for k in (1, 2, 6)}, se=2.0))
    grid = build_grid(dmap, "least-bad", "ci")
    costs = BlockCosts(grid)
    rows_, cols = grid.shape
    r0 = rng.integers(0, rows_, 30)
    r1 = np.minimum(r0 + 1 + rng.integers(0, rows_, 30), rows_)
    c0 = rng.integers(0, cols, 30)
    c1 = np.minimum(c0 + 1 + rng.integers(0, cols, 30), cols)
    got = costs.methods((r0, r1, c0, c1), leaf_rule)
    assert got.tolist() == [costs.method((int(a), int(b), int(c), int(d)), leaf_rule)
                            for a, b, c, d in zip(r0, r1, c0, c1)]
