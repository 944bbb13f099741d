"""Malformed input: every case raises InputError naming the file and, where one applies, the line."""

import re
from pathlib import Path

import pytest

from click.testing import CliRunner

from quadsel.cli import main
from quadsel.errors import InputError, QuadselError
from quadsel.ingest import read_measurements

BAD = Path(__file__).parents[1] / "data" / "ingest" / "bad"

# file, read_measurements options, line named in the error (None: the whole file), words of the message
CASES = [
    ("negative_time.csv", {}, 3, "must be > 0"),
    ("zero_time.csv", {}, 2, "must be > 0"),
    ("nan_time.csv", {}, 4, "not a finite number"),
    ("inf_time.csv", {}, 2, "not a finite number"),
    ("text_time.csv", {}, 4, "not a number"),
    ("fractional_size.csv", {}, 2, "not a whole number"),
    ("negative_size.csv", {}, 2, "must not be negative"),
    ("zero_comm_size.csv", {}, 2, "communicator size 0"),
    ("zero_reps.csv", {}, 2, "repetition count 0"),
    ("unknown_collective.csv", {}, 2, "unknown collective 'bcsat'"),
    ("missing_time_column.csv", {}, 1, "missing column for the time"),
    ("unknown_column.csv", {}, 1, "unknown column 'Colour'"),
    ("unknown_time_unit.csv", {}, 1, "unknown time unit"),
    ("short_row.csv", {}, 3, "6 cells, but the header has 8 columns"),
    ("bcast.csv", {}, 1, "missing algorithm column"),
    ("empty.csv", {}, None, "empty file"),
    ("header_only.csv", {}, None, "no data rows"),
    ("undetectable.txt", {}, None, "cannot tell the format"),
    ("binary.csv", {}, None, "not a UTF-8 text file"),
    ("skampi_truncated.sko", {}, 2, "has no end result"),
    ("skampi_end_without_begin.sko", {}, 5, "without a begin result"),
    ("skampi_mismatched_end.sko", {}, 3, "closes begin result"),
    ("skampi_short_row.sko", {}, 3, "a SKaMPI row needs"),
    ("osu_bcast_np8_row_before_header.txt", {}, 2, "before the OSU"),
    ("osu_bcast_np8_text_latency.txt", {}, 4, "time 'n/a' is not a number"),
    ("osu_bcast_nosize.txt", {}, 3, "give --comm-size"),
    ("osu_reduce_np4.txt", {"collective": "bcast"}, None, "no bcast measurements (the file has reduce)"),
    ("imb_bad_processes.txt", {}, 2, "#processes 'zero'"),
    ("imb_wrong_cells.txt", {}, 5, "4 cells, but the header has 5 columns"),
    ("detail_bad_cell.out", {"collective": "gather"}, 3, "is not mean(stddev)"),
    ("detail_best.out", {"collective": "gather"}, 1, "this is best.out"),
    ("occ_wrong_cells.occ", {}, 3, "5 cells"),
    ("occ_negative_comm.occ", {}, 3, "communicator size -8"),
]


def test_every_bad_fixture_has_a_case():
    assert sorted(p.name for p in BAD.iterdir()) == sorted(case[0] for case in CASES)


@pytest.mark.parametrize("name,options,line,words", CASES, ids=[case[0] for case in CASES])
def test_bad_input_names_file_and_line(name, options, line, words):
    with pytest.raises(InputError) as caught:
        read_measurements(BAD / name, **options)
    text = str(caught.value)
    assert "\n" not in text
    assert words in text
    if line is None:
        assert f"{name}: " in text and not re.search(re.escape(name) + r":\d", text)
    else:
        assert f"{name}:{line}: " in text
        assert caught.value.line == line


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="nope.csv: file not found"):
        read_measurements(tmp_path / "nope.csv")


def test_directory_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        read_measurements(tmp_path)


def test_detail_needs_the_collective(tmp_path):
    path = tmp_path / "detail.out"
    path.write_text("#Nnodes Message_size binomial\n2 1 3.5(0.1)\n")
    with pytest.raises(InputError, match=r"detail.out: .*give --collective"):
        read_measurements(path)


def test_csv_without_collective_asks_for_it(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text("Processes,Size,Algorithm,Latency(us)\n2,8,1,0.5\n")
    with pytest.raises(InputError, match="give --collective"):
        read_measurements(path)


def test_forced_format_that_does_not_fit_is_an_input_error():
    with pytest.raises(InputError, match=r"negative_time.csv: no data rows \(read as osu\)"):
        read_measurements(BAD / "negative_time.csv", fmt="osu", comm_size=4)
    with pytest.raises(InputError, match=r"sample.occ:1: expected the '#Nnodes"):
        read_measurements(BAD.parent / "sample.occ", fmt="detail", collective="bcast")


@pytest.mark.parametrize("options,words", [
    ({"fmt": "xml"}, "unknown input format"),
    ({"collective": "bcsat"}, "unknown collective"),
    ({"column_map": {"speed": "x"}}, "--map field 'speed'"),
])
def test_bad_options_are_quadsel_errors(options, words):
    with pytest.raises(QuadselError, match=words):
        read_measurements(BAD / "negative_time.csv", **options)


def test_no_paths_is_an_error():
    with pytest.raises(QuadselError, match="no input files"):
        read_measurements([])


def _bad_cases():
    return [(BAD / name, options, line) for name, options, line, _ in CASES]


@pytest.mark.parametrize("path, options, line", _bad_cases(), ids=lambda v: getattr(v, "name", None))
def test_every_malformed_file_fails_build_with_file_and_line(tmp_path, path, options, line):
    out = tmp_path / "t.qt.json"
    extra = ["--collective", options["collective"]] if "collective" in options else []
    result = CliRunner().invoke(main, ["build", str(path), *extra, "-o", str(out)])
    assert result.exit_code == 2
    message = result.output.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    assert (f"{path.name}:{line}:" if line else path.name) in message
    assert not out.exists()
