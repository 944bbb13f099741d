import subprocess

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from quadsel.targets.c import algorithm_ids, function_name, generate_c, generate_c_table
from quadsel.decision.decision_function import build_decision_function
from quadsel.decision.decision_map import build_decision_map
from quadsel.errors import QuadselError

from helpers import random_table

NASTY = ["binomial", "Basic Linear", "a*/ b; }", "x\ny", "6", "int"]


def expected_answer(fn, comm, msg):
    """What the C function must return for a query: (algorithm id, segment size) from the Python tree."""
    method = fn.query(comm, msg)
    ids = algorithm_ids(fn.methods, fn.collective)
    token = ids[method.algorithm][0]
    number = int(token) if token.isdigit() else ids[method.algorithm][1]["id"]
    return number, method.segsize


def grid_queries(fn, rng, n_random=200):
    comm, msg = fn.comm_sizes, fn.msg_sizes
    queries = [(int(c), int(m)) for c in comm for m in msg]                      # every grid point
    queries += [(int(c) - 1, int(m) - 1) for c in comm for m in msg if m > 0]     # just below each
    queries += [(1, 0), (0, 0), (-5, 3), (10**6, 2**40), (int(comm[-1]) + 1, int(msg[-1]) + 1)]  # boundaries
    queries += [(int(rng.integers(-2, comm[-1] * 2 + 2)), int(rng.integers(0, msg[-1] * 2 + 2))) for _ in range(n_random)]
    return queries


@given(st.integers(0, 10**6), st.integers(1, 9), st.integers(1, 11), st.integers(1, 5),
       st.sampled_from([None, 0, 1, 2, 3]), st.sampled_from(["spread", "edge"]), st.booleans())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_both_c_forms_equal_python_query(compile_decision, seed, n_comm, n_msg, n_methods, max_depth, pad_mode, named):
    rng = np.random.default_rng(seed)
    rows, _, _ = random_table(rng, n_comm, n_msg, n_methods, names=NASTY if named else None)
    fn = build_decision_function(build_decision_map(rows), max_depth=max_depth, pad_mode=pad_mode)
    queries = grid_queries(fn, rng)
    expected = [expected_answer(fn, c, m) for c, m in queries]
    for generate in (generate_c, generate_c_table):   # nested if/else-if and the in-memory node table
        assert compile_decision(generate(fn), "quadsel_bcast_decision")(queries) == expected


def test_generated_c_has_the_papers_nested_structure_and_signature():
    rows, _, _ = random_table(np.random.default_rng(1), 4, 4, 3)
    source = generate_c(build_decision_function(build_decision_map(rows)))
    assert "int quadsel_bcast_decision(int comm_size, size_t msg_size, int *segsize)" in source
    assert "if (comm_size < " in source and "if (msg_size < (size_t)" in source and "} else {" in source


def test_names_become_defines_with_sanitized_identifiers():
    rows, _, _ = random_table(np.random.default_rng(2), 3, 3, 6, names=NASTY)
    source = generate_c(build_decision_function(build_decision_map(rows)))
    assert "#define QUADSEL_BCAST_ALG_BASIC_LINEAR" in source
    assert "a*/" not in source and "x\ny" not in source


def test_function_name_must_be_a_c_identifier():
    assert function_name("bcast") == "quadsel_bcast_decision"
    assert function_name("bcast", "my_bcast") == "my_bcast"
    for bad in ("1abc", "a-b", "int", "x; system()"):
        with pytest.raises(QuadselError):
            function_name("bcast", bad)


def test_single_leaf_tree_compiles_without_unused_parameter_warnings(compile_decision):
    rows, _, _ = random_table(np.random.default_rng(3), 2, 2, 1)
    fn = build_decision_function(build_decision_map(rows))
    assert fn.tree.n_nodes == 1
    ask = compile_decision(generate_c(fn, name="one_leaf"), "one_leaf")
    assert ask([(2, 0)]) == [(1, 0)]


def test_generated_c_of_a_wide_grid_compiles_with_strict_flags(gcc, tmp_path):
    rows, _, _ = random_table(np.random.default_rng(4), 30, 40, 6)
    path = tmp_path / "d.c"
    path.write_text(generate_c(build_decision_function(build_decision_map(rows))))
    subprocess.run([gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", str(path), "-o",
                    str(tmp_path / "d.o")], check=True)
