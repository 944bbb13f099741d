"""The plain sweep read from its bytes (ingest/csv_columns.py through csvfile.read_columns) is what the row reader
(csvfile.read) reads: the same rows at the same lines, or None where the row reader must decide (and then its
error, if any, is its own). Generated files mix what real sweeps hold: padding, comments, blank lines, CRLF,
optional columns, missing markers, huge and zero-padded integers, reals like 1e3, .5, 5., +2."""

import csv

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from quadsel.errors import InputError
from quadsel.ingest import common, csv_columns, csvfile
from quadsel.ingest.column_table import ColumnTable
from quadsel.inputs import text_lines

from test_column_table import by_rows, columns, outcome

FIELDS = {"collective": "collective", "algorithm": "algorithm", "segsize": "segsize", "comm_size": "comm_size",
          "msg_size": "msg_size", "time": "time_us", "stddev": "stddev_us", "reps": "reps", "ignored": "min"}
GOOD = {
    "collective": ["bcast", "BCAST", "MPI_Bcast", " bcast"],
    "algorithm": ["2", "4", "6", "0006", "default", "Default", "binomial"],
    "segsize": ["0", "1024", "0000", "65536"],
    "comm_size": ["2", "4", "8", "2147483647", "0000000000000000000004"],
    "msg_size": ["0", "8", "1024", "9223372036854775807", "00000000000000000000000000000123", "1000000000000000000"],
    "time": ["1.5", "12", ".5", "5.", "1e3", "2.5E-2", "+2", "3.14159265358979323846264338327950288", "1e-6", "7"],
    "stddev": ["0.1", "0", "-0", "", "-", "NA", "n/a", "None", "--", "1e-3", ".25"],
    "reps": ["10", "1", "", "-", "na", "N/A", "None", "9223372036854775807", "007"],
    "ignored": ["", "x", "1.0", "anything at all"],
}
BAD = ["", "-3", "+5", "1.0", "1.5", "nan", "inf", "1e999", "-1e999", "1e", ".", "abc", "99999999999999999999",
       "9223372036854775808", "2147483648", "0", "1_0", "0x10", "1,5", '"7"', "\u0661", "1e-400", "1" * 30]
SPACE = ["", " ", "  ", "\t", "\x0b", "\x0c", "\x1c"]


@st.composite
def sweep(draw, bad=True):
    """(file text, options): a header of some of FIELDS in any order and rows of cells from GOOD (and BAD)."""
    optional = draw(st.lists(st.sampled_from(["collective", "segsize", "comm_size", "stddev", "reps", "ignored"]),
                             unique=True))
    fields = draw(st.permutations(["algorithm", "msg_size", "time"] + optional))
    pad = st.sampled_from(SPACE) if draw(st.booleans()) else st.just("")
    lines = [draw(st.sampled_from(["", "# a sweep", "  # comment", " "])) for _ in range(draw(st.integers(0, 2)))]
    lines.append(",".join(draw(pad) + FIELDS[f] + draw(pad) for f in fields))
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["row"] * 8 + ["comment", "blank"]))
        if kind == "comment":
            lines.append(draw(pad) + "# " + draw(st.sampled_from(["note", "x,y", "quadsel-meta: {}", 'in "\u00b5s"',
                                                                  "\x00\r"])))
        elif kind == "blank":
            lines.append(draw(pad))
        else:
            cells = [draw(st.sampled_from(GOOD[f] + (BAD if bad and draw(st.integers(0, 9)) == 0 else [])))
                     for f in fields]
            lines.append(draw(pad) + ",".join(c + draw(pad) for c in cells) + draw(pad))
    if bad and draw(st.integers(0, 14)) == 0:
        at = draw(st.integers(1, len(lines) - 1)) if len(lines) > 1 else 0
        lines[at] += draw(st.sampled_from([",", ",x", '"', "\u00e9", "\x00", "\r"]))
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    text = ending.join(lines) + draw(st.sampled_from([ending, ""]))
    return text, {"collective": "bcast", "comm_size": 4}


def _both(text, options):
    """(read_columns' rows or None, the row reader's rows or its error)."""
    def ctx(**kw):
        return common.Context("sweep.csv", None, text=text, **options, **kw)
    try:
        rows = csvfile.read(ctx())
    except InputError as exc:
        rows = str(exc)
    try:
        cols = csvfile.read_columns(ctx())
    except InputError as exc:           # a header error: the row reader's own, raised the same way
        assert str(exc) == rows
        return None, rows
    return (None if cols is None else cols.rows()), rows


@given(sweep())
@settings(max_examples=400, deadline=None)
def test_read_columns_reads_what_the_rows_read(case):
    cols, rows = _both(*case)
    if cols is not None:
        assert cols == rows


@given(sweep(bad=False))
@settings(max_examples=200, deadline=None)
def test_plain_sweeps_are_read_as_columns(case):
    """Without a bad cell, a quote or a stray character, the file is read from its bytes (not the slow way)."""
    text, options = case
    cols, rows = _both(text, options)
    assert not isinstance(rows, str)
    assert cols == (rows if rows else None)       # no data rows: the row reader says so


@given(sweep())
@settings(max_examples=120, deadline=None)
def test_the_whole_ingest_is_the_rows_ingest(tmp_path_factory, case):
    """read_measurements and the decision map, read as columns or by rows: the same table, notes, map, replaced
    points (Open MPI split_bintree, algorithm 4, is replaced where a half of the message is under a segment)."""
    text, options = case
    path = tmp_path_factory.mktemp("sweep") / "bcast_np4.csv"
    path.write_bytes(text.encode())
    assert outcome(columns, [str(path)], **options) == outcome(by_rows, [str(path)], **options)


def test_a_sweep_of_many_chunks_is_read_as_columns(tmp_path, monkeypatch):
    """Chunks of a few lines: every chunk boundary falls somewhere else (a comment, a blank line, a row)."""
    monkeypatch.setattr(csv_columns, "CHUNK", 64)
    rng = np.random.default_rng(3)
    lines = ["collective,algorithm,segsize,comm_size,msg_size,time_us,stddev_us,reps"]
    for i in range(400):
        lines.append(f"bcast,{rng.choice([2, 4, 6])},{rng.choice([0, 1024])},{rng.choice([2, 3, 8])},{8 * i},"
                     f"{rng.uniform(1, 9):.4f},{rng.uniform(0, 1):.3f},10")
        if i % 37 == 0:
            lines.append("# a comment" if i % 2 else "")
    path = tmp_path / "sweep.csv"
    path.write_text("\n".join(lines) + "\n")
    assert isinstance(columns([str(path)]), ColumnTable)
    assert outcome(columns, [str(path)]) == outcome(by_rows, [str(path)])


@given(st.lists(st.tuples(st.integers(0, 10 ** 20), st.integers(0, 25), st.sampled_from(["", "e-7", "E+3", "e300"]),
                          st.booleans()), min_size=1, max_size=60))
@settings(max_examples=200, deadline=None)
def test_reals_are_what_float_reads(cells):
    """NumPy's parser, once the syntax is checked, gives float()'s value to the last bit (any NumPy version)."""
    texts = []
    for digits, point, exponent, sign in cells:
        digits = str(digits)
        point = min(point, len(digits))
        texts.append(("+" if sign else "") + digits[:point] + "." + digits[point:] + exponent)
    text = "time_us\n" + "\n".join(texts) + "\n"
    got = csv_columns.read(text, len("time_us\n"), 2, 1, {"time": (0, None)})
    expected = np.array([float(t) for t in texts])
    if got is None:                 # a time the row reader refuses (0, beyond the limits)
        assert not all(common.TIME_MIN_US <= v <= common.TIME_MAX_US for v in expected)
    else:
        assert got[0]["time"].tobytes() == expected.tobytes()


def test_a_cell_beyond_the_csv_field_limit_is_the_rows_error(tmp_path):
    for text in (f"algorithm,msg_size,time_us\n2,8,1.{'0' * csv.field_size_limit()}\n",
                 f"algorithm,msg_size,{' ' * csv.field_size_limit()}time_us\n2,8,1.5\n"):
        path = tmp_path / "bcast_np2.csv"
        path.write_text(text)
        assert "field larger than field limit" in outcome(by_rows, [str(path)])[1]
        assert outcome(columns, [str(path)]) == outcome(by_rows, [str(path)])


def test_thousands_of_leading_zeros_are_a_number(tmp_path):
    """int() refuses more than 4,300 digits: a zero-padded size is read without them (no traceback)."""
    path = tmp_path / "bcast_np2.csv"
    path.write_text(f"algorithm,msg_size,time_us\n2,{'0' * 5000}8,1.5\n")
    assert [m.msg_size for m in by_rows([str(path)])] == [8]
    assert outcome(columns, [str(path)]) == outcome(by_rows, [str(path)])


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_the_text_is_split_as_text_lines_splits_it(ending):
    text = ending.join(["a", "b\r", "", "c\rd", "e"]) + "\r"
    ctx = common.Context("x.csv", None, text=text)
    assert csvfile._text(ctx) == "\n".join(text_lines(text))
    assert ctx.lines == text_lines(text) and csvfile._text(ctx) == "\n".join(text_lines(text))
    assert [line for _, _, line in common.first_lines(text)] == text_lines(text)
