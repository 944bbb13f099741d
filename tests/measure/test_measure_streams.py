"""`quadsel measure` output paths and Ctrl-C with the real MPI: -o - streams the CSV, a missing folder fails
before anything runs, an interrupt keeps the rows and says how to resume (exit status 130)."""

import os
import signal
import subprocess
import sys
import time

from test_measure_mpi import TINY, _env, keys, needs_openmpi, pytestmark  # noqa: F401 (pytestmark: same skips)
from helpers import like_a_terminal

from quadsel.ingest import read_measurements
from quadsel.ingest.table import META_COMMENT


def _quadsel(args, **env):
    return subprocess.run([sys.executable, "-m", "quadsel", "measure", *args], capture_output=True, text=True,
                          timeout=240, env=_env(**env))


def _until(condition, seconds=120):
    deadline = time.time() + seconds
    while not condition():
        if time.time() > deadline:
            return False
        time.sleep(0.01)
    return True


@needs_openmpi
def test_dash_streams_the_csv_with_its_metadata_to_stdout(tmp_path):
    done = _quadsel(TINY + ["-o", "-"])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("collective,algorithm,segsize")
    assert sum(line.startswith(META_COMMENT) for line in lines) == 2       # at the start and at the end
    assert len([line for line in lines if not line.startswith("#")]) == 1 + 8
    assert not os.path.exists("-")
    saved = tmp_path / "streamed.csv"
    saved.write_text(done.stdout)
    rows = read_measurements(saved)          # the stream, saved, reads like any measure CSV
    assert {m.algorithm for m in rows} == {"default", "1", "6"}


@needs_openmpi
def test_missing_folder_fails_before_mpiexec_starts(tmp_path):
    start = time.time()
    done = _quadsel(TINY + ["-o", str(tmp_path / "no" / "such" / "out.csv")])
    assert done.returncode == 2 and "does not exist" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "no").exists() and time.time() - start < 30


@needs_openmpi
def test_ctrl_c_keeps_the_rows_says_how_to_resume_and_exits_130(tmp_path):
    out = tmp_path / "c.csv"
    args = ["--np", "2", "-c", "bcast", "--algorithms", "default,1,6", "--segments", "0",
            "--msg-sizes", "1-1M:pow2", "--rounds", "1", "--max-reps", "20", "--quiet", "-o", str(out)]
    proc = subprocess.Popen([sys.executable, "-m", "quadsel", "measure", *args], preexec_fn=like_a_terminal,
                            env=_env(QUADSEL_MEASURE_POINT_DELAY="0.2"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert _until(lambda: proc.poll() is not None or (out.exists() and len(out.read_text().splitlines()) > 3))
    assert proc.poll() is None, "the run ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)       # what a terminal's Ctrl-C does: the foreground process group
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    lines = stderr.strip().splitlines()
    kept = keys(out)
    assert lines == [f"quadsel measure: interrupted; {len(kept)} rows kept in {out}; run the same command again "
                     "to resume"], stderr
    assert 3 <= len(kept) < 3 * 21
    time.sleep(1)
    assert keys(out) == kept                  # the job is stopped, not left running as orphans
    again = _quadsel(args)
    assert again.returncode == 0, again.stderr
    final = keys(out)
    assert len(final) == len(set(final)) == 3 * 21 and final[:len(kept)] == kept


def _locked(path):
    from quadsel.errors import QuadselError
    from quadsel.measure.output import check_unlocked
    try:
        check_unlocked(str(path))
    except QuadselError:
        return True
    return False


def _processes_naming(text):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if text.encode() in handle.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


@needs_openmpi
def test_kill_9_of_the_launcher_ends_the_ranks_and_frees_the_output(tmp_path):
    """Issue 22: after `kill -9` of `quadsel measure --np 2` the ranks end with it (their lock on the output is
    released), and a second run started while they still write is refused in one line."""
    out = tmp_path / "k.csv"
    proc = subprocess.Popen([sys.executable, "-m", "quadsel", "measure", *TINY, "--msg-sizes", "1-64:pow2",
                             "--rounds", "3", "-o", str(out)], start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=_env(QUADSEL_MEASURE_POINT_DELAY="0.5"))
    try:
        assert _until(lambda: _locked(out), 120), proc.stderr.read() if proc.poll() is not None else "no lock"
        second = _quadsel([*TINY, "-o", str(out)])
        assert second.returncode == 2 and "being written by another quadsel measure" in second.stderr
        assert len(second.stderr.strip().splitlines()) == 1, second.stderr
        proc.kill()                                   # kill -9 of the launcher alone
        proc.wait(timeout=30)
        assert _until(lambda: not _locked(out), 60), "the ranks still hold the output"
        assert _until(lambda: not _processes_naming(str(out)), 60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
