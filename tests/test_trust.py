"""Issue 22: what a new user and a hostile input tripped over (each test fails on the code before the fix)."""

import errno
import io
import json
import os
import re

import pytest
from click.testing import CliRunner

from quadsel import output
from quadsel.cli import main
from quadsel.errors import QuadselError, escaped, markdown_cell, one_line
from quadsel.inputs import text_lines
from quadsel.measure import output as measure_output
from quadsel.measure.launch import forward_stderr
from quadsel.measure.progress import Progress

from test_bad_inputs import GOOD

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")
HOSTILE = "evil\x1b[31m\u2028name\x85|x|"   # a CSV row is one physical line: no \\n


def test_lines_split_at_newline_only():
    assert text_lines("a\fb\r\nc\x85d\u2028e\nf") == ["a\fb", "c\x85d\u2028e", "f"]


def test_one_line_and_escapes_keep_names_on_one_line():
    assert "\u2028" not in one_line("a\u2028b") and "\n" not in one_line("a\nb")
    shown = escaped(HOSTILE)
    assert "\x1b" not in shown and "\n" not in shown and "\u2028" not in shown and "\\x1b" in shown
    assert markdown_cell("a|b").count("|") == markdown_cell("a|b").count("\\|") == 1


def _hostile_tree(tmp_path):
    data = tmp_path / "bcast.csv"
    data.write_text("collective,algorithm,segsize,comm_size,msg_size,time_us\n"
                    + "".join(f'bcast,"{name}",0,{c},{m},{t * c * (1 + m / 1024):.3f}\n'
                              for name, t in ((HOSTILE, 1.0), ("other", 1.5)) for c in (2, 4) for m in (8, 64, 512)))
    tree = tmp_path / "t.qt.json"
    result = CliRunner().invoke(main, ["build", str(data), "-o", str(tree), "--max-leaves", "none"])
    assert result.exit_code == 0, result.output
    return data, tree


def test_query_prints_one_escaped_line_per_answer(tmp_path):
    _, tree = _hostile_tree(tmp_path)
    result = CliRunner().invoke(main, ["query", str(tree), "--comm", "2", "--msg", "8"])
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 1 and "\x1b" not in result.stdout and "\u2028" not in result.stdout
    assert "\\x1b[31m\\u2028name\\x85" in result.stdout


def test_report_markdown_names_cannot_add_columns_or_lines(tmp_path):
    data, _ = _hostile_tree(tmp_path)
    result = CliRunner().invoke(main, ["report", str(data), "--no-compare"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\u2028" not in result.stdout
    for block in result.stdout.split("\n\n"):
        rows = [line for line in block.splitlines() if line.startswith("|")]
        widths = {len(re.findall(r"(?<!\\)\|", line)) for line in rows}
        assert len(widths) <= 1, block


def test_exclusive_write_never_replaces_a_file_created_meanwhile(tmp_path):
    target = tmp_path / "bcast.qt.json"
    staged = output._stage(str(target), b"mine", str(target))
    target.write_text("theirs")                   # another build won the race
    with pytest.raises(QuadselError, match="already exists"):
        output._commit(staged, str(target), str(target), exclusive=True)
    assert target.read_text() == "theirs" and os.listdir(tmp_path) == ["bcast.qt.json"]


def test_build_default_file_is_created_exclusively(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.csv").write_text(GOOD)
    real_commit = output._commit

    def racing_commit(tmp, target, path, exclusive=False):
        open(target, "w").write("the other build's tree")   # created between the check and the write
        return real_commit(tmp, target, path, exclusive)
    monkeypatch.setattr(output, "_commit", racing_commit)
    result = CliRunner().invoke(main, ["build", "m.csv"])
    assert result.exit_code == 2 and "already exists" in result.output
    assert (tmp_path / "bcast.qt.json").read_text() == "the other build's tree"


def test_write_together_leaves_nothing_when_one_file_fails(tmp_path, monkeypatch):
    real_stage, calls = output._stage, []

    def full_disk(target, data, path):
        calls.append(target)
        if len(calls) == 3:
            raise output._fail(path, os.strerror(errno.ENOSPC))
        return real_stage(target, data, path)
    monkeypatch.setattr(output, "_stage", full_disk)
    runtime = tmp_path / "rt"
    with pytest.raises(QuadselError, match="No space left"):
        output.write_together([(str(tmp_path / "b.qsb"), b"blob"), (str(runtime / "a.h"), b"h"),
                               (str(runtime / "a.c"), b"c")], folder=str(runtime))
    assert os.listdir(tmp_path) == []


def test_build_refuses_a_tree_its_loader_would_refuse(tmp_path, monkeypatch):
    from quadsel.decision import tree_file
    monkeypatch.setattr(tree_file, "MAX_CELLS", 10)
    (tmp_path / "m.csv").write_text(GOOD)
    out = tmp_path / "t.qt.json"
    result = CliRunner().invoke(main, ["build", str(tmp_path / "m.csv"), "-o", str(out)])
    assert result.exit_code == 2 and "more than 10 cells" in result.output and not out.exists()


def test_eta_is_measured_after_the_start_up():
    now = [0.0]
    stream = io.StringIO()
    progress = Progress(10, "measure", stream=stream, clock=lambda: now[0])
    now[0] = 100.0                      # the first visit carries 100 s of start-up
    progress.advance(1)
    assert "ETA --" in stream.getvalue()
    for _ in range(4):
        now[0] += 1.0                   # then 1 s per point: 5 points left
        progress.advance(1)
    assert "ETA 0m05s" in stream.getvalue().splitlines()[-1]


def test_forward_stderr_drops_open_mpis_notice_after_quadsels_error():
    read, write = os.pipe()
    dashes = b"-" * 74
    os.write(write, b"bar 1\rError: disk full\n" + dashes + b"\nprterun detected...\n" + dashes + b"\n")
    os.close(write)
    sink = io.BytesIO()
    forward_stderr(os.fdopen(read, "rb"), sink)
    assert sink.getvalue() == b"bar 1\rError: disk full\n"


@pytest.mark.parametrize("cut", ["whole", "in the error line", "the notice inside the error line"])
def test_forward_stderr_drops_the_notice_however_the_pipe_cuts_the_error_line(cut):
    """A fresh clone's run (2026-11-28): the disk-full test saw Open MPI's MPI_ABORT notice after quadsel's `Error:`
    line. The line had reached the pipe without its newline, was shown in part (as a progress line is), and only
    whole lines were checked for `Error: `; prterun's notice then came before the line's end."""
    error = b"Error: cannot write /x/bcast.csv: No space left on device; run the same command again to resume\n"
    notice = (b"-" * 74 + b"\nMPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD\n  Errorcode: 2\n\n"
              b"exactly when Open MPI kills them.\n" + b"-" * 74 + b"\n")
    chunks = {"whole": [error + notice], "in the error line": [error[:30], error[30:] + notice],
              "the notice inside the error line": [error[:-1], notice, b"\n"]}[cut]
    from unittest import mock
    from quadsel.measure import launch
    sink = io.BytesIO()
    with mock.patch.object(launch.os, "read", side_effect=chunks + [b""]):    # the pipe's reads, one chunk each
        forward_stderr(type("Pipe", (), {"fileno": lambda self: -1})(), sink)
    assert sink.getvalue() == error


def test_forward_stderr_keeps_notices_when_quadsel_said_nothing():
    read, write = os.pipe()
    text = b"-" * 74 + b"\nmpiexec could not start\n" + b"-" * 74 + b"\n"
    os.write(write, text)
    os.close(write)
    sink = io.BytesIO()
    forward_stderr(os.fdopen(read, "rb"), sink)
    assert sink.getvalue() == text


ROW = ("bcast", "6", 0, 2, 8)


def test_output_lock_refuses_a_second_writer(tmp_path):
    path = tmp_path / "m.csv"
    first = measure_output.ResultFile(path)
    try:
        with pytest.raises(QuadselError, match="being written by another quadsel measure"):
            measure_output.ResultFile(path)
        with pytest.raises(QuadselError, match="being written"):
            measure_output.check_unlocked(str(path))
    finally:
        first.close()
    measure_output.check_unlocked(str(path))     # released with the writer


def test_a_full_disk_cuts_the_torn_row_and_says_one_line(tmp_path, monkeypatch):
    path = tmp_path / "m.csv"
    results = measure_output.ResultFile(path)
    results.append(ROW, 1.5, None, 10)
    real_write = os.write

    def half_then_full(fd, data):
        if fd == results.handle.fileno():
            real_write(fd, bytes(data[:5]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)
    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(QuadselError) as caught:
        results.append(ROW[:4] + (16,), 2.5, None, 10)
    monkeypatch.undo()
    results.close()
    assert "No space left" in str(caught.value) and "1 rows written so far are kept" in str(caught.value)
    assert path.read_text().endswith(",10\n") and len(path.read_text().splitlines()) == 2
    assert measure_output.ResultFile(path).done == {ROW}     # resumable


def test_resume_refuses_another_collective_library_or_datatype_and_notes_another_grid(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text(GOOD)
    with pytest.raises(QuadselError, match="holds bcast measurements, not reduce"):
        measure_output.check_resume(str(path), "reduce", "openmpi", {})
    measure_output.write_meta(str(path), {"collective": "bcast", "library": "openmpi",
                                          "grid": {"comm_sizes": [2, 4, 8], "msg_sizes": [1, 1024, 65536]}})
    with pytest.raises(QuadselError, match="holds openmpi data"):
        measure_output.check_resume(str(path), "bcast", "mpich", {})
    # another grid is resumed, never silently (issue 32; docs/measure.md): the note the run prints says so
    note = measure_output.check_resume(str(path), "bcast", "openmpi", {"comm_sizes": [2, 4, 8], "msg_sizes": [1, 2]})
    assert "other message sizes (recorded 1,1024,65536; this run 1,2)" in note and "union" in note
    assert measure_output.check_resume(str(path), "bcast", "openmpi",
                                       {"comm_sizes": [2, 4, 8], "msg_sizes": [1, 1024, 65536]}) is None
    measure_output.write_meta(str(path), {"collective": "bcast", "library": "openmpi", "grid": {"datatype": "byte"}})
    with pytest.raises(QuadselError, match=r"other datatype \(byte; this run: float\): use the same --datatype"):
        measure_output.check_resume(str(path), "bcast", "openmpi", {"datatype": "float"})


def test_own_measurements_get_no_relabelled_copy_warning():
    from quadsel.ingest import read_measurements
    notes = read_measurements([os.path.join(EXAMPLES, "ompi5-bcast.csv")]).notes
    assert not any("relabelled copy" in note for note in notes)
    assert any("oversubscribed" in note for note in notes)     # 8 ranks on the 2-core VM, said where figures appear


def test_tiny_fitted_parameters_print_as_zero():
    from quadsel.evaluate.report import _parameter
    assert _parameter(1e-16, 1e-6) == "0" and _parameter(-3e-17, 1e-12) == "0" and _parameter(2.5e-4, 1e-12) == "0.00025"


def test_library_version_has_no_nul(monkeypatch):
    from quadsel.verify import command
    monkeypatch.setattr(command.launch, "inside_mpi_job", lambda: False)
    monkeypatch.setattr(command.launch, "library_without_init", lambda: "MPICH Version: 5.0.2\0\0\0")
    kind, version = command.current_library_version()
    assert kind == "mpich" and "\0" not in version and json.dumps(version).count("\\u0000") == 0


def test_codegen_accepts_an_ordinary_name(tmp_path):
    (tmp_path / "m.csv").write_text(GOOD)
    tree = tmp_path / "t.qt.json"
    assert CliRunner().invoke(main, ["build", str(tmp_path / "m.csv"), "-o", str(tree)]).exit_code == 0
    result = CliRunner().invoke(main, ["codegen", str(tree), "--name", "site_bcast_choice"])
    assert result.exit_code == 0 and "int site_bcast_choice(" in result.stdout
