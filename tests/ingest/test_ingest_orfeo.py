"""The third-party ORFEO and ompi-collectives-tuning files in ../shared read unchanged (skipped when absent)."""

from collections import Counter
from pathlib import Path

import pytest

from quadsel.ingest import detect_format, read_measurements

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
ORFEO = SHARED / "orfeo-epyc-openmpi4"
TUNING = SHARED / "ompi-collectives-tuning-example"

pytestmark = pytest.mark.skipif(not ORFEO.is_dir(), reason="../shared/datasets: absent (a fresh clone)")

COMM_SIZES = [2, 4, 8, 16, 32, 64, 128, 256]
MSG_SIZES = [2 ** k for k in range(1, 21)]  # 2 B ... 1 MiB


@pytest.mark.parametrize("name,algorithm", [
    ("bcast_algo1.csv", "1"), ("bcast_algo2_all.csv", "2"), ("bcast_algo3.csv", "3"),
    ("bcast_algo6.csv", "6"), ("bcast_default.csv", "default"),
])
def test_orfeo_bcast_files_are_complete_grids(name, algorithm):
    assert detect_format(ORFEO / name) == "csv"
    rows = read_measurements(ORFEO / name)
    assert len(rows) == 160
    assert {(m.collective, m.algorithm, m.segsize) for m in rows} == {("bcast", algorithm, 0)}
    assert sorted({m.comm_size for m in rows}) == COMM_SIZES
    assert sorted({m.msg_size for m in rows}) == MSG_SIZES


def test_orfeo_all_bcast_files_together():
    files = [ORFEO / f"bcast_{tag}.csv" for tag in ("algo1", "algo2_all", "algo3", "algo6", "default")]
    rows = read_measurements(files)
    assert Counter(m.algorithm for m in rows) == {"1": 160, "2": 160, "3": 160, "6": 160, "default": 160}


def test_orfeo_reduce_algo1_keeps_its_missing_point():
    rows = read_measurements(ORFEO / "reduce_algo1.csv")
    assert len(rows) == 159
    points = {(m.comm_size, m.msg_size) for m in rows}
    assert (256, 1 << 20) not in points and len(points) == 159


def test_orfeo_combined_files_read_their_open_mpi_names_as_ids():
    """Basic Linear and Pipeline are coll/tuned's own names (MPICH has neither): Open MPI data, ids as measure writes."""
    bcast = read_measurements(ORFEO / "bcast_combined.csv")
    assert Counter(m.algorithm for m in bcast) == {"1": 160, "6": 160, "3": 160, "default": 160}
    assert bcast.library == "openmpi" and any("'Basic Linear' -> 1" in note for note in bcast.notes)
    table = read_measurements(ORFEO / "reduce_combined.csv")
    # rabenseifner (7) runs linear (1) where count < the largest power of two <= comm size (count: 4-byte
    # floats, the benchmarks' reduction type): those rows hold linear's time and are dropped (ingest.replaced)
    replaced = {(c, m) for c in COMM_SIZES for m in MSG_SIZES if m // 4 < 1 << (c.bit_length() - 1)}
    assert Counter(m.algorithm for m in table) == {"5": 160, "1": 159, "7": 160 - len(replaced), "default": 160}
    assert {(p[3], p[4]) for p in table.replaced} == replaced and {p[1:3] + p[5:] for p in table.replaced} == {("7", 0, "1")}


@pytest.mark.parametrize("collective, ids", [("bcast", {"1", "2", "3", "6"}), ("reduce", {"1", "4", "5", "7"})])
def test_orfeo_combined_and_per_algorithm_files_give_one_method_per_algorithm(collective, ids):
    """The combined file repeats the per-algorithm files under names: 4 methods, not 7; the copies pool to the same time."""
    files = sorted(ORFEO.glob(f"{collective}_*.csv"))
    rows = read_measurements(files)
    assert {m.algorithm for m in rows if not m.is_default} == ids
    single = {(m.algorithm, m.comm_size, m.msg_size): m.time for m in read_measurements(
        [f for f in files if "combined" not in f.name])}
    assert all(single[(m.algorithm, m.comm_size, m.msg_size)] == m.time for m in rows)
    assert not [note for note in rows.notes if note.startswith("warning")]   # no distinct pair looks relabelled


def test_orfeo_collective_option_overrides_the_file_name():
    rows = read_measurements(ORFEO / "bcast_algo1.csv", collective="MPI_Bcast")
    assert {m.collective for m in rows} == {"bcast"}


@pytest.mark.skipif(not TUNING.is_dir(), reason="../shared/datasets: the ompi-collectives-tuning example is absent")
def test_ompi_collectives_tuning_detail_out():
    assert detect_format(TUNING / "detail.out") == "detail"
    rows = read_measurements(TUNING / "detail.out", collective="gather")
    # the tool's names are Open MPI's gather algorithms 1, 2, 3 (coll/tuned ids; one method per algorithm)
    assert Counter(m.algorithm for m in rows) == {"1": 42, "2": 42, "3": 42, "default": 42}
    from quadsel.libraries import openmpi
    assert [openmpi.ALGORITHMS["gather"][i] for i in (1, 2, 3)] == ["basic_linear", "binomial", "linear_sync"]
    assert sorted({m.comm_size for m in rows}) == [2, 4]
    first = rows[0]
    assert (first.algorithm, first.comm_size, first.msg_size, first.time, first.stddev) == (
        "1", 2, 1, 64.33, 0.94)
