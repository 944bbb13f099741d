"""Ctrl-C at random moments of `quadsel`, counted by outcome (docs/conventions.md, "Ctrl-C").

usage: python benchmarks/interrupts.py [--runs 100] [--seed 1] [--max 0.15] [--from-first-line] [--repo DIR] -- ARGS...

Starts `python -m quadsel ARGS` --runs times and sends SIGINT after a random delay in [0, --max] s: from the
process's start (the literal command, the interpreter's start-up included), or with --from-first-line from
quadsel's first line (tests/test_interrupt.py's harness). Each run is counted as: exit 130 / complete (0) /
killed by the signal / "aborted" (Click's) / a traceback before quadsel's first line / a traceback with a frame
of quadsel. --repo: the source tree to run (default: this one; e.g. a checkout of main, to compare).
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


def outcome(code, err, repo):
    frames = re.findall(r'File "([^"]+)"', err)
    if any(f.startswith(os.path.join(repo, "quadsel")) for f in frames):
        return "traceback with a quadsel frame"
    if "Traceback" in err or "Exception ignored" in err:
        return "traceback before quadsel's first line"
    if "Aborted" in err:
        return "Click's Aborted!"
    return {0: "complete", 130: "exit 130", -signal.SIGINT: "killed by SIGINT before Python's handler"}.get(
        code, f"exit {code}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max", type=float, default=0.15, help="latest SIGINT, seconds (default 0.15)")
    parser.add_argument("--from-first-line", action="store_true")
    parser.add_argument("--repo", default=os.path.dirname(HERE))
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    opts = parser.parse_args(argv[:split])
    opts.args = argv[split + 1:]
    repo = os.path.abspath(opts.repo)
    env = dict(os.environ, PYTHONPATH=repo + os.pathsep + os.environ.get("PYTHONPATH", ""))
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
    import test_interrupt   # the first-line harness (BOOT)
    rng = random.Random(opts.seed)
    counts = collections.Counter()
    for _ in range(opts.runs):
        delay = rng.uniform(0, opts.max)
        if opts.from_first_line:
            boot = test_interrupt.BOOT.replace("ARGS", repr(list(opts.args)))
            proc = subprocess.Popen([sys.executable, "-c", boot], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=env)
            proc.stdout.read(1)
            proc.stdin.write(b"g")
            proc.stdin.flush()
        else:
            proc = subprocess.Popen([sys.executable, "-m", "quadsel", *opts.args], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=env)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=300)
        err = err.decode(errors="replace")
        if opts.from_first_line and test_interrupt.before_quadsel(err):
            counts["traceback before quadsel's first line"] += 1
        else:
            counts[outcome(proc.returncode, err, repo)] += 1
    for name, count in counts.most_common():
        print(f"{count:5d}  {name}")


if __name__ == "__main__":
    main()
