"""The C of a layout forest (targets/c_forest.py): compiles strictly, and answers what the Python query answers for
every (ppn, comm, msg) at the measured values and their boundaries."""

import re
import subprocess

import pytest
from hypothesis import given, settings, strategies as st

from quadsel.targets import emit

from conftest import GCC_FLAGS
from layout_helpers import forest_of, layout_rows, probe_sizes

DRIVER = r"""
#include <stdio.h>
#include <stddef.h>
int %(name)s(int comm_size, int ppn, size_t msg_size, int *segsize);
int main(void)
{
    long ppn, comm; unsigned long long msg; int seg;
    while (scanf("%%ld %%ld %%llu", &ppn, &comm, &msg) == 3) {
        int alg = %(name)s((int)comm, (int)ppn, (size_t)msg, &seg);
        printf("%%d %%d\n", alg, seg);
    }
    return 0;
}
"""


def compiled(gcc, folder, source, name="quadsel_bcast_decision"):
    (folder / "forest.c").write_text(source)
    (folder / "driver.c").write_text(DRIVER % {"name": name})
    result = subprocess.run([gcc, *GCC_FLAGS, "-o", str(folder / "decide"), str(folder / "forest.c"),
                             str(folder / "driver.c")], capture_output=True, text=True)
    assert result.returncode == 0, f"gcc rejected the forest's C:\n{result.stderr}"

    def ask(queries):
        text = "".join(f"{p} {c} {m}\n" for p, c, m in queries)
        out = subprocess.run([str(folder / "decide")], input=text, check=True, capture_output=True, text=True).stdout
        return [tuple(int(v) for v in line.split()) for line in out.splitlines()]
    return ask


def queries(forest):
    ppns = sorted({0, 1} | {b + d for b in forest.bounds.tolist() for d in (-1, 0, 1)} | {2 ** 31 - 1})
    comms, msgs = set(), set()
    for member in forest.layers:
        comms |= set(probe_sizes(member.tree.comm_sizes, int(member.tree.comm_sizes[-1])))
        msgs |= set(probe_sizes(member.tree.msg_sizes, int(member.tree.msg_sizes[-1])))
        comms |= {int(v) + d for v in member.tree.comm_axis.lo for d in (-1, 0)}    # bounds past the range too
        msgs |= {int(v) + d for v in member.tree.msg_axis.lo for d in (-1, 0) if v + d >= 0}
    comms = sorted(c for c in comms if 1 <= c < 2 ** 31) + [2 ** 31 - 1]
    return [(p, c, m) for p in ppns for c in comms for m in sorted(msgs) + [2 ** 63 - 1]]


def ids_of(source):
    """name -> id of the #defines (quadsel's numbering), from the generated source."""
    return {name: int(number) for number, name in re.findall(r"#define \w+ (\d+) /\* (.*?) \*/", source)}


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 10 ** 6), st.sampled_from([(1, 2, 4), (1, 4), (2,), (1, 2, 8, 16)]),
       st.sampled_from(["exact", "budget", "paper", "default", "bounded"]), st.booleans())
def test_forest_c_answers_as_the_python_query(gcc, tmp_path_factory, seed, ppns, build, named):
    names = ("binomial", "ring", "Basic Linear", "x.y") if named else ("1", "6", "8")
    options = {"exact": dict(split="measured", between="least-bad", leaf_rule="penalty"),
               "budget": dict(split="measured", between="least-bad", leaf_rule="penalty", max_leaves=3),
               "paper": dict(max_depth=2),
               "default": dict(split="measured", between="least-bad", leaf_rule="penalty", keep_default=True,
                               outside="default"),
               # the members' sides decided by their folds, bounded two steps out (decision/reach.py)
               "bounded": dict(split="measured", between="least-bad", leaf_rule="penalty", keep_default=True,
                               tolerance="ci", max_leaves="auto", outside="auto", bound_outside=True)}[build]
    forest = forest_of(layout_rows(seed, ppns=ppns, names=names, default=build in ("default", "bounded"),
                                   n_msg=8 if build == "bounded" else 5), **options)
    check_forest_c(gcc, tmp_path_factory.mktemp("forest"), forest, named)


def test_a_forest_whose_members_are_bounded_answers_as_the_python_query(gcc, tmp_path):
    forest = forest_of(layout_rows(2, ppns=(1, 2, 4), default=True, n_msg=8), split="measured", between="least-bad",
                       leaf_rule="penalty", keep_default=True, tolerance="ci", max_leaves="auto", outside="auto",
                       bound_outside=True)
    assert any(layer.tree.options.outside_reach for layer in forest.layers)
    check_forest_c(gcc, tmp_path, forest, False)


def check_forest_c(gcc, folder, forest, named):
    """The forest's C, compiled, answers every query (layout bounds, sizes at and around every cell) as Python."""
    source = emit("c", [forest])
    assert source.count("int quadsel_bcast_decision(int comm_size, int ppn, size_t msg_size, int *segsize)") == 2
    defines = re.findall(r"#define (\w+)", source)
    assert len(defines) == len(set(defines))                        # one id table for every layout
    ask = compiled(gcc, folder, source)
    asked = queries(forest)
    got = ask(asked)
    ids = ids_of(source)
    methods = forest.methods_at(*zip(*asked))
    for (p, c, m), answer, method in zip(asked, got, methods):
        alg = 0 if method.algorithm == "default" else ids[method.algorithm] if named else int(method.algorithm)
        assert answer == (alg, method.segsize), (p, c, m, method)


def test_a_single_layout_forest_ignores_ppn_without_a_warning(gcc, tmp_path):
    forest = forest_of(layout_rows(1, ppns=(4,)))
    ask = compiled(gcc, tmp_path, emit("c", [forest]))
    assert ask([(1, 8, 100), (64, 8, 100)])[0] == ask([(1, 8, 100), (64, 8, 100)])[1]


@pytest.mark.parametrize("target,flavor,words", [
    ("c", "table", "--target c --flavor table cannot express a layout forest"),
    ("c", "ompi-tuned", "--flavor ompi-tuned cannot express"),
    ("blob", "plain", "--target blob cannot express a layout forest"),
    ("impi-adjust", "plain", "I_MPI_ADJUST strings key on process count only"),
])
def test_targets_without_a_ppn_key_refuse_a_forest_in_one_line(target, flavor, words):
    from quadsel.errors import QuadselError
    forest = forest_of(layout_rows(2))
    with pytest.raises(QuadselError) as err:
        emit(target, [forest], flavor=flavor)
    assert words in str(err.value) and "\n" not in str(err.value)
