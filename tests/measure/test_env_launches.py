"""Libraries forced one launch per method (Intel MPI): every collective has its presets or is refused in one
line, and the progress display runs on across the launches instead of restarting at each."""

import io

import pytest

from quadsel.errors import QuadselError
from quadsel.libraries import COLLECTIVES, intelmpi
from quadsel.libraries.base import Library
from quadsel.measure import progress, runner

IMPI = intelmpi.IntelMPI("Intel(R) MPI Library 2021.18.1 for Linux* OS")


@pytest.mark.parametrize("collective", COLLECTIVES)
def test_every_collective_has_intel_presets_to_time_besides_the_default(collective):
    labels = IMPI.resolve(collective, None)
    assert labels[0] == "default" and len(labels) >= 3, labels        # the default, 0 and documented presets
    assert all(intelmpi.forcing_env(collective, label) == {f"I_MPI_ADJUST_{collective.upper()}": label}
               for label in labels[1:])
    runner.check_methods(IMPI, collective, labels, None)


def test_a_collective_without_known_algorithms_is_refused_not_timed_as_the_default_alone(monkeypatch):
    monkeypatch.delitem(intelmpi.ALGORITHMS, "alltoall")
    labels = IMPI.resolve("alltoall", None)
    with pytest.raises(QuadselError, match="would time only the library default") as info:
        runner.check_methods(IMPI, "alltoall", labels, None)
    assert "\n" not in str(info.value)
    runner.check_methods(IMPI, "alltoall", labels, ["default"])          # asked for: allowed
    runner.check_methods(Library("Some MPI 1.0"), "alltoall", ["default"], None)   # an unknown MPI: its default


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_one_progress_display_across_launches(monkeypatch):
    stream, clock = io.StringIO(), Clock()
    monkeypatch.setenv("QUADSEL_MEASURE_TTY", "1")
    monkeypatch.setattr(progress.time, "time", lambda: 1000.0 + clock.now)
    monkeypatch.setenv(progress.START_ENV, "1000.0")
    shown = []
    for i in (1, 2, 3, 4):                                   # four launches of 5 points each, 1 s a point
        monkeypatch.setenv(progress.LAUNCH_ENV, f"{i}/4")
        bar = progress.Progress(5, "measure allreduce", stream=stream, clock=clock)
        for _ in range(5):
            clock.now += 1.0
            bar.advance(1)
            shown.append(stream.getvalue().rsplit("\r", 1)[-1])
        bar.close()
    text = stream.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")     # one line, ended by the last launch only
    assert "launch 3/4, 2/5 points ( 60%)" in shown[11] and "elapsed 0m12s" in shown[11]
    assert "ETA 0m08s" in shown[11]                          # the whole run's rate: 12 s for 60 %
    assert "(100%)" in shown[-1] and "launch 4/4" in shown[-1]
    fractions = [int(s.split("(")[1].split("%")[0]) for s in shown]
    assert fractions == sorted(fractions)                    # never restarts


def test_without_launch_variables_the_bar_is_the_launch_own(monkeypatch):
    monkeypatch.delenv(progress.LAUNCH_ENV, raising=False)
    assert progress.launch_part({}) is None
    assert progress.launch_part({progress.LAUNCH_ENV: "5/4", progress.START_ENV: "1"}) is None
    assert progress.launch_part({progress.LAUNCH_ENV: "2/4", progress.START_ENV: "1.5"}) == (2, 4, 1.5)
