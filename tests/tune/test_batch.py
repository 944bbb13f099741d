"""`quadsel tune --sbatch`: the batch script of a tune (quadsel.tune.batch) and its refusals. The script run by a real
Slurm, cancelled and submitted again: tests/cluster/test_slurm_tune.py."""

import os
import shlex
import stat
import subprocess
import sys

import pytest

from quadsel.errors import QuadselError
from quadsel.tune import batch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tune(*args, cwd):
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.run([sys.executable, "-m", "quadsel", "tune", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=60)


def _sbatch_lines(text):
    return [line.split(None, 1)[1] for line in text.splitlines() if line.startswith("#SBATCH ")]


def test_the_script_asks_for_the_shape_and_execs_the_same_tune(tmp_path):
    done = _tune("--sbatch", "job.sh", "--nodes", "2", "--ntasks-per-node", "2", "--time", "0:30:00",
                 "--sbatch-args", "--partition=debug -A proj", "-o", "deploy", "-c", "bcast", "--msg-sizes", "8,64K",
                 "--no-figures", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "job.sh").read_text()
    assert _sbatch_lines(text) == ["--job-name=quadsel-tune", "--nodes=2", "--ntasks-per-node=2", "--time=0:30:00",
                                   "--requeue", "--open-mode=append", "--partition=debug", "-A proj"]
    last = shlex.split(text.splitlines()[-1])
    assert last[:5] == ["exec", sys.executable, "-m", "quadsel", "tune"]
    tune = last[5:]
    assert tune[tune.index("--output") + 1] == str(tmp_path / "deploy")    # absolute: the job may start elsewhere
    assert "--np" not in tune and "--sbatch" not in tune and "--nodes" not in tune
    assert "--no-figures" in tune and tune[tune.index("--collectives") + 1] == "bcast"
    assert f"cd {tmp_path} || exit 1" in text
    assert not (tmp_path / "deploy").exists()                 # nothing tuned here: the job does it
    mode = stat.S_IMODE(os.stat(tmp_path / "job.sh").st_mode)
    assert mode & stat.S_IWOTH == 0
    # the script is valid sh
    assert subprocess.run(["sh", "-n", str(tmp_path / "job.sh")]).returncode == 0


@pytest.mark.parametrize("args, message", [
    (["--time", "soon"], "not a Slurm time"),
    (["--sbatch-args", "--nodes=4"], "is tune's own"),
    (["--sbatch-args", "-t 10"], "is tune's own"),
    (["--sbatch-args", "partition"], "is not an option"),
    (["--sbatch-args", "--comment='a\x07b'"], "control character"),
    (["--sbatch-args", "--comment='open"], "--sbatch-args"),
    (["--np", "4"], "--np"),
])
def test_bad_sbatch_options_are_one_line_exit_2_and_no_script(tmp_path, args, message):
    done = _tune("--sbatch", "job.sh", "--nodes", "2", "--ntasks-per-node", "2", "-o", "deploy", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "job.sh").exists() and not (tmp_path / "deploy").exists()


def test_the_script_is_never_written_inside_the_tune_folder_nor_over_an_input(tmp_path):
    with pytest.raises(QuadselError, match="not inside the tune folder"):
        batch.write_script(str(tmp_path / "deploy" / "job.sh"), str(tmp_path / "deploy"), 2, 2, None, None, [])
    (tmp_path / "job.sh").write_text("#!/bin/sh\necho mine\n")
    done = _tune("--sbatch", "job.sh", "--nodes", "2", "--ntasks-per-node", "2", "-o", "deploy", cwd=tmp_path)
    assert done.returncode == 0                                   # a regular file is replaced, atomically
    assert "exec " in (tmp_path / "job.sh").read_text()


@pytest.mark.parametrize("text", ["90", "30:00", "2:00:00", "1-12", "1-12:30", "1-12:30:00", "UNLIMITED"])
def test_slurm_time_forms_are_taken(text):
    assert batch.check_time(text) == text
