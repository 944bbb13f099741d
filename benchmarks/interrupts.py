"""Ctrl-C at random moments of `quadsel`, counted by outcome (docs/conventions.md, "Ctrl-C"; issue 32).

usage: python benchmarks/interrupts.py [--runs 100] [--seed 1] [--max 0.2] [--script | --from-first-line]
                                        [--repo DIR] -- ARGS...

Starts `python -m quadsel ARGS` (with --script: the `quadsel` command's own lines, bin/quadsel, which pip installs
as it is) --runs times and sends SIGINT after a random delay in [0, --max] s from the process's start,
the interpreter's start-up included. With --from-first-line the clock starts at quadsel's first line instead: the
interpreter has started and found quadsel.__main__ before the child says it is ready, then runs it as `python -m`
does (quadsel's own windows, without the interpreter's start-up). Each run is counted as one of:
  exit 130            status 130, no traceback, at most one line on stderr (or the command's notes, then it)
  complete            status 0, the command's whole output
  killed by SIGINT    no output: the signal came before Python had a handler (at the interpreter's start), or,
                      "after its output" (all of what the command says without a Ctrl-C, run once first),
                      once the interpreter gave it back at its very end (130 to a shell)
  traceback (quadsel) a traceback with a frame of quadsel: a window of ours
  traceback (python)  a traceback with frames of the interpreter's start-up only (site, .pth files, runpy)
  traceback (harness) --from-first-line: the signal came while the harness still handed over to quadsel
  Aborted!            Click's own "Aborted!" (status 1)
  other               anything else, printed
--repo: the source tree to run (default: this one; a checkout of another commit to compare).
"""

import argparse
import collections
import os
import random
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = open(os.path.join(os.path.dirname(HERE), "bin", "quadsel"), encoding="utf-8").read()   # the installed command
# --from-first-line: runpy finds and compiles quadsel.__main__, says R, waits for a byte, then runs it.
BOOT = """import os, sys, runpy
sys.argv[1:] = ARGS
name, spec, code = runpy._get_module_details("quadsel.__main__")
os.write(1, b"R")
os.read(0, 1)
runpy._run_module_code(code, None, "__main__", spec)
"""
# --script --from-first-line: bin/quadsel compiled, then run from its first line, as its shebang would
BOOT_SCRIPT = """import os, sys
sys.argv[1:] = ARGS
code = compile(open(PATH, encoding="utf-8").read(), PATH, "exec")
os.write(1, b"R")
os.read(0, 1)
exec(code, {"__name__": "__main__"})
"""


def harness_only(err):
    """A traceback whose frames are all the harness's (`<string>`), runpy's, or importlib's under runpy's (runpy's
    `_run_code` reads the module's `__cached__` through importlib before it runs the module's first line; a fresh
    clone's run met a Ctrl-C there, 2026-11-28): before quadsel's first line."""
    frames = re.findall(r'File "([^"]+)"', err)
    harness = ("<frozen runpy", "<frozen importlib._bootstrap")
    return bool(frames) and frames[0] == "<string>" and all(f == "<string>" or f.startswith(harness) for f in frames)


def outcome(code, err, repo, out="", whole=None):
    """The kind of one run (the module's docstring lists them); `whole`: (stdout, stderr) of the command run without
    a Ctrl-C, so that a run killed at the interpreter's very end after saying all of that is told from others."""
    frames = re.findall(r'File "([^"]+)"', err)
    if any(f.startswith((os.path.join(repo, "quadsel"), os.path.join(repo, "bin"))) for f in frames):
        return "traceback (quadsel)"
    if "Traceback" in err or "Exception ignored" in err or "KeyboardInterrupt" in err:
        return "traceback (harness)" if harness_only(err) else "traceback (python)"
    if "Aborted" in err:
        return "Aborted!"
    lines = err.strip().splitlines()
    if code == 130 and (len(lines) <= 1 or re.match(r"quadsel( \w+)?: interrupted", lines[-1])):
        return "exit 130"     # at most one line, or the command's notes and then its one line
    if code == 0:
        return "complete"
    if code == -signal.SIGINT and not lines:
        return "killed by SIGINT, after its output" if out.strip() else "killed by SIGINT"
    if code == -signal.SIGINT and whole is not None and (out, err) == tuple(whole):
        return "killed by SIGINT, after its output"
    return f"other: status {code}, {err.strip()[:200]!r}"


def sigint_default():
    """In the child before exec: SIGINT to its default. A harness started with SIGINT ignored (a non-interactive
    shell's `&`, as a CI job may be) passes SIG_IGN on, and Python then never raises KeyboardInterrupt at all."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_once(args, delay, repo, mode="-m", cwd=None):
    """Run quadsel ARGS (mode "-m", "script" or "first-line"), SIGINT after `delay` s (None: never):
    (status, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=repo + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if mode == "script":
        cmd = [sys.executable, "-c", SCRIPT, *args]
    elif mode == "script-first-line":
        path = os.path.join(repo, "bin", "quadsel")
        cmd = [sys.executable, "-c", BOOT_SCRIPT.replace("ARGS", repr(list(args))).replace("PATH", repr(path))]
    elif mode == "first-line":
        cmd = [sys.executable, "-c", BOOT.replace("ARGS", repr(list(args)))]
    else:
        cmd = [sys.executable, "-m", "quadsel", *args]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=cwd or repo, preexec_fn=sigint_default)
    if mode in ("first-line", "script-first-line"):
        assert proc.stdout.read(1) == b"R"
        proc.stdin.write(b"g")
        proc.stdin.flush()
    if delay is not None:
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max", type=float, default=0.2, help="latest SIGINT, seconds (default 0.2)")
    parser.add_argument("--script", action="store_true", help="the console script's lines instead of python -m")
    parser.add_argument("--from-first-line", action="store_true", help="the clock starts at quadsel's first line")
    parser.add_argument("--repo", default=os.path.dirname(HERE))
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    opts = parser.parse_args(argv[:split])
    args = argv[split + 1:] or ["--version"]
    repo = os.path.abspath(opts.repo)
    rng = random.Random(opts.seed)
    counts = collections.Counter()
    mode = ("script-first-line" if opts.script and opts.from_first_line else "script" if opts.script
            else "first-line" if opts.from_first_line else "-m")
    whole = run_once(args, None, repo, mode)[1:]      # what the command says when no Ctrl-C comes
    for _ in range(opts.runs):
        code, out, err = run_once(args, rng.uniform(0, opts.max), repo, mode)
        kind = outcome(code, err, repo, out, whole)
        counts[kind] += 1
        if kind.startswith("traceback") and counts[kind] == 1:
            print(f"first {kind}:\n{err}", file=sys.stderr)
    for name, count in counts.most_common():
        print(f"{count:5d}  {name}")


if __name__ == "__main__":
    main()
