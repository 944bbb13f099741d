"""How far does `quadsel verify` put a selection that changes nothing from 1? The A/A noise behind --min-gain.

usage: python benchmarks/verify_noise.py COLLECTIVE [--runs 3] [--rounds 5] [--msg-sizes LIST] [--python PY]

1. `quadsel verify` of a tree that selects one algorithm at every message size (2 ranks, not oversubscribed),
   with its follow check: the `default ran` column names, per point, the algorithm the library default ran.
2. The A/A tree: at every point where that name is one algorithm at segment size 0 (fingerprint match), that
   algorithm; verify forces it as quadsel's arm and times it against the default, which runs the same code.
3. `--runs` verifies of the A/A tree (--no-check-rules; the same --rounds as a user's default run): per run the
   geometric-mean speed-up and its interval, and the per-point verdicts. Any departure from 1 is noise: the
   spread of the geometric mean between runs is what a gain must clear (docs/deploy.md, "The minimum gain").

Short on purpose (0.1 s per arm and point): the machine is shared. Prints Markdown rows for docs/deploy.md.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.ingest.table import Measurement
from quadsel.libraries import detect

VERSION = "import mpi4py; mpi4py.rc.initialize = False; from mpi4py import MPI; print(MPI.Get_library_version())"

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRST = {"openmpi": {"bcast": "6", "reduce": "5", "allreduce": "3"},
         "mpich": {"bcast": "binomial", "reduce": "binomial", "allreduce": "recursive_doubling"}}


def tree(collective, msgs, labels, path):
    """A tree choosing labels[i] at message size msgs[i] on 2 ranks (written to `path`)."""
    rows = [Measurement(collective, alg, 0, 2, m, 1.0 if alg == labels[i] else 10.0)
            for i, m in enumerate(msgs) for alg in sorted(set(labels))]
    build_size_tree(build_decision_map(rows, collective)).save(path)


def verify(python, path, args, extra):
    env = dict(os.environ, PYTHONPATH=REPO, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [python, "-m", "quadsel", "verify", path, "--np", "2", "--rounds", str(args.rounds), "--max-reps", "30",
           "--max-time", "0.1", "--json"] + extra
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"verify failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("collective")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--msg-sizes", default="8,64,512,4096,32768,262144,1048576")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    msgs = [int(m) for m in args.msg_sizes.split(",")]
    with tempfile.TemporaryDirectory() as work:
        probe = os.path.join(work, "probe.qt.json")
        library = detect(subprocess.run([args.python, "-c", VERSION], capture_output=True, text=True).stdout)
        tree(args.collective, msgs, [FIRST[library][args.collective]] * len(msgs), probe)
        doc = verify(args.python, probe, args, ["--rounds", "2"])
        same = {p["msg_size"]: p["default_ran"]["arms"][0] for p in doc["points"]
                if p.get("default_ran") and p["default_ran"]["match"] == "fingerprint"
                and len(p["default_ran"]["arms"]) == 1 and "/" not in p["default_ran"]["arms"][0]}
        if not same:
            sys.exit("the follow check named the default's algorithm nowhere: no A/A tree")
        aa = os.path.join(work, "aa.qt.json")
        kept = sorted(same)
        tree(args.collective, kept, [same[m] for m in kept], aa)
        print(f"{library} {args.collective}, 2 ranks; A/A tree: " + ", ".join(f"{m} B: {same[m]}" for m in kept))
        print("| run | points | geometric mean | interval | points faster / slower / indistinguishable |")
        print("|---:|---:|---:|---|---|")
        for run in range(1, args.runs + 1):
            got = verify(args.python, aa, args, ["--no-check-rules", "--min-gain", "1"])
            o = got["statistics"]["overall"]
            v = got["summary"][args.collective]["verdicts"]
            print(f"| {run} | {o['changed']} | {o['geomean_speedup']:.3f} | [{o['geomean_low']:.3f}, "
                  f"{o['geomean_high']:.3f}] | {v['faster']} / {v['slower']} / {v['indistinguishable']} |")


if __name__ == "__main__":
    main()
