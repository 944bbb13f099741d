"""The layout columns (nodes, ppn) and --layout: read, derived, checked at their line, never pooled."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from quadsel.cli import main
from quadsel.decision.decision_map import build_decision_map
from quadsel.errors import InputError, QuadselError
from quadsel.ingest import read_measurements


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("nodes,ppn", [("nodes", "ppn"), ("nnodes", "procs_per_node"), ("NumNodes", "ranks per node"),
                                       ("nodes", "tasks-per-node")])
def test_aliases_are_read_and_a_missing_comm_size_is_derived(tmp_path, nodes, ppn):
    path = write(tmp_path, "a.csv", f"collective,algorithm,msg_size,time_us,{nodes},{ppn}\nbcast,6,8,1.5,2,3\n")
    (m,) = read_measurements(path)
    assert (m.comm_size, m.nodes, m.ppn, m.layout) == (6, 2, 3, (2, 3))


def test_one_of_nodes_and_ppn_is_derived_from_the_comm_size(tmp_path):
    path = write(tmp_path, "a.csv", "collective,algorithm,comm_size,msg_size,time_us,nodes,ppn\n"
                                    "bcast,6,8,1,1.0,2,\nbcast,6,12,1,1.0,,4\n")
    assert sorted(m.layout for m in read_measurements(path)) == [(2, 4), (3, 4)]


@pytest.mark.parametrize("row,line_words", [
    ("bcast,6,8,1,1.0,3,3", "communicator size 8 is not nodes x ppn = 3 x 3"),
    ("bcast,6,8,1,1.0,3,", "not a multiple of the node count 3"),
    ("bcast,6,8,1,1.0,,3", "not a multiple of the ppn 3"),
    ("bcast,6,8,1,1.0,0,8", "node count 0 must be at least 1"),
    ("bcast,6,8,1,1.0,2,x", "ranks per node (ppn) 'x' is not a whole number"),
])
def test_an_inconsistent_layout_is_one_error_naming_file_and_line(tmp_path, row, line_words):
    path = write(tmp_path, "a.csv", "collective,algorithm,comm_size,msg_size,time_us,nodes,ppn\n"
                                    "bcast,6,8,1,1.0,2,4\n" + row + "\n")
    with pytest.raises(InputError) as err:
        read_measurements(path)
    assert str(err.value).startswith(f"{path}:3: ") and line_words in str(err.value)
    assert "\n" not in str(err.value)


def test_layout_option_gives_every_row_its_layout_and_checks_the_comm_size(tmp_path):
    path = write(tmp_path, "a.csv", "collective,algorithm,comm_size,msg_size,time_us\nbcast,6,8,1,1.0\n")
    (m,) = read_measurements(path, layout=(2, 4))
    assert m.layout == (2, 4)
    with pytest.raises(InputError, match=r"a\.csv:2: communicator size 8 is not nodes x ppn = 4 x 4 \(--layout 4x4"):
        read_measurements(path, layout=(4, 4))


def test_layout_option_gives_an_osu_file_its_communicator_size(tmp_path):
    path = write(tmp_path, "osu_bcast.txt", "# OSU MPI Broadcast Latency Test v7.3\n# Size       Avg Latency(us)\n"
                                            "1                       2.41\n")
    (m,) = read_measurements(path, layout=(2, 8))
    assert (m.comm_size, m.nodes, m.ppn) == (16, 2, 8)


def test_two_files_of_one_comm_size_in_two_layouts_are_never_pooled(tmp_path):
    a = write(tmp_path, "a.csv", "collective,algorithm,comm_size,msg_size,time_us\nbcast,6,4,1,10.0\nbcast,1,4,1,20.0\n")
    b = write(tmp_path, "b.csv", "collective,algorithm,comm_size,msg_size,time_us\nbcast,6,4,1,30.0\nbcast,1,4,1,5.0\n")
    rows = read_measurements([a, b], layout=None)
    assert len(rows) == 2 and {m.time for m in rows} == {20.0, 12.5}        # today: pooled (the layout is unknown)
    a2 = write(tmp_path, "a2.csv", "collective,algorithm,comm_size,msg_size,time_us,nodes,ppn\n"
                                   "bcast,6,4,1,10.0,4,1\nbcast,1,4,1,20.0,4,1\n")
    b2 = write(tmp_path, "b2.csv", "collective,algorithm,comm_size,msg_size,time_us,nodes,ppn\n"
                                   "bcast,6,4,1,30.0,2,2\nbcast,1,4,1,5.0,2,2\n")
    rows = read_measurements([a2, b2])
    assert sorted((m.algorithm, m.ppn, m.time) for m in rows) == [("1", 1, 20.0), ("1", 2, 5.0), ("6", 1, 10.0),
                                                                   ("6", 2, 30.0)]
    with pytest.raises(QuadselError, match="2 layouts .ppn 1, 2.: a decision map is one ranks-per-node"):
        build_decision_map(rows)


def test_rows_with_and_without_a_layout_refuse_in_one_line_naming_layout_option(tmp_path):
    a = write(tmp_path, "a.csv", "collective,algorithm,comm_size,msg_size,time_us\nbcast,6,4,1,10.0\n")
    b = write(tmp_path, "b.csv", "collective,algorithm,comm_size,msg_size,time_us,nodes,ppn\nbcast,6,4,1,30.0,2,2\n")
    result = CliRunner().invoke(main, ["build", a, b, "-o", str(tmp_path / "t.json")])
    assert result.exit_code == 2
    message = result.output.strip().splitlines()
    assert len(message) == 1 and "a.csv:2 has no layout" in message[0] and "--layout NODESxPPN" in message[0]
    assert "never pooled" in message[0]


def test_the_cli_layout_option_and_its_refusals(tmp_path):
    a = write(tmp_path, "a.csv", "collective,algorithm,comm_size,msg_size,time_us\nbcast,6,4,1,10.0\nbcast,1,4,1,2.0\n")
    result = CliRunner().invoke(main, ["build", a, "--layout", "2x2", "-o", str(tmp_path / "t.json")])
    assert result.exit_code == 0, result.output
    assert '"format": "quadsel-layout-forest"' in Path(tmp_path / "t.json").read_text()
    bad = CliRunner().invoke(main, ["build", a, "--layout", "2by2"])
    assert bad.exit_code == 2 and "NODESxPPN" in bad.output


def test_layout_columns_read_the_row_way_give_what_the_same_file_without_them_gives(tmp_path):
    body = "".join(f"bcast,{a},{n},{m},{1.0 + a + n / (m + 1):.4f},0.1,10\n" for a in (1, 6) for n in (2, 4, 8)
                   for m in (1, 64, 4096))
    plain = write(tmp_path, "p.csv", "collective,algorithm,comm_size,msg_size,time_us,stddev_us,reps\n" + body)
    laid = write(tmp_path, "l.csv", "collective,algorithm,comm_size,msg_size,time_us,stddev_us,reps,ppn\n" +
                 body.replace("\n", ",2\n"))
    strip = lambda rows: [(m.algorithm, m.comm_size, m.msg_size, m.time, m.stddev, m.reps) for m in rows]  # noqa
    laid_rows = read_measurements(laid)
    assert strip(laid_rows) == strip(read_measurements(plain))
    assert {m.layout for m in laid_rows} == {(1, 2), (2, 2), (4, 2)}
