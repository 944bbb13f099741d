"""The third-party ORFEO and ompi-collectives-tuning files in ../shared read unchanged (skipped when absent)."""

from collections import Counter
from pathlib import Path

import pytest

from quadsel.ingest import detect_format, read_measurements

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
ORFEO = SHARED / "orfeo-epyc-openmpi4"
TUNING = SHARED / "ompi-collectives-tuning-example"

pytestmark = pytest.mark.skipif(not ORFEO.is_dir(), reason="../shared/datasets is absent")

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


def test_orfeo_combined_files_keep_algorithm_names():
    bcast = Counter(m.algorithm for m in read_measurements(ORFEO / "bcast_combined.csv"))
    assert bcast == {"Basic Linear": 160, "Binomial": 160, "Pipeline": 160, "default": 160}
    reduce = Counter(m.algorithm for m in read_measurements(ORFEO / "reduce_combined.csv"))
    assert reduce == {"Binomial": 160, "Linear": 159, "Rabenseifner": 160, "default": 160}


def test_orfeo_collective_option_overrides_the_file_name():
    rows = read_measurements(ORFEO / "bcast_algo1.csv", collective="MPI_Bcast")
    assert {m.collective for m in rows} == {"bcast"}


@pytest.mark.skipif(not TUNING.is_dir(), reason="example directory is absent")
def test_ompi_collectives_tuning_detail_out():
    assert detect_format(TUNING / "detail.out") == "detail"
    rows = read_measurements(TUNING / "detail.out", collective="gather")
    assert Counter(m.algorithm for m in rows) == {"basic_linear": 42, "binomial": 42, "linear_sync": 42,
                                                  "default": 42}
    assert sorted({m.comm_size for m in rows}) == [2, 4]
    first = rows[0]
    assert (first.algorithm, first.comm_size, first.msg_size, first.time, first.stddev) == (
        "basic_linear", 2, 1, 64.33, 0.94)
