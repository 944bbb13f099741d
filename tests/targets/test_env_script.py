"""The job-environment script (`-t env-script`): sourced by `sh` with each layout's variables (QUADSEL_PPN,
QUADSEL_NODES + QUADSEL_NP, Slurm's SLURM_NTASKS_PER_NODE and SLURM_TASKS_PER_NODE), it exports exactly the
I_MPI_ADJUST_<COLL> strings `-t impi-adjust` writes for the forest member the layout's ppn selects (the first bound
>= ppn, else the last); with no layout known, the last member's, and one line on stderr; shellcheck-clean."""

import shutil
import subprocess

import pytest
from hypothesis import assume, given, settings, strategies as st

from quadsel.errors import QuadselError
from quadsel.targets import emit, impi_adjust

from layout_helpers import forest_of, layout_rows

NAMES = ("1", "2", "3", "7", "8")      # Intel MPI bcast presets
SHELLS = [s for s in ("sh", "bash", "dash", "busybox") if shutil.which(s)]


def intel_forest(seed, ppns, nodes=(2,), depth=None):
    forest = forest_of(layout_rows(seed, ppns=ppns, nodes=nodes, names=NAMES), max_depth=depth)
    for member in forest.layers:
        member.tree.provenance["library"] = "intelmpi"
    return forest


def adjust_strings(fn):
    """{variable: value} that `-t impi-adjust` writes for one 2-D tree (what `. FILE` exports)."""
    return impi_adjust.environment(emit("impi-adjust", [fn]), "member.env")


def sourced(path, variables, shell="sh"):
    """({I_MPI_ADJUST_*: value}, stderr, every other variable the script left set) after `. path` under `shell`."""
    argv = [shell, "sh"] if shell == "busybox" else [shell]
    script = '. "$1" && set'
    done = subprocess.run(argv + ["-c", script, "sh", str(path)], env={"PATH": "/usr/bin:/bin", **variables},
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    exported = subprocess.run(argv + ["-c", '. "$1" && env', "sh", str(path)],
                              env={"PATH": "/usr/bin:/bin", **variables}, capture_output=True, text=True, timeout=30)
    env = dict(line.split("=", 1) for line in exported.stdout.splitlines() if line.startswith("I_MPI_ADJUST_"))
    leftovers = [line for line in done.stdout.splitlines() if line.startswith("quadsel_")]
    return env, done.stderr, leftovers


def ways(ppn, nodes):
    """Every way a job script can tell the script a layout of `nodes` x `ppn` ranks."""
    return [{"QUADSEL_PPN": str(ppn)},
            {"QUADSEL_NODES": str(nodes), "QUADSEL_NP": str(nodes * ppn)},
            {"QUADSEL_NODES": str(nodes), "SLURM_NTASKS": str(nodes * ppn)},
            {"SLURM_NTASKS_PER_NODE": str(ppn), "SLURM_NNODES": str(nodes)},
            {"SLURM_TASKS_PER_NODE": f"{ppn}(x{nodes})" if nodes > 1 else str(ppn)}]


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10 ** 6), st.sampled_from([(1, 2, 4), (1, 8), (4,), (2, 3, 16)]), st.sampled_from([None, 1, 2]),
       st.sampled_from([(2,), (1, 2, 4)]))
def test_each_layout_exports_the_impi_adjust_strings_of_its_member(tmp_path_factory, seed, ppns, depth, nodes):
    forest = intel_forest(seed, ppns, nodes, depth)
    try:
        text = emit("env-script", [forest])
    except QuadselError as exc:       # a member changes with both sizes: no string can say it (impi-adjust's refusal)
        assert "-t impi-json" in str(exc) and "\n" not in str(exc)
        assume(False)
    path = tmp_path_factory.mktemp("env") / "tuned.sh"
    path.write_text(text)
    bounds = forest.bounds.tolist()
    for ppn in sorted({1, 2 ** 20} | {b + d for b in bounds for d in (-1, 0, 1) if b + d >= 1}):
        member = next((m for m in forest.layers if m.ppn >= ppn), forest.layers[-1])   # the forest's rule
        want = adjust_strings(member.tree)
        for n in (1, 3):
            if ppn * n > 999_999_999:
                continue
            for variables in ways(ppn, n):
                got, err, left = sourced(path, variables)
                assert got == want, (ppn, n, variables)
                assert err == "" and left == []


def test_uneven_slurm_tasks_per_node_take_the_ceiling_of_the_average(tmp_path):
    forest = intel_forest(4, (1, 2, 4))
    path = tmp_path / "tuned.sh"
    path.write_text(emit("env-script", [forest]))
    by_bound = {m.ppn: adjust_strings(m.tree) for m in forest.layers}
    assert len({str(v) for v in by_bound.values()}) > 1, "the test needs members that differ"
    # 3(x2),1: 7 tasks on 3 nodes, ppn = ceil(7 / 3) = 3 -> the ppn<=4 member; 2,1: ceil(3 / 2) = 2
    for value, ppn in (("3(x2),1", 3), ("2,1", 2), ("1(x4)", 1), ("4,4,4", 4), ("5(x2)", 5)):
        member = next((m for m in forest.layers if m.ppn >= ppn), forest.layers[-1])
        assert sourced(path, {"SLURM_TASKS_PER_NODE": value})[0] == by_bound[member.ppn], value


@pytest.mark.parametrize("variables", [{}, {"QUADSEL_PPN": "abc"}, {"QUADSEL_PPN": "0"}, {"QUADSEL_PPN": "08"},
                                       {"QUADSEL_PPN": "99999999999999999999"}, {"QUADSEL_NODES": "2"},
                                       {"QUADSEL_NODES": "x", "QUADSEL_NP": "4"}, {"SLURM_TASKS_PER_NODE": "2(x"},
                                       {"SLURM_TASKS_PER_NODE": "$(touch /tmp/quadsel-env-pwned)"}])
def test_no_layout_known_exports_the_last_member_and_says_so(tmp_path, variables):
    forest = intel_forest(4, (1, 2, 4))
    path = tmp_path / "tuned.sh"
    path.write_text(emit("env-script", [forest]))
    got, err, left = sourced(path, variables)
    assert got == adjust_strings(forest.layers[-1].tree)
    assert err.count("\n") == 1 and "no job layout known" in err and f"bcast ppn>{forest.layers[-2].ppn}" in err
    assert left == []
    assert not shutil.os.path.exists("/tmp/quadsel-env-pwned")


def test_several_collectives_each_by_its_own_bounds_and_a_2d_tree_whatever_the_layout(tmp_path):
    bcast = intel_forest(8, (1, 4))
    reduce = as_collective(layout_rows(9, ppns=(2, 8), nodes=(2,), names=("1", "2", "5", "7")), "reduce")
    allreduce = as_collective(layout_rows(10, ppns=(4,), nodes=(2,), names=("1", "2", "3", "8")), "allreduce")
    assert len(allreduce.layers) == 1
    allreduce = allreduce.layers[0].tree                     # a 2-D tree
    for fn in [m.tree for m in bcast.layers + reduce.layers] + [allreduce]:
        fn.provenance["library"] = "intelmpi"
    path = tmp_path / "tuned.sh"
    path.write_text(emit("env-script", [bcast, reduce, allreduce]))
    for ppn in (1, 2, 3, 4, 5, 8, 9):
        want = {}
        for forest in (bcast, reduce):
            want.update(adjust_strings(next((m for m in forest.layers if m.ppn >= ppn), forest.layers[-1]).tree))
        want.update(adjust_strings(allreduce))
        for shell in SHELLS:
            assert sourced(path, {"QUADSEL_PPN": str(ppn)}, shell)[0] == want, (ppn, shell)


def test_a_member_no_string_can_express_is_refused_naming_its_layout():
    for seed in range(40):
        forest = intel_forest(seed, (1, 2), nodes=(1, 2, 4))
        try:
            emit("env-script", [forest])
        except QuadselError as exc:
            assert str(exc).startswith("layout ppn") and "-t impi-json" in str(exc)
            return
    pytest.fail("no random forest with a member that changes with both sizes")


def as_collective(rows, collective):
    from dataclasses import replace
    from quadsel.decision.builder import build_size_tree
    from quadsel.decision.layouts import build_from_groups, layout_groups
    rows = [replace(r, collective=collective) for r in rows]
    return build_from_groups(layout_groups(rows), collective, lambda d: build_size_tree(d, outside="extrapolate"))[0]


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed (apt-get install shellcheck)")
def test_shellcheck_finds_nothing(tmp_path):
    path = tmp_path / "tuned.sh"
    path.write_text(emit("env-script", [intel_forest(4, (1, 2, 4)), ]))
    done = subprocess.run(["shellcheck", "--severity=style", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
