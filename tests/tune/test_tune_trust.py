"""Issue 41: a tune folder a site admin can trust -- tune's own, checked when read back, tied to what made it, and
left as it was when a start fails."""

import hashlib
import json
import os
import shlex
import subprocess
import sys

import pytest

from quadsel.tune.report import last_line

from test_tune_mpi import TINY, _tune

IMPI_PYTHON = os.environ.get("QUADSEL_IMPI_PYTHON")


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_line(done, words):
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and words in lines[0], done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("mine", [{"report.md": "my notes\n", "tuned.env": "export X=1\n", "tuned.rules": "1\n"},
                                  {"measurements/bcast.csv": "collective,algorithm,comm_size,msg_size,time_us\n"
                                                             "bcast,6,2,8,1.0\n"}])
def test_a_folder_of_someone_elses_files_is_refused_and_left_as_it_was(tmp_path, mine):
    out = tmp_path / "deploy"
    for name, text in mine.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    before = {name: _sha(out / name) for name in mine}
    done = _tune([*TINY, "-c", "bcast", "-o", str(out)], timeout=120)
    _one_line(done, "holds files and no tune journal")
    assert {name: _sha(out / name) for name in mine} == before
    assert sorted(p.name for p in out.rglob("*")) == sorted({os.path.basename(n) for n in mine} |
                                                            ({"measurements"} if "measurements/bcast.csv" in mine
                                                             else set()))


def test_a_failed_start_leaves_nothing_behind(tmp_path):
    out = tmp_path / "deploy"
    done = _tune([*TINY, "-c", "barrier", "--mpiexec", "/nonexistent", "-o", str(out)], timeout=120)
    _one_line(done, "mpiexec not found")
    assert not out.exists()


def test_a_budget_that_ends_before_the_first_row_says_so(tmp_path):
    done = _tune([*TINY, "-c", "bcast", "--budget", "1s", "-o", str(tmp_path / "deploy")], timeout=300)
    assert "file not found" not in done.stderr and "Traceback" not in done.stderr
    assert done.returncode == 2 and "give a larger --budget" in done.stderr.strip().splitlines()[-1]


def test_what_tune_wrote_is_reused_only_as_it_wrote_it_and_with_the_same_settings(tmp_path):
    out = tmp_path / "deploy"
    first = _tune([*TINY, "-c", "barrier", "-o", str(out)])
    assert first.returncode == 0, first.stderr
    journal = json.loads((out / "tune.json").read_text())
    assert journal["written"]["verify/first.json"] == _sha(out / "verify" / "first.json")
    assert journal["steps"]["verify:first"]["settings"]["rounds"] == 2
    # a verify result edited to claim a gain is neither believed nor replaced (issue 41: it was, "2.01x")
    result = out / "verify" / "first.json"
    kept = result.read_text()
    doc = json.loads(kept)
    doc["summary"] = {c: dict(s, log_mean=0.7) for c, s in doc["summary"].items()}
    result.write_text(json.dumps(doc))
    edited = _tune([*TINY, "-c", "barrier", "-o", str(out)])
    _one_line(edited, "first.json was changed since quadsel tune wrote it")
    result.write_text(kept)
    # other verify settings: verified again, not the 2-round results reused
    again = _tune([*TINY[:-3], "--verify-rounds", "3", "--no-figures", "-c", "barrier", "-o", str(out)])
    assert again.returncode == 0, again.stderr
    assert json.loads((out / "tune.json").read_text())["steps"]["verify:first"]["settings"]["rounds"] == 3
    # a file of tune's that someone changed is not replaced either
    (out / "tuned.env").write_text("export MINE=1\n")
    mine = _tune([*TINY, "-c", "barrier", "-o", str(out)])
    _one_line(mine, "tuned.env was changed since quadsel tune wrote it")
    assert (out / "tuned.env").read_text() == "export MINE=1\n"


def test_the_last_line_escapes_what_it_prints_and_quotes_what_is_pasted(tmp_path):
    s = {"deployed": ["bcast"], "collectives": ["bcast", "reduce"],
         "overall": {"geomean_speedup": 1.2, "geomean_low": 1.1, "geomean_high": 1.3}}
    hostile = str(tmp_path / "x'$(touch PWNED)'`touch PWNED2`")
    line = last_line(s, hostile)
    command = line.rsplit("; ", 1)[1]
    assert command == ". " + shlex.quote(os.path.join(hostile, "tuned.env"))
    os.makedirs(hostile)
    open(os.path.join(hostile, "tuned.env"), "w").write("QUADSEL_SOURCED=yes\n")
    done = subprocess.run(["sh", "-c", command + ' && printf %s "$QUADSEL_SOURCED"'], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.stdout == "yes" and not (tmp_path / "PWNED").exists() and not (tmp_path / "PWNED2").exists()
    for name in ("a\x1b[31mb\x07", "two\nlines"):
        for line in (last_line(s, name), last_line(dict(s, deployed=[]), name)):
            assert all(ch.isprintable() for ch in line), repr(line)


@pytest.mark.skipif(not IMPI_PYTHON, reason="the Intel MPI venv: set QUADSEL_IMPI_PYTHON to a Python with Intel MPI "
                                            "(impi-rt)")
def test_intel_mpi_tune_decides_before_measuring_what_it_can_deploy(tmp_path):
    """It measured all 14 collectives for 4:42, then stopped: Intel MPI's files carry none of allgather's rules."""
    done = subprocess.run([IMPI_PYTHON, "-m", "quadsel", "tune", *TINY, "-c", "allgather", "-o",
                           str(tmp_path / "deploy")], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(os.path.dirname(os.path.dirname(os.path.dirname(
                              os.path.abspath(__file__)))))))
    _one_line(done, "Intel MPI's files carry no rules for allgather")
    assert not (tmp_path / "deploy").exists()
