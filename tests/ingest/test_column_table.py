"""A sweep read as columns (ingest/column_table.py, csvfile.read_columns) is the table the row reader gives:
the same rows, notes, decision map and, for a bad cell, the same one-line error."""

import glob

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from quadsel import ingest
from quadsel.decision.decision_map import build_decision_map
from quadsel.errors import QuadselError
from quadsel.ingest import csvfile
from quadsel.ingest.column_table import ColumnTable

from helpers import REPO

HEADER = "collective,algorithm,segsize,comm_size,msg_size,time_us,stddev_us,reps"


def by_rows(paths, **options):
    saved = csvfile.read_columns
    csvfile.read_columns = lambda ctx: None
    try:
        return ingest.read_measurements(paths, **options)
    finally:
        csvfile.read_columns = saved


def outcome(read, paths, **options):
    try:
        table = read(paths, **options)
    except QuadselError as exc:
        return ("error", str(exc))
    dmap = None
    try:
        dmap = build_decision_map(table)
    except QuadselError as exc:
        dmap = str(exc)
    return ("table", list(table), table.notes, table.library, _map(dmap))


def _map(dmap):
    if isinstance(dmap, str):
        return dmap
    arrays = [getattr(dmap, f) for f in ("comm_sizes", "msg_sizes", "cost", "cost_se", "default_cost", "default_se")]
    return ([None if a is None else np.nan_to_num(a, nan=-1.0).tolist() for a in arrays], dmap.methods, dmap.sources,
            dmap.library, dmap.collective, dmap.replaced)


def columns(paths, **options):
    return ingest.read_measurements(paths, columns=True, **options)


@pytest.mark.parametrize("path", sorted(glob.glob(str(REPO / "examples" / "**" / "*.csv"), recursive=True)))
def test_examples_read_as_columns_are_the_rows(path):
    assert isinstance(columns([path]), ColumnTable)
    assert outcome(columns, [path]) == outcome(by_rows, [path])


def test_several_files_and_a_collective_read_as_columns_are_the_rows(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text(f"{HEADER}\nbcast,6,0,2,8,1.5,0.1,10\nbcast,default,1024,2,8,2.0,,\nreduce,1,0,2,8,3.0,-,\n")
    b.write_text(f"# a comment\n{HEADER}\n\nbcast,2,1024,2,8,1.25,0.2,5\n  bcast , 6 ,0,4,8,1.75,0.1,10\n"
                 "bcast,4,1024,4,8,1.5,0.1,10\n")      # split_bintree with half the buffer under a segment: replaced
    for options in ({"collective": "bcast"}, {"collective": "reduce"}):
        assert outcome(columns, [str(a), str(b)], **options) == outcome(by_rows, [str(a), str(b)], **options)
    table = columns([str(a), str(b)], collective="bcast")
    assert isinstance(table, ColumnTable) and build_decision_map(table).replaced


CELLS = ["", "-", "na", "0", "-3", "1.5", "1e999", "nan", "abc", "1e3", "99999999999999999999", "0007", "+5",
         "１２", '"7"', "7 ", "1,5", "2147483648", "default", "DEFAULT", "1.0", "9" * 300]


@given(st.integers(0, 10 ** 6), st.integers(0, 7), st.sampled_from(CELLS), st.booleans())
@settings(max_examples=150, deadline=None)
def test_a_changed_cell_gives_the_rows_outcome(tmp_path_factory, seed, column, cell, repeat):
    """Any cell the fast case does not take (a bad one, or one the row reader reads its slower way) is read by
    the row reader: the same table or the same error at its line."""
    rng = np.random.default_rng(seed)
    lines = [HEADER]
    for alg in ("2", "6"):
        for seg in (0, 1024):
            for comm in (2, 4):
                for msg in (8, 64, 512):
                    lines.append(f"bcast,{alg},{seg},{comm},{msg},{rng.uniform(1, 99):.3f},{rng.uniform(0, 1):.3f},10")
    row = int(rng.integers(1, len(lines)))
    cells = lines[row].split(",")
    cells[column] = cell
    lines[row] = ",".join(cells)
    if repeat:
        lines.append(lines[int(rng.integers(1, len(lines)))])
    path = tmp_path_factory.mktemp("cells") / "sweep.csv"
    path.write_text("\n".join(lines) + "\n")
    assert outcome(columns, [str(path)]) == outcome(by_rows, [str(path)])


@pytest.mark.parametrize("case", ["codes", "sizes", "sizes and one rare", "many", "negative", "empty", "one"])
def test_unique_inverse_is_numpys(case):
    """Counted, searched in a sample's values or sorted: always np.unique's values and inverse."""
    from quadsel.ingest.column_table import unique_inverse
    rng = np.random.default_rng(1)
    n = 200_000
    column = {"codes": rng.integers(0, 40, n), "sizes": rng.choice(2 ** rng.integers(4, 62, 280), n),
              "sizes and one rare": np.insert(rng.choice([16, 1 << 40, 1 << 62], n), 1, 7 << 50),   # not sampled
              "many": rng.integers(0, 2 ** 62, n), "negative": rng.integers(-5, 5, n),
              "empty": np.zeros(0, dtype=np.int64), "one": np.array([9 << 55])}[case].astype(np.int64)
    found, inverse = unique_inverse(column)
    expected, at = np.unique(column, return_inverse=True)
    assert found.dtype == np.int64 and found.tolist() == expected.tolist() and inverse.tolist() == at.ravel().tolist()
