"""Start-up time of the everyday commands (issue 13): median wall time of N runs of each.

usage: python benchmarks/startup.py [N]      (from the repository root; builds a tree of examples/ first)
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, n):
    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), max(times)


def main(n):
    with tempfile.TemporaryDirectory() as folder:
        tree = os.path.join(folder, "bcast.qt.json")
        subprocess.run(["quadsel", "build", os.path.join(ROOT, "examples", "ompi5-bcast.csv"), "-o", tree],
                       capture_output=True, check=True)
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "quadsel --version": ["quadsel", "--version"],
            "quadsel query (one point)": ["quadsel", "query", tree, "--comm", "4", "--msg", "4K"],
            "quadsel query (147 points)": ["quadsel", "query", tree, "--comm-sizes", "2-8", "--msg-sizes", "1-1M:pow2"],
            "quadsel codegen (C)": ["quadsel", "codegen", tree, "-o", os.path.join(folder, "d.c")],
        }
        print(f"{n} runs each, load average {os.getloadavg()[0]:.2f}")
        print("| command | median s | min s | max s |\n|---|---:|---:|---:|")
        for name, cmd in commands.items():
            print("| {} | {:.3f} | {:.3f} | {:.3f} |".format(name, *timed(cmd, n)))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
