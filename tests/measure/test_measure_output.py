"""Crash-safe output of `quadsel measure`: rows, half-written lines, resume, the rounds journal."""

import pytest

from quadsel.errors import QuadselError
from quadsel.ingest.table import GENERIC_COLUMNS
from quadsel.measure.output import Journal, ResultFile, journal_path, meta_path

KEY = ("bcast", "6", 8192, 4, 1024)


def test_header_rows_and_resume(tmp_path):
    path = tmp_path / "out.csv"
    out = ResultFile(path)
    out.append(KEY, 12.3456, 1.5, 40)
    out.close()
    lines = path.read_text().splitlines()
    assert lines[0] == ",".join(GENERIC_COLUMNS)
    assert lines[1] == "bcast,6,8192,4,1024,12.346,1.500,40"
    again = ResultFile(path, resume=True)
    assert again.done == {KEY}
    again.append(("bcast", "default", 0, 4, 1024), 10.0, 1.0, 10)
    again.close()
    assert len(path.read_text().splitlines()) == 3
    fresh = ResultFile(path, resume=False)
    fresh.close()
    assert path.read_text().splitlines() == [",".join(GENERIC_COLUMNS)]


def test_half_written_last_line_is_dropped(tmp_path):
    path = tmp_path / "out.csv"
    path.write_text(",".join(GENERIC_COLUMNS) + "\nbcast,1,0,2,1,1.000,0.100,10\nbcast,2,0,2,1,1.0")
    out = ResultFile(path)
    assert out.done == {("bcast", "1", 0, 2, 1)}
    out.append(("bcast", "2", 0, 2, 1), 2.0, 0.1, 10)
    out.close()
    assert path.read_text().splitlines()[-1] == "bcast,2,0,2,1,2.000,0.100,10"
    assert len(path.read_text().splitlines()) == 3


def test_refuses_a_foreign_csv(tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(QuadselError, match="not a quadsel measure CSV"):
        ResultFile(path)


def test_journal_round_trip_and_prior(tmp_path):
    path = tmp_path / "out.csv"
    journal = Journal(journal_path(path))
    journal.record(KEY, 1, [1.0, 2.0], 0.5)
    journal.close()
    with open(journal_path(path), "a") as handle:
        handle.write('{"key": ["bcast", "6", 8192, 4, 1024], "round": 2, "samp')    # killed mid-write
    again = Journal(journal_path(path))
    assert again.has(KEY, 1) and not again.has(KEY, 2)
    assert again.prior(KEY, 2) == ([1.0, 2.0], 0.5)
    assert again.prior(KEY, 3) is None
    assert again.prior(KEY, 1) == ([], 0.0)
    again.close(remove=True)
    assert not (tmp_path / "out.csv.rounds.jsonl").exists()


def test_meta_path_is_beside_the_csv():
    assert meta_path("x/ompi5-bcast.csv") == "x/ompi5-bcast.meta.json"
    assert meta_path("data") == "data.meta.json"


def test_resume_rules_for_rounds(tmp_path):
    from quadsel.measure.runner import _pending
    journal = Journal(journal_path(tmp_path / "out.csv"))
    journal.record(KEY, 1, [1.0], 0.1)
    other = ("bcast", "1", 0, 4, 1024)
    assert not _pending(KEY, 1, 2, set(), journal)        # round 1 journaled: skipped
    assert _pending(KEY, 2, 2, set(), journal)            # the last round writes the row
    assert _pending(KEY, 1, 1, set(), journal)            # rerun with fewer --rounds: still measured
    assert not _pending(KEY, 2, 2, {KEY}, journal)        # a row in the CSV: done for good
    assert _pending(other, 1, 2, set(), journal)
    journal.close()


def test_a_stream_that_fails_in_mid_run_ends_the_job_in_one_line():
    """Issue 32's full disk, on a stream output (`-o -` into a pipe whose reader is gone, a full disk behind it):
    the failed write was an OSError out of rank 0 in mid-sweep (a traceback, the other ranks waiting); now the
    job's abort is called with one line, or a QuadselError raised."""
    import os
    read, write = os.pipe()
    out = ResultFile(f"/dev/fd/{write}")
    assert os.read(read, 1000).startswith(b"collective,")
    os.close(read)                      # the reader is gone
    said = []
    out.fatal = said.append
    with pytest.raises(QuadselError, match=r"cannot write /dev/fd/\d+: Broken pipe; the 0 rows streamed so far"):
        out.append(KEY, 1.0, 0.1, 10)
    assert len(said) == 1 and "\n" not in said[0]
    out.close()
    os.close(write)
    with pytest.raises(QuadselError, match="cannot write /dev/full: No space left on device"):
        ResultFile("/dev/full")
