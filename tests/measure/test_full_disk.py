"""Issue 32: `quadsel measure` on a disk that fills up, for real: a 64 KiB tmpfs filled almost full.

When the first metadata could not be written, rank 0 printed one line and the job hung (3 of 3 runs): the other
rank waited in the sweep's first call. A disk full in mid-run left prterun's NUL byte as a stray line after the
error. Now: one line, exit 2, every rank gone, the CSV ends with whole rows (no NUL) and resumes once there is room.
Needs root (mount) and Open MPI; skipped otherwise.
"""

import csv
import os
import signal
import subprocess
import sys
import time

import pytest

from test_measure_mpi import _env, _session_pids, needs_openmpi

pytestmark = [needs_openmpi, pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")]

GRID = ["--np", "2", "-c", "bcast", "--algorithms", "default,1,2,3,5,6", "--segments", "0,8K", "--max-reps", "5",
        "--rounds", "1", "--quiet"]
METHODS = 10      # default and 1 at segment size 0, the others at 0 and 8K


@pytest.fixture
def small_disk(tmp_path):
    folder = tmp_path / "disk"
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)


def fill(folder, leave):
    """A file that leaves `leave` bytes free on the file system of `folder`."""
    info = os.statvfs(folder)
    free = info.f_bavail * info.f_frsize
    (folder / "fill").write_bytes(b"x" * max(0, free - leave))
    return folder / "fill"


def measure(args, timeout=120):
    """The run in a session of its own: returns (exit status, stderr bytes, pids of the session left after it)."""
    proc = subprocess.Popen([sys.executable, "-m", "quadsel", "measure", *args], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env())
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        for pid in _session_pids(proc.pid):
            os.kill(pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"quadsel measure hung (more than {timeout} s)")
    return proc.returncode, err, _running(proc.pid)


def _running(sid, wait=5.0):
    """The processes of session `sid` still running (not zombies: this container's init reaps them late)."""
    deadline = time.time() + wait
    while True:
        left = []
        for pid in _session_pids(sid):
            try:
                state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z":
                left.append(pid)
        if not left or time.time() > deadline:
            return left
        time.sleep(0.1)


def check_one_line(code, err, left):
    said = err.decode(errors="replace")      # the whole of it in a failure's message (a bytes repr is cut short)
    assert code == 2, said
    assert b"\0" not in err and b"Traceback" not in err, said
    lines = said.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: cannot write ") and "No space left" in lines[0], \
        f"{len(lines)} lines:\n{said}"
    assert "run the same command again" in lines[0]
    assert left == [], f"ranks left running: {left}"


def whole_rows(path):
    """The CSV ends with whole lines and holds no NUL byte; its rows' keys."""
    data = path.read_bytes()
    assert b"\0" not in data and (not data or data.endswith(b"\n")), data[-200:]
    rows = [r for r in csv.reader(data.decode().splitlines()) if r and not r[0].startswith("#")]
    return [tuple(r[:5]) for r in rows[1:]]


def test_disk_full_at_the_first_metadata_ends_every_rank_in_one_line(small_disk):
    out = small_disk / "bcast.csv"
    filler = fill(small_disk, 4096)      # the CSV's header fits, the metadata does not
    code, err, left = measure(GRID + ["--msg-sizes", "1K,4K", "-o", str(out)])
    check_one_line(code, err, left)
    assert whole_rows(out) == [] and "a.meta.json" not in os.listdir(small_disk)
    filler.unlink()                      # room made: the same command completes the file
    code, err, left = measure(GRID + ["--msg-sizes", "1K,4K", "-o", str(out)])
    assert code == 0 and left == [], err
    keys = whole_rows(out)
    assert len(keys) == len(set(keys)) == 2 * METHODS


def test_disk_full_in_mid_run_leaves_whole_rows_and_no_stray_line(small_disk):
    out = small_disk / "bcast.csv"
    sizes = ",".join(str(1 << k) for k in range(4, 17))      # 13 sizes x 10 methods: more than a page of rows
    filler = fill(small_disk, 8192)      # a page for the CSV, one for the metadata: the rows fill the first
    code, err, left = measure(GRID + ["--msg-sizes", sizes, "-o", str(out)])
    check_one_line(code, err, left)
    partial = whole_rows(out)
    assert partial, "the disk filled before any row: the fault is not in mid-run"
    filler.unlink()
    code, err, left = measure(GRID + ["--msg-sizes", sizes, "-o", str(out)])
    assert code == 0 and left == [], err
    keys = whole_rows(out)
    assert len(keys) == len(set(keys)) == 13 * METHODS and keys[:len(partial)] == partial
