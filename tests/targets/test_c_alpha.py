"""A tree over the library's algorithms and quadsel's α-trees: every C form returns the α-tree ids
(libraries/alphatree.py) where the Python query picks an α-tree, the library's ids elsewhere, and the macros
of the generated C decode an id into its levels and α."""

import subprocess

import numpy as np
import pytest

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.errors import QuadselError
from quadsel.libraries import alphatree
from quadsel.targets import emit
from quadsel.targets.c_common import algorithm_ids

from helpers import table_from_cube

METHODS = [("6", 0), ("3", 8192), ("alpha-0.00", 0), ("alpha-0.25", 0), ("alpha-0.10-0.35", 0),
           ("alpha-0.00-0.50-0.25", 0)]


def alpha_fn(seed=0):
    """Regions won by each method (α-trees among them), a little noise; Open MPI data."""
    rng = np.random.default_rng(seed)
    comm, msg = np.arange(2, 12), 2 ** np.arange(0, 16)
    best = (np.arange(10)[:, None] // 4 * 2 + (np.arange(16)[None, :] >= 8)) % len(METHODS)
    cost = np.where(np.arange(len(METHODS))[None, None, :] == best[:, :, None], 1.0, 2.0)
    cost = cost * rng.uniform(1.0, 1.01, size=cost.shape)
    rows = table_from_cube(cost, comm, msg, METHODS)
    fn = build_size_tree(build_decision_map(rows), split="measured")
    fn.provenance["library"] = "openmpi"
    return fn


def test_ids_are_the_libraries_and_the_alpha_mapping():
    ids = algorithm_ids([type("M", (), {"algorithm": a})() for a, _ in METHODS], "bcast", "openmpi")
    assert {name: aid.number for name, aid in ids.items()} == {
        "6": 6, "3": 3, "alpha-0.00": 1000, "alpha-0.25": 1025, "alpha-0.10-0.35": 101035,
        "alpha-0.00-0.50-0.25": 10005025}


def test_every_c_form_returns_alpha_ids_equal_to_the_python_query(c_program):
    fn = alpha_fn()
    assert {fn.methods[k].algorithm for k in set(fn.tree.method[fn.tree.is_leaf].tolist())} >= {a for a, _ in METHODS[2:]}
    ids = algorithm_ids(fn.methods, fn.collective, "openmpi")
    sources = {"merged": emit("c", [fn], name="merged"), "paper": emit("c", [fn], name="paper", merge=False),
               "table": emit("c", [fn], flavor="table", name="table")}
    for source in sources.values():
        assert "no MPI library ships this algorithm" in source and "QUADSEL_ALPHA_PERCENT" in source
    program = c_program(sources, [emit("blob", [fn])])
    queries = [(c, m) for c in range(0, 14) for m in [0, 1, 3, 100, 127, 128, 129, 255, 256, 40000, 2**40]]
    chosen = fn.choices(np.array([c for c, _ in queries], dtype=np.int64),
                        np.array([m for _, m in queries], dtype=np.uint64))
    expected = [(ids[fn.methods[k].algorithm].number, fn.methods[k].segsize) for k in chosen.tolist()]
    asked = [(kind, i, c, m) for kind, i in [("f", 0), ("f", 1), ("f", 2), ("b", 0)] for c, m in queries]
    assert program.ask(asked) == expected * 4
    assert any(number >= 1000 for number, _ in expected) and any(number < 1000 for number, _ in expected)


DECODE = r"""
#include <stdio.h>
%s
int main(void)
{
    int id;
    while (scanf("%%d", &id) == 1) {
        int level;
        printf("%%d %%d", QUADSEL_IS_ALPHA_TREE(id), QUADSEL_IS_ALPHA_TREE(id) ? QUADSEL_ALPHA_LEVELS(id) : 0);
        for (level = 0; QUADSEL_IS_ALPHA_TREE(id) && level < QUADSEL_ALPHA_LEVELS(id); level++) {
            printf(" %%d", QUADSEL_ALPHA_PERCENT(id, level));
        }
        printf("\n");
    }
    return 0;
}
"""


def test_the_c_macros_decode_every_id(gcc, tmp_path):
    (tmp_path / "decode.c").write_text(DECODE % "\n".join(alphatree.C_MACROS))
    done = subprocess.run([gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o", str(tmp_path / "d"),
                           str(tmp_path / "decode.c")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    cases = [(p,) for p in range(51)] + [(a, b) for a in range(0, 51, 5) for b in range(0, 51, 7)] + \
            [(a, b, c) for a in (0, 13, 50) for b in (0, 49) for c in (1, 50)]
    ids = [6, 9] + [alphatree.method_id(p) for p in cases]
    out = subprocess.run([str(tmp_path / "d")], input=" ".join(map(str, ids)), capture_output=True, text=True).stdout
    expected = ["0 0", "0 0"] + [" ".join(map(str, (1, len(p)) + p)) for p in cases]
    assert out.split("\n")[:-1] == expected


def test_rules_files_refuse_a_tree_with_alpha_trees():
    fn = alpha_fn()
    for target in ("ompi-rules", "ompi-json"):     # (an MPICH file is refused for an Open MPI tree anyway)
        with pytest.raises(QuadselError, match="alpha-tree"):
            emit(target, [fn])


def test_codegen_command_writes_c_for_an_alpha_tree_and_refuses_a_rules_file(tmp_path):
    from click.testing import CliRunner
    from quadsel.cli import main
    path = tmp_path / "alpha.qt.json"
    alpha_fn().save(str(path))
    runner = CliRunner()
    done = runner.invoke(main, ["codegen", str(path), "-o", str(tmp_path / "a.c")])
    assert done.exit_code == 0, done.output
    assert "QUADSEL_ALPHA_LEVELS" in (tmp_path / "a.c").read_text()
    for target in ("ompi-rules", "ompi-json"):
        refused = runner.invoke(main, ["codegen", str(path), "-t", target, "-o", str(tmp_path / "r.txt")])
        assert refused.exit_code == 2 and "no MPI library ships" in refused.output and not (tmp_path / "r.txt").exists()
