"""Every C form of a tree answers what the Python query answers: the merged if/else-if in both orders (fewest
expected tests, the default, and the quadtree's own), the paper's if/else-if, the
`--flavor table` C (the grid table, or the node table when the grid is too large), each of those two layouts
forced, and the loadable blob — at every grid point, at the boundaries and at random sizes,
compiled with gcc and clang under strict flags, and once more under AddressSanitizer + UBSan."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.targets import emit
from quadsel.targets.c_common import algorithm_ids
from quadsel.targets.c_grid import generate_c_grid
from quadsel.targets.c_table import generate_c_table, table_of

from helpers import random_table, table_from_cube

INT_MIN, INT_MAX, SIZE_MAX = -2**31, 2**31 - 1, 2**64 - 1
NASTY = ["binomial", "Basic Linear", "a*/ b; }", "x\ny", "6", "int"]
FORMS = ("merged", "tree", "paper", "table", "grid", "nodes")


def structured_rows():
    """A map of a few large regions (what merging is for), with one odd point."""
    comm, msg = np.arange(2, 14), 2 ** np.arange(0, 18)
    best = (np.arange(12)[:, None] >= 5).astype(int) + 2 * (np.arange(18)[None, :] >= 11)
    best[3, 4] = 3
    cost = np.where(np.arange(4)[None, None, :] == best[:, :, None], 1.0, 2.0)
    return table_from_cube(cost, comm, msg, [("1", 0), ("2", 0), ("3", 0), ("6", 0)])


def wide_rows():
    """300 message sizes, methods alternating: more than 255 message cuts, so the table takes wide nodes."""
    comm, msg = np.array([2, 4]), np.arange(1, 301) * 8
    cost = np.where(np.arange(2)[None, None, :] == (np.arange(300) % 2)[None, :, None], 1.0, 2.0)
    return table_from_cube(np.repeat(cost, 2, axis=0), comm, msg, [("1", 0), ("2", 0)])


def random_rows(seed, n_comm, n_msg, n_methods, names=None):
    return random_table(np.random.default_rng(seed), n_comm, n_msg, n_methods, names=names)[0]


def default_rows(seed, n_comm, n_msg, n_methods, names=None):
    """Random rows with the library default measured too (regions of the tree hand back to it)."""
    rng = np.random.default_rng(seed)
    rows, comm, msg = random_table(rng, n_comm, n_msg, n_methods, names=names)
    return list(rows) + list(table_from_cube(rng.uniform(1.0, 100.0, (len(comm), len(msg), 1)), comm, msg,
                                             [("default", 0)]))


HAND_BACK = {"split": "measured", "between": "least-bad", "leaf_rule": "penalty", "keep_default": True,
             "outside": "default"}


def reach_rows():
    """Random times with the default at fixed sizes, for bounds past each side (decision/reach.py)."""
    rng = np.random.default_rng(14)
    comm, msg = np.array([4, 8, 16, 32]), np.array([64, 256, 1024, 4096])
    return table_from_cube(rng.uniform(1.0, 100.0, (4, 4, 3)), comm, msg, [("1", 0), ("2", 0), ("3", 0)],
                           default=rng.uniform(1.0, 100.0, (4, 4)))


ZOO_SPECS = [
    (lambda: random_rows(1, 1, 1, 1), {}),
    (lambda: random_rows(2, 2, 2, 1), {}),
    (lambda: random_rows(3, 4, 5, 3), {}),
    (lambda: random_rows(4, 8, 20, 4), {"max_depth": 3}),
    (lambda: random_rows(5, 7, 21, 6, NASTY), {"max_depth": 2, "pad_mode": "edge"}),
    (lambda: random_rows(6, 30, 40, 6), {}),
    (lambda: random_rows(7, 9, 11, 3), {"split": "measured"}),
    (lambda: random_rows(8, 9, 11, 3, NASTY), {"split": "measured", "between": "least-bad"}),
    (lambda: random_rows(9, 12, 16, 5), {"split": "measured", "max_leaves": 10}),
    (lambda: random_rows(10, 5, 30, 2), {"split": "measured", "between": "least-bad", "leaf_rule": "penalty"}),
    (structured_rows, {}),
    (structured_rows, {"split": "measured", "between": "least-bad"}),
    (wide_rows, {"split": "measured"}),
    (lambda: default_rows(11, 6, 9, 3), HAND_BACK),
    (lambda: default_rows(12, 1, 1, 2, NASTY), HAND_BACK),
    (lambda: default_rows(13, 8, 12, 4), dict(HAND_BACK, max_leaves=12)),     # 6 inside, 6 outside
    (structured_rows, {"outside": "default"}),
    (reach_rows, dict(HAND_BACK, outside_reach={"comm_below": 3, "comm_above": 64, "msg_below": 16,
                                                "msg_above": 16384})),
    (reach_rows, dict(HAND_BACK, outside_sides=["comm_above", "msg_below"], outside_reach={"comm_above": 33})),
]


@pytest.fixture(scope="module")
def zoo():
    return [build_size_tree(build_decision_map(rows()), **options) for rows, options in ZOO_SPECS]


def test_zoo_covers_both_node_layouts_and_one_leaf_trees(zoo):
    assert {table_of(fn).layout["bytes"] for fn in zoo} == {4, 8}
    assert min(fn.tree.n_nodes for fn in zoo) == 1


def sources(zoo):
    out = {}
    for t, fn in enumerate(zoo):
        out[f"t{t}_merged"] = emit("c", [fn], name=f"t{t}_merged")
        out[f"t{t}_tree"] = emit("c", [fn], name=f"t{t}_tree", order="tree")
        out[f"t{t}_paper"] = emit("c", [fn], name=f"t{t}_paper", merge=False)
        out[f"t{t}_table"] = emit("c", [fn], flavor="table", name=f"t{t}_table")
        out[f"t{t}_grid"] = generate_c_grid(fn, name=f"t{t}_grid")
        out[f"t{t}_nodes"] = generate_c_table(fn, name=f"t{t}_nodes")
    return out


@pytest.fixture(scope="module")
def program(c_program, zoo):
    return c_program(sources(zoo), [emit("blob", [fn]) for fn in zoo], opt="-O2")


def python_answers(fn, comms, msgs):
    """(algorithm id, segment size) the Python query gives for each (comm, msg)."""
    ids = algorithm_ids(fn.methods, fn.collective)
    chosen = fn.choices(np.array(comms, dtype=np.int64), np.array(msgs, dtype=np.uint64))
    return [(ids[fn.methods[k].algorithm].number, fn.methods[k].segsize) for k in chosen.tolist()]


def boundary_queries(fn):
    """Every grid point, each measured size +-1, 0, 1 and the type limits, crossed."""
    comms = {INT_MIN, -1, 0, 1, INT_MAX - 1, INT_MAX} | {int(c) + d for c in fn.comm_sizes for d in (-1, 0, 1)}
    msgs = {0, 1, 2**32, 2**63, SIZE_MAX - 1, SIZE_MAX} | {int(m) + d for m in fn.msg_sizes for d in (-1, 0, 1) if m + d >= 0}
    comms |= {int(c) + d for c in fn.comm_axis.lo for d in (-1, 0)}     # every cell's first size (bounds: reach.py)
    msgs |= {int(m) + d for m in fn.msg_axis.lo for d in (-1, 0) if m + d >= 0}
    return [(c, m) for c in sorted(comms) for m in sorted(msgs)]


def check(program, zoo, queries_per_tree):
    """Ask every form of every tree its queries; compare with Python."""
    asked, expected = [], []
    for t, (fn, queries) in enumerate(zip(zoo, queries_per_tree)):
        if not queries:
            continue
        answers = python_answers(fn, *zip(*queries))
        for f in range(len(FORMS)):
            asked += [("f", len(FORMS) * t + f, c, m) for c, m in queries]
            expected += answers
        asked += [("b", t, c, m) for c, m in queries]
        expected += answers
    got = program.ask(asked)
    wrong = [(q, e, g) for q, e, g in zip(asked, expected, got) if e != g]
    assert not wrong, f"{len(wrong)} wrong answers, e.g. (query, python, C) {wrong[:5]}"


def test_every_form_equals_python_at_grid_points_and_boundaries(program, zoo):
    check(program, zoo, [boundary_queries(fn) for fn in zoo])


def near(fn):
    """Sizes near the tree's own measured sizes, where the cuts are."""
    return (st.sampled_from([int(c) for c in fn.comm_sizes]).flatmap(lambda c: st.integers(c - 3, c + 3)),
            st.sampled_from([int(m) for m in fn.msg_sizes]).flatmap(lambda m: st.integers(max(m - 3, 0), m + 3)))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(data=st.data())
def test_every_form_equals_python_on_random_off_grid_queries(program, zoo, data):
    per_tree = []
    for fn in zoo:
        near_comm, near_msg = near(fn)
        comm = st.one_of(st.integers(INT_MIN, INT_MAX), st.integers(-2, 2 * int(fn.comm_sizes[-1]) + 2), near_comm)
        msg = st.one_of(st.integers(0, SIZE_MAX), st.integers(0, 2 * int(fn.msg_sizes[-1]) + 2), near_msg)
        per_tree.append(data.draw(st.lists(st.tuples(comm, msg), max_size=12)))
    check(program, zoo, per_tree)


def test_every_form_runs_clean_under_address_and_undefined_sanitizers(c_program, zoo):
    sanitized = c_program(sources(zoo), [emit("blob", [fn]) for fn in zoo], sanitize=True)
    check(sanitized, zoo, [boundary_queries(fn)[::3] for fn in zoo])


OPTIONS = [{}, {"max_depth": 1}, {"max_depth": 2, "pad_mode": "edge"}, {"accuracy_threshold": 0.6},
           {"split": "measured"}, {"split": "measured", "between": "least-bad"},
           {"split": "measured", "max_leaves": 5, "leaf_rule": "penalty"}, HAND_BACK, {"outside": "default"}]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.integers(1, 9), st.integers(1, 12), st.integers(1, 5), st.sampled_from(OPTIONS),
       st.booleans())
def test_every_form_of_random_trees_equals_python(c_program, seed, n_comm, n_msg, n_methods, options, named):
    rows = (default_rows if options.get("keep_default") else random_rows)(seed, n_comm, n_msg, n_methods,
                                                                        NASTY if named else None)
    fn = build_size_tree(build_decision_map(rows), **options)
    program = c_program(sources([fn]), [emit("blob", [fn])])
    check(program, [fn], [boundary_queries(fn)])
