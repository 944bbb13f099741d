"""A measurement job that fails says why in one line: a rank's exception, not the launcher's frame of dashes
(pipeline/measure.py's _Job; seen under Slurm, issue 40: "measuring allgatherv failed: -----")."""

from types import SimpleNamespace

import pytest

from quadsel.measure import launch
from quadsel.pipeline import measure, measure_spec

OPEN_MPI_END = ["Traceback (most recent call last):", '  File "<string>", line 8, in <module>',
                "mpi4py.MPI.Exception: MPI_ERR_UNSUPPORTED_OPERATION: operation not supported",
                "-" * 74, "prterun detected that one or more processes exited with non-zero status, thus causing",
                "the job to be terminated. The first process to do so was:", "",
                "   Process name: [prterun-node1-1@1,2]", "   Exit code:    1", "-" * 74]


@pytest.mark.parametrize("said, expected", [
    (OPEN_MPI_END, "MPI_ERR_UNSUPPORTED_OPERATION: operation not supported"),
    (["some line", "Error: no such thing", "-" * 30], "no such thing"),
    (["the last words", "-" * 30, ""], "the last words"),
    ([], "the job ended with status 1"),
])
def test_a_failed_job_names_its_cause(monkeypatch, tmp_path, said, expected):
    def run(command, env, timeout=None, on_line=None):
        for line in said:
            on_line(line)
        return 1
    monkeypatch.setattr(launch, "run", run)
    monkeypatch.setattr(launch, "launch_command", lambda *a, **k: ["true"])
    monkeypatch.setattr(measure_spec, "dumps", lambda spec: "{}")
    lines = []
    job = measure._Job(None, 4, "mpiexec", "openmpi", [], lambda line: lines.append(line) or True, None)
    job.workdir = str(tmp_path)
    with pytest.raises(measure.MeasureFailed) as info:
        job.run(SimpleNamespace(collective="allgatherv"), {})
    message = str(info.value)
    assert message.startswith("measuring allgatherv failed: ") and expected in message and "\n" not in message
    assert "---" not in message


ABORT_NOTICE = ["-" * 74, "MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD", "  Proc: [[63927,1],0]",
                "  Errorcode: 2", "", "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.", "-" * 74,
                "[node1:4242] PMIX ERROR: PMIX_ERR_UNREACH in file server.c at line 3000"]
ERROR = "Error: cannot write /d/bcast.csv: No space left on device; run the same command again to resume"


def _job_of_a_launcher(monkeypatch, tmp_path, lines, status):
    """A _Job whose launcher is a real child process writing `lines` on its stderr and ending with `status`."""
    script = tmp_path / "launcher.txt"
    script.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(launch, "launch_command", lambda *a, **k: ["sh", "-c", f"cat {script} >&2; exit {status}"])
    monkeypatch.setattr(measure_spec, "dumps", lambda spec: "{}")
    job = measure._Job(None, 2, "mpiexec", "openmpi", [], None, None)
    job.workdir = str(tmp_path)
    return job


@pytest.mark.parametrize("order", ["the notice first", "the error first"])
def test_a_ranks_error_line_is_the_whole_story_whichever_reaches_the_launcher_first(monkeypatch, tmp_path, capfd,
                                                                                      order):
    """CI and 3 of 5 fresh clones (2026-11-28): after a full disk the user saw Open MPI's MPI_ABORT notice below
    quadsel's one line. prterun prints its notice itself, and forwards the rank's `Error:` line on its own time: the
    notice came first, was held as a notice of the job, and was passed on when the job ended. A real child process
    here (the launcher's stderr through launch.run's forwarder), as a launcher that prints in either order."""
    lines = ABORT_NOTICE + [ERROR] if order == "the notice first" else [ERROR] + ABORT_NOTICE
    job = _job_of_a_launcher(monkeypatch, tmp_path, lines, 2)
    with pytest.raises(measure.MeasureFailed) as info:
        job.run(SimpleNamespace(collective="bcast"), {})
    assert str(info.value) == "measuring bcast failed: " + ERROR[len("Error: "):] and info.value.said
    assert capfd.readouterr().err == ERROR + "\n"


def test_a_launchers_notice_of_a_job_that_ran_is_passed_on(monkeypatch, tmp_path, capfd):
    """Without a rank's `Error:` line the held notice is all the user learns: it is passed on, whole."""
    notice = ["-" * 74, "WARNING: There was an error initializing an OpenFabrics device.", "-" * 74,
              "[node1:4242] some diagnostic"]
    job = _job_of_a_launcher(monkeypatch, tmp_path, notice, 0)
    job.run(SimpleNamespace(collective="bcast"), {})
    assert capfd.readouterr().err == "\n".join(notice) + "\n"
