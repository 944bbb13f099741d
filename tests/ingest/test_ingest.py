"""Readers of every input format, content detection, file-name rules and aggregation."""

import csv
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quadsel.errors import InputError
from quadsel.ingest import GENERIC_COLUMNS, Measurement, aggregate, detect_format, read_measurements
from quadsel.ingest.names import COLLECTIVES, FileName, normalise_collective
from quadsel.ingest.skampi import parse_name

DATA = Path(__file__).parents[1] / "data" / "ingest"


def points(rows):
    """Rows without their source, for comparing values."""
    return [(m.collective, m.algorithm, m.segsize, m.comm_size, m.msg_size, m.time, m.stddev, m.reps) for m in rows]


# -- generic and third-party CSV ------------------------------------------------------------------
def test_generic_csv_reads_aggregates_and_normalises():
    rows = read_measurements(DATA / "generic.csv")
    # ids make it Open MPI's data, so "binomial" is id 6: one method with the rows of "6" (identity rules)
    assert [(m.algorithm, m.segsize, m.comm_size, m.msg_size) for m in rows] == [
        ("3", 8192, 8, 65536), ("6", 0, 4, 1024), ("6", 0, 8, 1024), ("default", 0, 8, 65536)]
    assert rows.library == "openmpi" and any("'binomial' -> 6" in note for note in rows.notes)
    assert {m.collective for m in rows} == {"bcast"}  # "MPI_Bcast" too
    repeated = rows[1]
    assert repeated.time == 13.1  # median of 12.5, 13.1 and the disturbed 40.0
    # its standard error is the mean's over the three runs, from their disagreement (sample sd / sqrt(3)),
    # not the spread divided by the 600 calls: stddev / sqrt(reps) gives it back
    assert repeated.reps == 600
    assert repeated.stddev / 600 ** 0.5 == pytest.approx(15.7067925858 / 3 ** 0.5)
    assert repeated.source.endswith("generic.csv:3 (+2 repeats)")
    pooled = rows[2]   # "6" at 17.25 µs (no stddev, no reps) and "binomial" at 16.0 µs
    assert pooled.time == pytest.approx(16.625) and pooled.reps is None
    assert pooled.source.endswith("generic.csv:7 (+1 repeats)")
    assert rows[3].is_default and rows[3].source.endswith("generic.csv:9")


def test_third_party_headers_aliases_units_and_collective_from_file_name():
    rows = read_measurements(DATA / "allreduce_units.csv")
    assert [(m.collective, m.algorithm, m.segsize, m.comm_size, m.msg_size, m.reps) for m in rows] == [
        ("allreduce", "recursive_doubling", 0, 2, 8, 1000),
        ("allreduce", "ring", 0, 2, 8, 1000),
        ("allreduce", "ring", 0, 16, 4096, 500),
    ]
    # Avg Latency (ms) and Std (ms) in microseconds; Min/Max Latency are read past.
    assert [m.time for m in rows] == pytest.approx([1.8, 2.1, 45.3])
    assert [m.stddev for m in rows] == pytest.approx([0.2, 0.1, 1.1])


def test_stddev_without_a_unit_is_in_the_time_unit(tmp_path):
    path = tmp_path / "bcast_seconds.csv"
    path.write_text("procs,bytes,alg,time(s),std\n2,8,1,0.000002,0.0000005\n")
    [row] = read_measurements(path)
    assert (row.time, row.stddev) == pytest.approx((2.0, 0.5))


def test_column_map_names_unrecognised_columns():
    mapping = {"comm_size": "ranks_used", "msg_size": "payload", "algorithm": "impl", "time": "mean_time"}
    rows = read_measurements(DATA / "mapped.csv", collective="reduce", column_map=mapping)
    # linear and binary are coll/tuned's own reduce names: Open MPI data, read as ids 1 and 4
    assert points(rows) == [("reduce", "1", 0, 4, 16, 3.5, None, None),
                            ("reduce", "4", 0, 4, 16, 2.75, None, None),
                            ("reduce", "4", 0, 32, 16, 7.0, None, None)]
    with pytest.raises(InputError, match=r"mapped.csv:1: unknown column 'ranks_used'"):
        read_measurements(DATA / "mapped.csv", collective="reduce")


def test_column_map_wins_over_an_alias():
    rows = read_measurements(DATA / "allreduce_units.csv", column_map={"time": "Max Latency(us)"})
    assert [m.time for m in rows] == [2.0, 2.4, 49.7]


def test_column_map_to_a_missing_column_names_the_header_line():
    with pytest.raises(InputError, match=r"mapped.csv:1: --map time=Latency: no column 'Latency'"):
        read_measurements(DATA / "mapped.csv", collective="reduce", column_map={"time": "Latency"})


def test_algorithm_and_segment_size_from_the_file_name():
    rows = read_measurements(DATA / "bcast_alg6_seg1024.csv")
    assert points(rows) == [("bcast", "6", 1024, 2, 1024, 3.2, None, None),
                            ("bcast", "6", 1024, 4, 1024, 5.9, None, None)]


def test_csv_comm_size_from_option_when_no_column(tmp_path):
    path = tmp_path / "bcast_run.csv"
    path.write_text("Size,Algorithm,Latency(us)\n8,binomial,1.5\n")
    assert read_measurements(path, comm_size=64)[0].comm_size == 64


def test_default_rows_in_any_spelling_become_default(tmp_path):
    path = tmp_path / "bcast_mixed.csv"
    path.write_text("Processes,Size,Algorithm,Latency(us)\n2,8, Default ,1.0\n2,16,DEFAULT,1.1\n2,32,default,1.2\n")
    rows = read_measurements(path)
    assert [m.algorithm for m in rows] == ["default"] * 3 and all(m.is_default for m in rows)


def test_csv_with_a_collective_column_is_filtered_by_the_option(tmp_path):
    path = tmp_path / "both.csv"
    path.write_text("collective,algorithm,procs,bytes,time\nbcast,1,2,8,1.0\nreduce,1,2,8,2.0\n")
    assert [m.collective for m in read_measurements(path)] == ["bcast", "reduce"]
    assert points(read_measurements(path, collective="MPI_Reduce")) == [("reduce", "1", 0, 2, 8, 2.0, None, None)]


# -- SKaMPI ---------------------------------------------------------------------------------------
def test_skampi_blocks_loop_variables_and_names():
    rows = read_measurements(DATA / "skampi_coll.sko")
    assert [(m.collective, m.algorithm, m.segsize, m.comm_size, m.msg_size, m.time, m.reps) for m in rows] == [
        ("bcast", "default", 0, 2, 1024, 8.1, 32),
        ("bcast", "default", 0, 4, 1024, 14.6, 36),
        ("bcast", "default", 0, 8, 1024, 21.0, 40),
        ("bcast", "using_Send_Recv", 0, 4, 1024, 19.4, 33),
        ("reduce", "5", 4096, 8, 65536, 120.0, 16),
        ("reduce", "7", 4096, 8, 65536, 98.0, 16),  # alg= loop variable wins over the name
    ]
    # standard error 0.1 over the middle 32 - 2*8 = 16 repetitions
    assert rows[0].stddev == pytest.approx(0.4)


def test_skampi_without_hash_and_comm_size_from_file_name():
    rows = read_measurements(DATA / "skampi_old_np4.sko")
    assert [(m.collective, m.comm_size, m.msg_size, m.time) for m in rows] == [
        ("allreduce", 4, 4, 6.6), ("allreduce", 4, 8, 6.9)]


@pytest.mark.parametrize("name,expected", [
    ("MPI_Bcast-procs-length", ("bcast", None, None)),
    ("MPI_Bcast-nodes-length", ("bcast", None, None)),
    ("Bcast_using_Send_Recv-procs-short", ("bcast", "using_Send_Recv", None)),
    ("MPI_Bcast-alg_binomial-seg1024-procs-length", ("bcast", "binomial", "1024")),
    ("MPI_Reduce_scatter_block-algorithm3-procs-length", ("reduce_scatter_block", "3", None)),
    ("Pingpong_Send_Recv", (None, None, None)),
])
def test_skampi_result_names(name, expected):
    assert parse_name(name) == expected


# -- OSU ------------------------------------------------------------------------------------------
def test_osu_full_output_comm_size_and_algorithm_from_file_name():
    rows = read_measurements(DATA / "osu_bcast_np16_binomial.txt")
    assert points(rows) == [
        ("bcast", "binomial", 0, 16, 1, 2.41, None, 1000),
        ("bcast", "binomial", 0, 16, 2, 2.38, None, 1000),
        ("bcast", "binomial", 0, 16, 1024, 6.12, None, 1000),
        ("bcast", "binomial", 0, 16, 1048576, 812.55, None, 100),
    ]


def test_osu_only_number_in_name_is_the_comm_size():
    rows = read_measurements(DATA / "osu_reduce-alg5-8.txt")
    assert points(rows) == [("reduce", "5", 0, 8, 4, 1.95, None, None), ("reduce", "5", 0, 8, 8, 1.97, None, None)]


def test_osu_comm_size_option():
    rows = read_measurements(DATA / "osu_allreduce.txt", comm_size=32)
    assert [(m.collective, m.algorithm, m.comm_size) for m in rows] == [("allreduce", "default", 32)] * 2
    # The option also overrides a number in the file name.
    assert {m.comm_size for m in read_measurements(DATA / "osu_bcast_np16_binomial.txt", comm_size=4)} == {4}


# -- IMB ------------------------------------------------------------------------------------------
def test_imb_blocks_process_counts_and_barrier():
    rows = read_measurements(DATA / "imb_mpi1.txt")
    assert [(m.collective, m.comm_size, m.msg_size, m.time, m.reps) for m in rows] == [
        ("barrier", 4, 0, 1.53, 1000),
        ("bcast", 2, 0, 0.03, 1000), ("bcast", 2, 4, 0.72, 1000), ("bcast", 2, 1024, 1.66, 1000),
        ("bcast", 4, 0, 0.05, 1000), ("bcast", 4, 4, 1.37, 1000), ("bcast", 4, 1024, 3.02, 1000),
        ("reduce", 4, 4, 1.12, 1000),
    ]  # PingPong is not a collective: skipped
    assert {m.algorithm for m in rows} == {"default"}
    assert [m.msg_size for m in read_measurements(DATA / "imb_mpi1.txt", collective="Bcast")] == [0, 4, 1024] * 2


def test_imb_algorithm_from_file_name(tmp_path):
    path = tmp_path / "imb_bcast_alg2.txt"
    shutil.copy(DATA / "imb_mpi1.txt", path)
    assert {m.algorithm for m in read_measurements(path, collective="bcast")} == {"2"}


# -- ompi-collectives-tuning detail.out -----------------------------------------------------------
def test_detail_named_columns_tuned_is_default_and_no_data_skipped():
    rows = read_measurements(DATA / "gather_detail.out")  # collective from the file name
    by_point = {(m.algorithm, m.comm_size, m.msg_size): (m.time, m.stddev) for m in rows}
    assert len(rows) == 11
    assert by_point[("1", 2, 1)] == (50.10, 0.80)    # coll/tuned's gather names become its ids (1 basic_linear)
    assert by_point[("default", 2, 1024)] == (98.10, None)
    assert ("3", 4, 1) not in by_point                # 3 linear_sync
    assert {m.collective for m in rows} == {"gather"}


def test_detail_numbered_columns_and_repeated_reference_column():
    rows = read_measurements(DATA / "detail_ids.out", collective="bcast")
    assert points(rows) == [
        ("bcast", "1", 0, 2, 4, 35.5, 0.5, None), ("bcast", "1", 0, 4, 4, 39.0, 1.0, None),
        ("bcast", "2", 0, 2, 4, 36.25, 0.75, None), ("bcast", "2", 0, 4, 4, 37.5, None, None),
        ("bcast", "default", 0, 2, 4, 40.0, 1.0, None), ("bcast", "default", 0, 4, 4, 44.0, 2.0, None),
    ]


# -- OCC ------------------------------------------------------------------------------------------
def test_occ_layout():
    rows = read_measurements(DATA / "sample.occ")
    assert points(rows) == [
        ("bcast", "binomial", 0, 8, 1024, 12.5, None, None),
        ("bcast", "binomial", 1024, 8, 65536, 152.3, 4.1, 200),
        ("bcast", "linear", 0, 8, 1024, 20.0, None, 30),
        ("reduce", "default", 0, 8, 1024, 14.0, 0.5, None),
    ]


# -- detection and several files ------------------------------------------------------------------
@pytest.mark.parametrize("name,fmt", [
    ("generic.csv", "csv"), ("allreduce_units.csv", "csv"), ("skampi_coll.sko", "skampi"),
    ("skampi_old_np4.sko", "skampi"), ("osu_bcast_np16_binomial.txt", "osu"), ("imb_mpi1.txt", "imb"),
    ("gather_detail.out", "detail"), ("detail_ids.out", "detail"), ("sample.occ", "occ"),
])
def test_detect_format_by_content(name, fmt, tmp_path):
    assert detect_format(DATA / name) == fmt
    disguised = tmp_path / "measurements.csv"  # the name never decides
    shutil.copy(DATA / name, disguised)
    assert detect_format(disguised) == fmt


def test_detect_format_after_launcher_noise(tmp_path):
    path = tmp_path / "osu_bcast_np2.txt"
    path.write_text("Warning: Permanently added 'node2' to the list of known hosts.\n"
                    + (DATA / "osu_bcast_np16_binomial.txt").read_text())
    assert detect_format(path) == "osu"
    assert len(read_measurements(path)) == 4


def test_several_files_of_different_formats():
    files = [DATA / "osu_bcast_np16_binomial.txt", DATA / "generic.csv", DATA / "skampi_coll.sko",
             DATA / "imb_mpi1.txt", DATA / "sample.occ"]
    rows = read_measurements(files, collective="bcast")
    assert {m.collective for m in rows} == {"bcast"}
    # SKaMPI and IMB both measured the default at (2, 1024) and (4, 1024); generic.csv (as 6 and binomial) and
    # sample.occ (binomial) measured Open MPI's binomial (id 6: generic.csv has ids) at (8, 1024): aggregated.
    assert len(rows) == 4 + 5 + 4 + 6 + 3 - 4
    assert rows == sorted(rows, key=lambda m: (m.collective, (0, int(m.algorithm), "") if m.algorithm.isdigit()
                                                else (1, 0, m.algorithm), m.segsize, m.comm_size, m.msg_size))


def test_forced_format_overrides_detection():
    assert len(read_measurements(DATA / "generic.csv", fmt="csv")) == 4


# -- file-name rules ------------------------------------------------------------------------------
@pytest.mark.parametrize("name,collective,comm_sizes,algorithm,segsize", [
    ("bcast_algo1.csv", "bcast", [], "1", None),
    ("bcast_algo2_all.csv", "bcast", [], "2", None),
    ("osu_bcast_np16_binomial.txt", "bcast", [16], "binomial", None),
    ("osu_bcast_basic_linear_np16_run2.txt", "bcast", [16], "basic_linear", None),
    ("bcast-16.txt", "bcast", [16], None, None),
    ("reduce_scatter_block_p8_seg4096.txt", "reduce_scatter_block", [8], None, 4096),
    ("MPI_Allreduce_32procs.out", "allreduce", [32], None, None),
    ("0_4ranks_run0.out", None, [4], None, None),
    ("run_2024_01.txt", None, [1, 2024], None, None),
])
def test_file_name_rules(name, collective, comm_sizes, algorithm, segsize):
    facts = FileName(name)
    assert (facts.collective, facts.comm_sizes(), facts.algorithm(), facts.segsize()) == (
        collective, comm_sizes, algorithm, segsize)


def test_ambiguous_numbers_in_file_name_ask_for_comm_size(tmp_path):
    path = tmp_path / "osu_bcast_2024_03.txt"
    shutil.copy(DATA / "osu_allreduce.txt", path)
    with pytest.raises(InputError, match=r"osu_bcast_2024_03.txt:3: .*several numbers \(3, 2024\)"):
        read_measurements(path)


@pytest.mark.parametrize("text,expected", [
    ("MPI_Bcast", "bcast"), ("Bcast", "bcast"), (" BCAST ", "bcast"), ("mpi_reduce_scatter", "reduce_scatter"),
    ("Ibcast", "ibcast"), ("PingPong", None), ("", None),
])
def test_normalise_collective(text, expected):
    assert normalise_collective(text) == expected


# -- aggregation ----------------------------------------------------------------------------------
def m(algorithm="6", comm=4, msg=8, time=1.0, stddev=None, reps=None, source="f:1"):
    return Measurement("bcast", algorithm, 0, comm, msg, time, stddev, reps, source)


def test_aggregate_median_sample_std_and_reps():
    rows = aggregate([m(time=10.0, reps=5), m(time=11.0, reps=5), m(time=50.0, reps=10), m(time=12.0, reps=5)])
    assert len(rows) == 1
    assert rows[0].time == 11.5
    assert rows[0].reps == 25
    assert rows[0].stddev / 5 == pytest.approx(19.5170865 / 2)     # standard error: sample sd / sqrt(4 repeats)
    # without every repetition count there is no standard error: the sample standard deviation as it is
    assert aggregate([m(time=10.0, reps=None), m(time=12.0, reps=4)])[0].stddev == pytest.approx(2 ** 0.5)


def _se(row):
    return row.stddev / row.reps ** 0.5


@settings(deadline=None)
@given(st.lists(st.tuples(st.floats(1.0, 1e4), st.floats(0.0, 1e3), st.integers(1, 500)), min_size=2, max_size=6))
def test_repeats_are_no_more_certain_than_their_disagreement_nor_than_their_own_errors(runs):
    pooled = aggregate([m(time=t, stddev=s, reps=r) for t, s, r in runs])[0]
    n = len(runs)
    times = [t for t, _, _ in runs]
    mean = sum(times) / n
    spread = (sum((t - mean) ** 2 for t in times) / (n - 1)) ** 0.5
    within = sum(s * s / r for _, s, r in runs) ** 0.5 / n           # the standard error of the runs' mean
    assert pooled.reps == sum(r for _, _, r in runs)
    assert _se(pooled) == pytest.approx(max(spread / n ** 0.5, within), rel=1e-9, abs=1e-12)
    # runs that disagree by more than their calls' noise: the disagreement decides, not the number of calls
    many = aggregate([m(time=t, stddev=s, reps=r * 1000) for t, s, r in runs])[0]
    assert _se(many) >= spread / n ** 0.5 * (1 - 1e-9) - 1e-12     # (a spread of rounding error: within it)


def test_aggregate_keeps_single_rows_and_drops_unknown_rep_sums():
    single = m(stddev=0.2, reps=7)
    assert aggregate([single]) == [single]
    assert aggregate([m(reps=3), m(reps=None, time=2.0)])[0].reps is None


def test_aggregate_sorts_algorithm_ids_as_numbers():
    rows = aggregate([m("10"), m("binomial"), m("2"), m("default"), m("6", comm=2)])
    assert [r.algorithm for r in rows] == ["2", "6", "10", "binomial", "default"]


# -- round trip of our own layout -----------------------------------------------------------------
# Names no MPI library has (x...): the identity rules (ids, library names) are tested in test_identity.py.
_names = st.from_regex(r"x[A-Za-z0-9_ ,.-]{0,10}[A-Za-z0-9_]|x", fullmatch=True)
_rows = st.lists(
    st.tuples(st.sampled_from(sorted(COLLECTIVES)), st.one_of(_names, st.sampled_from(["default", "Default"])),
              st.integers(0, 1 << 20), st.integers(1, 4096), st.integers(0, 1 << 30),
              st.floats(1e-3, 1e7, allow_nan=False, allow_infinity=False),
              st.none() | st.floats(0, 1e5, allow_nan=False, allow_infinity=False),
              st.none() | st.integers(1, 10 ** 6)),
    min_size=1, max_size=30, unique_by=lambda row: (row[0], row[1].lower() if row[1].lower() == "default"
                                                     else row[1], row[2], row[3], row[4]))


@settings(max_examples=60, deadline=None)
@given(_rows)
def test_generic_csv_round_trip(rows):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "roundtrip.csv"
        with path.open("w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(GENERIC_COLUMNS)
            for coll, alg, seg, comm, msg, time, stddev, reps in rows:
                writer.writerow(["MPI_" + coll.capitalize(), alg, seg, comm, msg, repr(time),
                                 "" if stddev is None else repr(stddev), "" if reps is None else reps])
        back = read_measurements(path)
    # the library default has no segment size: its rows are pooled at segment size 0
    expected = aggregate([Measurement(coll, "default" if alg.lower() == "default" else alg,
                                      0 if alg.lower() == "default" else seg, comm, msg, time, stddev, reps)
                          for coll, alg, seg, comm, msg, time, stddev, reps in rows])
    assert points(back) == points(expected)


def test_a_file_given_twice_is_read_once_and_said(tmp_path):
    """`quadsel build a.csv a.csv` (or a.csv and a link to it) pooled every row with itself as a repeat: the same
    times with a standard error sqrt(2) smaller, so the ties within the noise and the tree changed."""
    path = tmp_path / "a.csv"
    path.write_text("collective,algorithm,segsize,comm_size,msg_size,time_us,stddev_us,reps\n"
                    "bcast,1,0,4,8,2.0,0.4,10\nbcast,2,0,4,8,2.1,0.4,10\n")
    (tmp_path / "link.csv").symlink_to(path)
    once = read_measurements([str(path)])
    for again in (str(path), str(tmp_path / "link.csv")):
        twice = read_measurements([str(path), again])
        assert [(m.time, m.stddev, m.reps) for m in twice] == [(m.time, m.stddev, m.reps) for m in once]
        assert f"note: read once, given more than once: {again}" in twice.notes
    other = tmp_path / "b.csv"                     # a copy is another file: its rows are repeats
    other.write_text(path.read_text())
    assert [m.reps for m in read_measurements([str(path), str(other)])] == [20, 20]
