"""Intel MPI's JSON tuning file (I_MPI_TUNING): the emitted file, read back with the matching Intel MPI 2021.18.1
was measured to use (docs/deploy.md), answers as `quadsel query` on the tree at every measured point and at the
boundaries between them; the reader's matching rule itself; malformed files refused at their line."""

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from quadsel.cli import main
from quadsel.errors import InputError, QuadselError
from quadsel.targets import emit, impi_json
from quadsel.targets.rules_file import detect_format, read_rules_file
from quadsel.verify.follow import file_environment

from helpers import probe_points
from test_impi_adjust import INTEL_IDS, inside, intel_fn


def read_back(tmp_path, text):
    path = tmp_path / "tuning.json"
    path.write_text(text)
    return read_rules_file(str(path), text)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), collective=st.sampled_from(sorted(INTEL_IDS)), depth=st.sampled_from([None, 1, 2]),
       n_comm=st.sampled_from([1, 3, 5]), library_default=st.booleans())
def test_file_read_back_answers_as_the_tree_at_every_measured_point_and_boundary(tmp_path_factory, seed, collective,
                                                                                 depth, n_comm, library_default):
    fn = intel_fn(seed, collective, n_comm=n_comm, max_depth=depth, library_default=library_default)
    rules = read_back(tmp_path_factory.mktemp("impi"), emit("impi-json", [fn]))
    assert rules.format == "impi-json" and rules.library == "intelmpi" and rules.collectives == [collective]
    checked = 0
    for comm, msg in probe_points(fn):     # measured sizes and the sizes just below and above each
        if not inside(fn, comm, msg):
            continue      # outside: the tree hands back to the default, which the file cannot name (extrapolated)
        want = fn.query(comm, msg).algorithm
        assert rules.pick(collective, comm, msg).label == ("0" if want == "default" else want), (comm, msg)
        checked += 1
    assert checked >= len(fn.comm_sizes) * len(fn.msg_sizes)


def test_outside_the_measured_range_the_nearest_measured_rules_apply(tmp_path):
    fn = intel_fn(7, "allreduce", n_comm=3, library_default=True)
    rules = read_back(tmp_path, emit("impi-json", [fn]))
    c0, c1, m0, m1 = (int(fn.comm_sizes[0]), int(fn.comm_sizes[-1]), int(fn.msg_sizes[0]), int(fn.msg_sizes[-1]))
    for comm, near_comm in ((1, c0), (c1 + 5, c1)):
        for msg, near_msg in ((0, m0), (m1 * 4, m1), (m0, m0)):
            want = fn.query(near_comm, near_msg).algorithm
            assert rules.pick("allreduce", comm, msg).label == ("0" if want == "default" else want)


def test_levels_ascend_with_minus_one_last_and_one_ppn_block():
    fns = [intel_fn(11, "bcast", n_comm=4), intel_fn(12, "allreduce", n_comm=4)]
    doc = json.loads(emit("impi-json", fns))
    assert list(doc) == ["coll=Bcast", "coll=Allreduce"]
    for coll in doc.values():
        assert list(coll) == ["ppn=-1"]
        comms = coll["ppn=-1"]
        values = [int(k.split("=")[1]) for k in comms]
        assert values[-1] == -1 and values[:-1] == sorted(values[:-1])
        for level in comms.values():
            assert list(level) == ["comm_id=-1"]
            msgs = [int(k.split("=")[1]) for k in level["comm_id=-1"]]
            assert msgs[-1] == -1 and msgs[:-1] == sorted(msgs[:-1]) and max(msgs) < 2 ** 31


# The matching measured on Intel MPI 2021.18.1 (docs/deploy.md, "Intel MPI's JSON tuning file"): at every
# level the first entry in file order whose value is -1 or >= the call's; none: the last entry.
def tuning(ppns):
    return json.dumps({"coll=Allreduce": {f"ppn={p}": {f"comm_size={c}": {"comm_id=-1": {
        f"msg_size={m}": {f"ALLREDUCE={a}": {}} for m, a in msgs}} for c, msgs in comms} for p, comms in ppns}})


@pytest.mark.parametrize("ppns,points", [
    # msg3: upper bounds, inclusive; -1 the rest
    ([(2, [(2, [(1024, 3), (8192, 7), (-1, 8)])])], {(2, 8): 3, (2, 1024): 3, (2, 1032): 7, (2, 8192): 7, (2, 8200): 8}),
    # no -1: above the last key, the last entry
    ([(2, [(2, [(1024, 3), (8192, 7)])])], {(2, 8200): 7, (2, 65536): 7}),
    # file order, not sorted: 1016 <= 8192 comes first
    ([(2, [(2, [(8192, 7), (1024, 3), (-1, 8)])])], {(2, 1016): 7, (2, 8200): 8}),
    # comm_size: upper bounds too (3 ranks take comm_size=4); order matters (-1 first takes everything)
    ([(4, [(2, [(-1, 8)]), (4, [(-1, 7)])])], {(2, 64): 8, (3, 64): 7, (4, 64): 7}),
    ([(4, [(-1, [(-1, 7)]), (2, [(-1, 8)])])], {(2, 64): 7, (3, 64): 7}),
    # ppn is the communicator's (one node: its size): 2 ranks take ppn=2, 3 ranks ppn=4; none >= 4: the last
    ([(2, [(2, [(-1, 3)]), (3, [(-1, 7)]), (4, [(-1, 3)])]), (4, [(2, [(-1, 8)]), (3, [(-1, 8)]), (4, [(-1, 7)])])],
     {(2, 64): 3, (3, 64): 8, (4, 64): 7}),
    ([(1, [(2, [(-1, 8)]), (3, [(-1, 8)]), (4, [(-1, 7)])]), (3, [(2, [(-1, 3)]), (3, [(-1, 7)]), (4, [(-1, 3)])])],
     {(2, 64): 3, (3, 64): 7, (4, 64): 3}),
])
def test_reader_matches_as_intel_mpi_was_measured_to(tmp_path, ppns, points):
    rules = read_back(tmp_path, tuning(ppns))
    for (comm, msg), preset in points.items():
        assert rules.pick("allreduce", comm, msg).label == str(preset), (comm, msg)


def test_names_in_any_case_and_the_verify_launch_loads_it_through_i_mpi_tuning(tmp_path):
    text = '{"coll=allreduce": {"ppn=-1": {"comm_size=-1": {"comm_id=-1": {"msg_size=-1": {"allreduce=4": {}}}}}}}'
    assert detect_format(text) == "impi-json"
    rules = read_back(tmp_path, text)
    assert rules.pick("allreduce", 2, 8).label == "4"
    assert file_environment("intelmpi", str(tmp_path / "tuning.json")) == {"I_MPI_TUNING": str(tmp_path / "tuning.json")}


@pytest.mark.parametrize("text,line,needle", [
    ('{"coll=Bcast": {"comm_size=2": {}}}', 1, '"ppn=N"'),
    ('{\n"coll=Bcast": {\n"ppn=2": {\n"comm_size=x": {}}}}', 4, '"comm_size=N"'),
    ('{"coll=Bcast": {"ppn=-2": {}}}', 1, "-1 (any)"),
    ('{"coll=Bcast": {"ppn=2": {"comm_size=2": {"comm_id=3": {"msg_size=-1": {"BCAST=1": {}}}}}}}', 1, "comm_id=-1"),
    ('{"coll=Bcast": {"ppn=2": {"comm_size=2": {"comm_id=-1": {"msg_size=-1": {"REDUCE=1": {}}}}}}}', 1, "BCAST=ID"),
    ('{"coll=Bcast": {"ppn=2": {"comm_size=2": {"comm_id=-1": {"msg_size=-1": {}}}}}}', 1, "BCAST=ID"),
    ('{"coll=Bcast": {"ppn=2": {"comm_size=2": {"comm_id=-1": {"msg_size=2147483648": {"BCAST=1": {}}}}}}}', 1, "0..2147483647"),
    ('{"coll=Bcast": {"ppn=2": {"comm_size=2": {"comm_id=-1": {"msg_size=-1": {"BCAST=1": {}}}}}},\n'
     ' "coll=bcast": {}}', 2, "twice"),
])
def test_malformed_files_are_refused_at_their_line(text, line, needle):
    with pytest.raises(InputError) as info:
        impi_json.read(text, "t.json")
    assert f"t.json:{line}:" in str(info.value) and needle in str(info.value), str(info.value)


def test_cli_writes_the_file_and_prints_what_it_cannot_say(tmp_path):
    fn = intel_fn(5, "allreduce", n_comm=2, library_default=True)
    tree = tmp_path / "ar.qt.json"
    tree.write_text(fn.dumps())
    out = tmp_path / "tuning.json"
    done = CliRunner().invoke(main, ["codegen", "-t", "impi-json", str(tree), "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert list(json.loads(out.read_text())) == ["coll=Allreduce"]
    assert "note: allreduce: the tree hands the sizes outside its measured range" in done.output
    for comm in fn.comm_sizes.tolist():         # quadsel query answers as the file does at the measured points
        for msg in fn.msg_sizes.tolist():
            got = CliRunner().invoke(main, ["query", str(tree), "--comm", str(comm), "--msg", str(msg)])
            want = got.output.split()[0]
            pick = read_rules_file(str(out)).pick("allreduce", comm, msg).label
            assert pick == ("0" if want == "default" else want)
    fn.provenance["library"] = "openmpi"
    with pytest.raises(QuadselError, match="Open MPI measurements and impi-json is read by Intel MPI"):
        emit("impi-json", [fn])
