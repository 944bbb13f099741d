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
