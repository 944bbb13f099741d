"""Issue 32's hostile files that must be *read* (the refusals are cases of tests/test_bad_inputs.py): CR-only line
ends, form feeds and line separators inside lines, names with terminal escapes."""

import json
import re

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st

from quadsel.cli import main
from quadsel.errors import InputError
from quadsel.ingest import read_measurements
from quadsel.targets import impi_adjust

CSV = ("collective,algorithm,segsize,comm_size,msg_size,time_us\n"
       "bcast,6,0,2,8,1.5\nbcast,1,0,2,8,2.5\nbcast,6,0,4,8,1.9\nbcast,1,0,4,8,3.5\n")
OSU = "# OSU MPI Broadcast Latency Test v7.3\n# Size       Avg Latency(us)\n8   2.5\n16  3.0\n1024  9.5\n"


def _rows(table):
    return sorted((m.algorithm, m.comm_size, m.msg_size, m.time) for m in table)


@pytest.mark.parametrize("name, text, fmt", [("bcast.csv", CSV, "csv"), ("osu_bcast_np4_binomial.txt", OSU, "osu"),
                                             ("osu_bcast_np4_binomial.txt", OSU, "auto"), ("bcast.csv", CSV, "auto")])
def test_cr_only_line_ends_are_read_like_lf_ones(tmp_path, name, text, fmt):
    """Classic Mac OS line ends (CR alone) were no longer read after the line-splitting fix (issue 32)."""
    (tmp_path / "lf").mkdir()
    (tmp_path / "cr").mkdir()
    (tmp_path / "lf" / name).write_bytes(text.encode())
    (tmp_path / "cr" / name).write_bytes(text.replace("\n", "\r").encode())
    lf = read_measurements(tmp_path / "lf" / name, fmt=fmt)
    cr = read_measurements(tmp_path / "cr" / name, fmt=fmt)
    assert _rows(cr) == _rows(lf) and len(lf) >= 2


def test_a_cr_only_file_names_the_right_line(tmp_path):
    path = tmp_path / "bcast.csv"
    path.write_bytes(CSV.replace("bcast,1,0,4,8,3.5", "bcast,1,0,4,8,x").replace("\n", "\r").encode())
    with pytest.raises(InputError, match=r"bcast.csv:5: time"):
        read_measurements(path)


@pytest.mark.parametrize("odd", ["\f", "\x0b", "\x85", "\u2028", "\u2029", "\x1c"])
def test_the_impi_adjust_reader_splits_lines_at_newlines_only(odd):
    """A form feed or U+2028 in a comment no longer cuts the line in two (which shifted every later line number,
    or made the comment's tail a line of its own)."""
    text = (f"# generated {odd} export I_MPI_ADJUST_REDUCE=9:0-1\n"
            "export I_MPI_ADJUST_BCAST='1:0-1023;2:1024-2147483647'\n"
            "export I_MPI_ADJUST_ALLREDUCE='1:0-x'\n")
    with pytest.raises(InputError, match=r"r.sh:3:"):
        impi_adjust.read(text, "r.sh")
    good = impi_adjust.read(text.rsplit("export I_MPI_ADJUST_ALLREDUCE", 1)[0], "r.sh")
    assert list(good) == ["bcast"] and good["bcast"][0].line == 2
    assert impi_adjust.looks_like(f"# a {odd} comment\nexport I_MPI_ADJUST_BCAST=1\n")


TRACE = {"format": "quadsel-trace", "version": 1, "collective": "bcast", "library": "openmpi", "comm_size": 2,
         "root": 0, "hosts": ["h", "h"], "cpus": 2,
         "runs": [{"algorithm": "6", "name": "binomial", "segsize": 0, "msg_size": 8, "calls": 2,
                   "entry_us": [[0.0, 1.0], [10.0, 11.0]], "exit_us": [[2.0, 3.0], [12.0, 14.0]]}]}
ESCAPES = "\x1b]0;owned\x07\x1b[31m"


@pytest.mark.parametrize("field", ["collective", "library", "algorithm", "name", "map_by", "hosts"])
def test_breakdown_never_writes_a_terminal_escape_from_the_trace(tmp_path, field):
    doc = json.loads(json.dumps(TRACE))
    if field in ("algorithm", "name"):
        doc["runs"][0][field] = ESCAPES + doc["runs"][0][field]
    elif field == "hosts":
        doc["hosts"] = [ESCAPES, "h"]
    else:
        doc[field] = ESCAPES + (doc.get(field) or "x")
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    for fmt in ("text", "markdown"):
        result = CliRunner().invoke(main, ["breakdown", str(path), "--format", fmt])
        assert "\x1b" not in result.output and "\x07" not in result.output, result.output
        assert "Traceback" not in result.output


@pytest.fixture
def no_matplotlib(monkeypatch):
    """matplotlib as if not installed: importing it raises ImportError."""
    import sys
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


def test_breakdown_timemap_without_matplotlib_is_one_line_and_writes_nothing(tmp_path, no_matplotlib):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(TRACE))
    result = CliRunner().invoke(main, ["breakdown", str(path), "--timemap", str(tmp_path / "map.png"),
                                       "-o", str(tmp_path / "b.md")])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert result.output.strip() == ("Error: --timemap needs matplotlib, which is not installed: "
                                     "pip install 'quadsel[figures]'")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


def test_report_figures_without_matplotlib_leaves_no_folder(tmp_path, no_matplotlib):
    (tmp_path / "bcast.csv").write_text(CSV)
    result = CliRunner().invoke(main, ["report", str(tmp_path / "bcast.csv"), "--no-compare", "--figures",
                                       str(tmp_path / "figs"), "-o", str(tmp_path / "r.md")])
    assert result.exit_code == 2 and "--figures needs matplotlib" in result.output, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bcast.csv"]


@pytest.mark.parametrize("value, words", [
    ("²:0-8", "preset '²' is not a number"),
    ("1:0-" + "9" * 4401, "is above 2147483647"),
    ("1:١٢-20", "is not N or N-M"),
    ("99999999999:0-8", "preset 99999999999 is beyond 2147483647"),
])
def test_the_impi_adjust_reader_refuses_numbers_it_cannot_hold_in_one_line(value, words):
    """Found by benchmarks/fuzz_readers.py once it covered this reader (issue 32): ValueError tracebacks."""
    with pytest.raises(InputError, match=re.escape(words)):
        impi_adjust.read(f"export I_MPI_ADJUST_BCAST='{value}'\n", "r.sh")


def test_a_label_with_an_escape_sequence_never_reaches_a_terminal(tmp_path):
    """`build`'s loss warning printed a method's label as read: click strips ANSI sequences only when stderr is not a
    terminal, so on a terminal `9\\x1b[31mX` turned the rest of it red (color=True: click passes them, as to a
    terminal). Every line the commands print goes through cli/echo.say."""
    rows = ["collective,algorithm,segsize,comm_size,msg_size,time_us"]
    rows += [f"bcast,{a},0,{n},{m},{t}" for n in (2, 4) for m in (8, 64, 512) for a, t in (("1", 2.0), ("2", 3.0))]
    rows += ["bcast,9\x1b[31mX\x07,0,2,8,0.01"]           # by far the fastest at one point, lost by a one-leaf tree
    (tmp_path / "m.csv").write_text("\n".join(rows) + "\n")
    result = CliRunner().invoke(main, ["build", str(tmp_path / "m.csv"), "--max-leaves", "1", "--extrapolate", "-o",
                                       str(tmp_path / "t.qt.json")], color=True)
    assert result.exit_code == 0, result.output
    warning = next(line for line in result.output.splitlines() if line.startswith("warning: the tree loses"))
    assert "9?[31mX?" in warning, warning
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", result.output), repr(result.output)


@given(st.text())
def test_visible_text_keeps_its_lines_and_shows_every_other_control_character(text):
    from quadsel.errors import visible
    shown = visible(text)
    assert len(shown) == len(text) and shown.count("\n") == text.count("\n") and visible(shown) == shown
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202e]", shown)
    assert all(a == b for a, b in zip(text, shown) if a.isalnum() or a in " \t\n.,:%")
