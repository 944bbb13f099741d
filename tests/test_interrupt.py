"""Issue 32: Ctrl-C in the first ~0.1 s still gave a traceback in about 5 of 100 runs: while Click and the commands
were loaded, in Click's parsing (`--version`, "Aborted!" with status 1), before the command's own handler, and in
the interpreter's shutdown after it. quadsel/__main__.py and entry.py take Ctrl-C in hand at their first line,
cli/group.py hands it to the command while it runs and takes it back after (docs/conventions.md, "Ctrl-C").

SIGINT is sent at random delays, many times, in bounded time. Every run must end with status 130 and at most the
one line, or complete normally (its output whole), and never print a traceback."""

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "ompi5-bcast.csv"

# `python -m quadsel ARGS` from quadsel's first line on: the interpreter has started and runpy has found and compiled
# quadsel/__main__.py before the child says it is ready; what follows is runpy running it, as `python -m` does.
BOOT = """import os, sys, runpy
sys.argv[1:] = ARGS
name, spec, code = runpy._get_module_details("quadsel.__main__")
os.write(1, b"R")
os.read(0, 1)
runpy._run_module_code(code, None, "__main__", spec)
"""


def _env():
    return dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _interrupt(args, delay):
    """Run `python -m quadsel ARGS` (BOOT), send SIGINT `delay` seconds after its first line (None: never):
    (status, out, err)."""
    proc = subprocess.Popen([sys.executable, "-c", BOOT.replace("ARGS", repr(list(args)))], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), cwd=REPO)
    assert proc.stdout.read(1) == b"R"
    proc.stdin.write(b"g")
    proc.stdin.flush()
    if delay is not None:
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def before_quadsel(err):
    """A traceback raised before quadsel's first line ran: in this harness (`<string>`) or runpy, nothing else (the
    signal can reach the child while it still returns from the handshake)."""
    frames = re.findall(r'File "([^"]+)"', err)
    return (err.startswith("Traceback") and err.rstrip().endswith("KeyboardInterrupt") and frames
            and frames[0] == "<string>" and all(f == "<string>" or f.startswith("<frozen runpy") for f in frames))


def _check(code, out, err, complete):
    if before_quadsel(err):
        return "before"
    assert "Traceback" not in err and "Exception ignored" not in err and "Aborted" not in err, err
    if code == 130:
        lines = err.strip().splitlines()
        assert not lines or re.match(r"quadsel( \w+)?: interrupted", lines[-1]) or complete(out, err), err
    else:
        assert code == 0 and complete(out, err), (code, err)


def _delays(rng, n, whole):
    """Most in the first 0.15 s (the issue's window), the rest anywhere in the run (its end included)."""
    return [rng.uniform(0, 0.15) if i % 3 else rng.uniform(0, whole) for i in range(n)]


@pytest.mark.parametrize("args, runs", [(["--version"], 30), (["build", str(EXAMPLE), "-o", "OUT"], 30)])
def test_ctrl_c_at_any_moment_gives_no_traceback(tmp_path, args, runs):
    rng = random.Random(32)
    out_path = tmp_path / "t.qt.json"
    args = [str(out_path) if a == "OUT" else a for a in args]
    started = time.monotonic()
    code, out, err = _interrupt(args, None)             # uninterrupted: how long a run takes here
    whole = time.monotonic() - started
    assert code == 0, err

    def complete(out, err):
        if args == ["--version"]:
            return out.startswith("quadsel, version")
        return "wrote" in err and out_path.exists()
    seen = []
    deadline = time.monotonic() + 240
    for delay in _delays(rng, runs, whole * 1.2):
        if time.monotonic() > deadline:
            break
        if out_path.exists():
            out_path.unlink()
        code, out, err = _interrupt(args, delay)
        seen.append(_check(code, out, err, complete) or code)
    assert 130 in seen, "no run was interrupted: the delays missed the command"
    assert seen.count("before") <= len(seen) // 4, seen


def test_python_m_quadsel_itself_never_shows_a_quadsel_frame(tmp_path):
    """The literal `python -m quadsel`: before its first line runs, the interpreter starts (site-packages' .pth
    files, runpy), where Python itself turns Ctrl-C into a traceback and no program can help it
    (docs/conventions.md measures that window). From quadsel's first line on, never a traceback."""
    rng = random.Random(320)
    for _ in range(30):
        proc = subprocess.Popen([sys.executable, "-m", "quadsel", "--version"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=_env(), cwd=tmp_path)
        time.sleep(rng.uniform(0, 0.3))
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        err = err.decode(errors="replace")
        frames = re.findall(r'File "([^"]+)"', err)
        assert not [f for f in frames if f"{os.sep}quadsel{os.sep}" in f], err
        assert "Aborted" not in err, err
        assert proc.returncode in (0, 130, 1, -signal.SIGINT), err   # 1: Python's own, in its start-up
