import re
import subprocess

import numpy as np
import pytest

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.errors import QuadselError
from quadsel.targets.c import generate_c
from quadsel.targets.c_common import algorithm_ids, function_name
from quadsel.targets.c_branches import function_size, merged_ir

from helpers import random_table, table_from_cube

NASTY = ["binomial", "Basic Linear", "a*/ b; }", "x\ny", "6", "int"]


def body(source):
    """The decision part of a generated function: between the parameter casts and the segsize store."""
    return source.split("(void)msg_size;")[1].split("if (segsize != NULL)")[0]


def fn_of_map(best, methods=(("1", 0), ("2", 0), ("3", 0)), comm=None, msg=None, **options):
    """The tree of a map whose best method at (ci, mi) is best[ci][mi] (cost 1 there, 2 elsewhere)."""
    best = np.asarray(best)
    comm = np.arange(2, 2 + best.shape[0]) if comm is None else np.asarray(comm)
    msg = 2 ** np.arange(best.shape[1]) if msg is None else np.asarray(msg)
    cost = np.where(np.arange(len(methods))[None, None, :] == best[:, :, None], 1.0, 2.0)
    return build_size_tree(build_decision_map(table_from_cube(cost, comm, msg, list(methods))), **options)


def test_generated_c_has_the_papers_nested_structure_and_signature():
    rows, _, _ = random_table(np.random.default_rng(1), 4, 4, 3)
    fn = build_size_tree(build_decision_map(rows))
    source = generate_c(fn)
    assert "int quadsel_bcast_decision(int comm_size, size_t msg_size, int *segsize)" in source
    assert "if (comm_size < " in source and "if (msg_size < (size_t)" in source and "} else {" in source
    paper = generate_c(fn, merge=False)           # §3.2: if (NW) {...} else if (NE) {...} else if (SW) ... (SE)
    assert re.search(r"if \(comm_size < \d+ && msg_size < \(size_t\)\d+\) \{ /\* NW \*/", paper)
    assert re.search(r"\} else if \(comm_size >= \d+ && msg_size >= \(size_t\)\d+\) \{ /\* SE \*/", paper)


@pytest.mark.parametrize("seed", range(6))
def test_function_size_counts_the_tests_of_the_generated_c_and_every_chain_ends_in_else(seed):
    rows, _, _ = random_table(np.random.default_rng(seed), 3 + seed, 4 + 2 * seed, 2 + seed % 3)
    fn = build_size_tree(build_decision_map(rows), max_depth=seed % 4 or None)
    merged, paper = body(generate_c(fn)), body(generate_c(fn, merge=False))
    size, paper_size = function_size(fn), function_size(fn, merge=False)
    assert merged.count("if (") == size.tests and paper.count("if (") == paper_size.tests
    assert merged.count("alg = ") == size.assignments and paper.count("alg = ") == paper_size.assignments
    assert merged.count("} else") == size.tests           # every test has an else branch: chains end in `else`
    assert paper_size.assignments == fn.tree.n_leaves      # the paper's form emits every leaf
    tree_order = function_size(fn, order="tree")           # the quadtree's order: a binary tree within its leaves
    assert tree_order.tests <= min(paper_size.tests, fn.tree.n_leaves - 1)
    header = generate_c(fn)
    assert f"Function size: {size.tests} tests" in header and f"unmerged form: {paper_size.tests} tests" in header


def test_merging_drops_a_test_when_three_quadrants_share_a_method():
    # NW, NE and SW are method 0, SE method 1: comm < c ? 0 : (msg < m ? 0 : 1) — 2 tests where the paper has 4
    fn = fn_of_map([[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]])
    assert fn.tree.n_leaves == 4
    assert function_size(fn).tests == 2 and function_size(fn, merge=False).tests == 4


def test_merging_folds_a_cut_whose_far_side_repeats_the_near_subtree():
    # one row [0, 1, 1, 1]: the paper's tree cuts at 4 (west [0, 1] | east [1, 1]) and at 2; one test is enough
    fn = fn_of_map([[0, 1, 1, 1]])
    ir, root = merged_ir(fn.tree)
    assert function_size(fn, merge=False).tests == 4 and ir.tests(root) == 1
    assert "if (msg_size < (size_t)2) {" in generate_c(fn)


def test_merged_ir_has_no_test_that_cannot_change_the_outcome():
    rows, _, _ = random_table(np.random.default_rng(11), 12, 20, 3)
    ir, root = merged_ir(build_size_tree(build_decision_map(rows)).tree)
    todo, seen = [root], 0
    while todo:
        key = ir.nodes[todo.pop()]
        if key[0] != "leaf":
            assert key[2] != key[3]
            todo += [key[2], key[3]]
            seen += 1
    assert seen == ir.tests(root) > 0


def test_orfeo_bcast_depth3_function_has_fewer_tests_than_leaves(orfeo):
    from quadsel.ingest import read_measurements
    files = sorted(orfeo.glob("bcast_algo*.csv")) + [orfeo / "bcast_default.csv"]
    fn = build_size_tree(build_decision_map(read_measurements([str(f) for f in files])), max_depth=3)
    assert function_size(fn).tests < fn.tree.n_leaves == 49
    assert body(generate_c(fn)).count("if (") == function_size(fn).tests


@pytest.mark.parametrize("library, names, ids", [
    ("openmpi", ["binomial", "basic_linear", "2", "pipeline"], [6, 1, 2, 3]),
    ("mpich", ["binomial", "scatter_ring_allgather", "tree", "smp"], [1, 5, 7, 3]),
])
def test_known_library_c_returns_the_librarys_own_ids(compile_decision, library, names, ids):
    fn = fn_of_map([[0, 1, 2, 3], [3, 2, 1, 0]], methods=[(n, 0) for n in names])
    source = generate_c(fn, library=library)
    assert "#define" not in source
    assert {aid.number for aid in algorithm_ids(fn.methods, "bcast", library).values()} == set(ids)
    ask = compile_decision(source, "quadsel_bcast_decision")
    queries = [(int(c), int(m)) for c in fn.comm_sizes for m in fn.msg_sizes]
    expected = [(ids[names.index(fn.query(c, m).algorithm)], 0) for c, m in queries]
    assert ask(queries) == expected


def test_library_ids_refuse_names_the_library_does_not_have():
    fn = fn_of_map([[0, 1]], methods=[("binomial", 0), ("6", 0)])
    with pytest.raises(QuadselError, match="not an MPICH bcast algorithm"):
        generate_c(fn, library="mpich")
    assert re.search(r"#define QUADSEL_BCAST_ALG_BINOMIAL [12] ", generate_c(fn))   # unknown library: 1..n
    with pytest.raises(QuadselError, match="not an Open MPI"):
        generate_c(fn_of_map([[0, 1]], methods=[("nonsense", 0), ("6", 0)]), library="openmpi")


def test_names_become_defines_with_sanitized_identifiers():
    rows, _, _ = random_table(np.random.default_rng(2), 3, 3, 6, names=NASTY)
    source = generate_c(build_size_tree(build_decision_map(rows)))
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
    fn = build_size_tree(build_decision_map(rows))
    assert fn.tree.n_nodes == 1
    ask = compile_decision(generate_c(fn, name="one_leaf"), "one_leaf")
    assert ask([(2, 0)]) == [(1, 0)]


def test_generated_c_of_a_wide_grid_compiles_with_strict_flags(gcc, tmp_path):
    rows, _, _ = random_table(np.random.default_rng(4), 30, 40, 6)
    path = tmp_path / "d.c"
    path.write_text(generate_c(build_size_tree(build_decision_map(rows))))
    subprocess.run([gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", str(path), "-o",
                    str(tmp_path / "d.o")], check=True)
