"""Intel MPI's I_MPI_ADJUST_<COLL> strings: the emitted string, read back as Intel MPI reads it, agrees with the
tree's own query everywhere; malformed strings are refused at their line; trees of other libraries are refused."""

import re
import shlex

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from quadsel.cli import main
from quadsel.errors import InputError, QuadselError
from quadsel.targets import emit
from quadsel.targets import impi_adjust
from quadsel.targets.rule_list import inside_rule_list
from quadsel.targets.rules_file import read_rules_file

from helpers import probe_points, random_fn

INTEL_IDS = {"bcast": ["1", "2", "3", "7", "8"], "reduce": ["1", "2", "5", "7"], "allreduce": ["1", "2", "3", "8", "9"]}


def intel_fn(seed, collective, n_comm=4, n_msg=6, max_depth=None, library_default=False):
    fn = random_fn(seed, n_comm, n_msg, len(INTEL_IDS[collective]), max_depth, names=INTEL_IDS[collective],
                   collective=collective, library_default=library_default)
    fn.provenance["library"] = "intelmpi"
    return fn


def inside(fn, comm, msg):
    """Is (comm, msg) inside the tree's measured range (where Intel MPI's files answer as the tree does)?"""
    return (int(fn.comm_sizes[0]) <= comm <= int(fn.comm_sizes[-1])
            and int(fn.msg_sizes[0]) <= msg <= int(fn.msg_sizes[-1]))


def expressible(fn):
    """Message ranges alone or process ranges alone: what Intel MPI 2021.x follows (impi_adjust.adjust_value)."""
    ranges = inside_rule_list(fn, "intelmpi").ranges()
    return len(ranges) == 1 or all(len(msgs) == 1 for _, _, msgs in ranges)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), collective=st.sampled_from(sorted(INTEL_IDS)), depth=st.sampled_from([None, 1, 2]),
       n_comm=st.sampled_from([1, 4]), library_default=st.booleans())
def test_string_read_back_agrees_with_the_tree_or_is_refused(tmp_path_factory, seed, collective, depth, n_comm,
                                                              library_default):
    fn = intel_fn(seed, collective, n_comm=n_comm, max_depth=depth, library_default=library_default)
    if not expressible(fn):
        with pytest.raises(QuadselError, match="-t impi-json") as info:
            emit("impi-adjust", [fn])
        assert "\n" not in str(info.value)
        return
    text = emit("impi-adjust", [fn])
    assert "@" not in text.split("export", 1)[1] or all(len(m) == 1 for _, _, m in
                                                        inside_rule_list(fn, "intelmpi").ranges())
    path = tmp_path_factory.mktemp("impi") / "tuned.env"
    path.write_text(text)
    rules = read_rules_file(str(path), text)
    assert rules.format == "impi-adjust" and rules.library == "intelmpi" and rules.collectives == [collective]
    for comm, msg in probe_points(fn):
        if msg > impi_adjust.MAX_VALUE or not inside(fn, comm, msg):
            continue
        want = fn.query(comm, msg).algorithm
        assert rules.pick(collective, comm, msg).label == ("0" if want == "default" else want), (comm, msg)


def test_a_one_size_tree_that_hands_outside_sizes_to_the_default_gets_message_ranges_only():
    # issue 31: measured at 2 ranks, the default build hands comm 1 and 3+ back to the library default, and the
    # writer emitted `msg@procs` rules (whose message part Intel MPI 2021.18 ignores) with preset 0 there
    for seed in range(20):
        fn = intel_fn(seed, "allreduce", n_comm=1, library_default=True)
        assert fn.options.outside == "default"
        value = emit("impi-adjust", [fn]).strip().splitlines()[-1].split("=", 1)[1]
        assert "@" not in value, value
        rules = impi_adjust.parse_value(shlex.split(value)[0], "x", 1)
        for msg in fn.msg_sizes.tolist():
            want = fn.query(int(fn.comm_sizes[0]), msg).algorithm
            got = impi_adjust.lookup(rules, int(fn.comm_sizes[0]), msg).preset
            assert str(got) == ("0" if want == "default" else want)


def test_every_size_is_covered_once_and_bounds_stay_below_2_31():
    fn = intel_fn(3, "allreduce", n_comm=1, n_msg=8)
    line = emit("impi-adjust", [fn]).strip().splitlines()[-1]
    assert line.startswith("export I_MPI_ADJUST_ALLREDUCE=")
    value = shlex.split(line.split("=", 1)[1])[0]
    rules = impi_adjust.parse_value(value, "x", 1)
    numbers = [int(n) for n in re.findall(r"\d+", value)]
    assert max(numbers) <= impi_adjust.MAX_VALUE
    rng = np.random.default_rng(0)
    for comm, msg in zip(rng.integers(1, 5000, 300), rng.integers(0, impi_adjust.MAX_VALUE, 300)):
        assert sum(r.matches(int(comm), int(msg)) for r in rules) == 1


def test_reader_semantics_first_match_then_last_rule():
    rules = impi_adjust.parse_value("2:0-1024@1-16;5:1025-65536@1-16", "f", 3)
    assert impi_adjust.lookup(rules, 8, 1024).preset == 2
    assert impi_adjust.lookup(rules, 8, 1025).preset == 5
    assert impi_adjust.lookup(rules, 32, 10).preset == 5      # nothing matches: the last rule (observed, 2021.18)
    assert [r.preset for r in impi_adjust.parse_value("3", "f", 1)] == [3]


@pytest.mark.parametrize("text,line,needle", [
    ("export I_MPI_ADJUST_BCAST=x:0-10\n", 1, "preset"),
    ("# c\nexport I_MPI_ADJUST_BCAST=1:10-5@1-2\n", 2, "lower end"),
    ("export I_MPI_ADJUST_BCAST=1:0-2147483648@1-2\n", 1, "above 2147483647"),
    ("export I_MPI_ADJUST_BCAST=1:0-5\nexport I_MPI_ADJUST_BCAST=2\n", 2, "set twice"),
    ("export I_MPI_ADJUST_BCAST=1:0-5\nrubbish\n", 2, "not an I_MPI_ADJUST"),
])
def test_malformed_strings_are_refused_at_their_line(text, line, needle):
    with pytest.raises(InputError) as info:
        impi_adjust.read(text, "tuned.env")
    assert f"tuned.env:{line}:" in str(info.value) and needle in str(info.value)


def test_default_regions_become_preset_0_with_a_note():
    from quadsel.decision.decision_map import Method
    preset, note = impi_adjust.preset_of("bcast", Method("default", 0))
    assert preset == 0 and "basic selection logic" in note


def test_trees_of_other_libraries_are_refused_in_one_line():
    fn = intel_fn(1, "bcast")
    for target in ("ompi-rules", "ompi-json"):
        with pytest.raises(QuadselError, match="Intel MPI measurements and .* is read by Open MPI"):
            emit(target, [fn])
    fn.provenance["library"] = "openmpi"
    with pytest.raises(QuadselError, match="Open MPI measurements and impi-adjust is read by Intel MPI"):
        emit("impi-adjust", [fn])


def test_cli_writes_the_string_and_refuses_a_conflicting_library(tmp_path):
    fn = intel_fn(5, "allreduce", n_comm=1)
    tree = tmp_path / "ar.qt.json"
    tree.write_text(fn.dumps())
    out = tmp_path / "tuned.env"
    done = CliRunner().invoke(main, ["codegen", "-t", "impi-adjust", str(tree), "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert "export I_MPI_ADJUST_ALLREDUCE=" in out.read_text()
    done = CliRunner().invoke(main, ["codegen", str(tree), "--library", "openmpi"])
    assert done.exit_code == 2 and len(done.output.strip().splitlines()) == 1
    assert "Intel MPI measurements; --library Open MPI differs" in done.output
