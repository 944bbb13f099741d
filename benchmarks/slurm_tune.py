"""`quadsel tune` inside a real Slurm allocation (docs/cluster.md, "Tuning under Slurm"): the figures of the doc.

usage (root, from the repository root):
    PYTHONPATH=$PWD python benchmarks/slurm_tune.py [--python PY] [-- TUNE OPTIONS]

brings the Slurm test cluster up (2 nodes x 2 CPUs, network namespaces on this machine: its 4 ranks share this VM's
cores, so every time is oversubscribed), runs `salloc -N2 --ntasks-per-node=2 PY -m quadsel tune -o DIR [TUNE
OPTIONS]` with no --np and no launcher option (PY: this Python, Open MPI's wheel; or --python the MPICH venv's),
and prints the wall time, the load average before and after, each step's seconds from tune's journal, the
deployment decision per collective and the report's first lines. With no TUNE OPTIONS it is the whole loop for
every collective, tune's defaults.
"""

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from quadsel.testbed.slurm import SlurmCluster, unavailable  # noqa: E402

ROOT_OK = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", default=sys.executable, help="the Python whose mpi4py the ranks use")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--keep", metavar="DIR", help="copy tune's folder here before the cluster goes")
    parser.add_argument("tune", nargs=argparse.REMAINDER, help="-- then tune's options")
    args = parser.parse_args(argv)
    options = args.tune[1:] if args.tune[:1] == ["--"] else args.tune
    reason = unavailable()
    if reason:
        sys.exit(f"no Slurm cluster here: {reason}")
    env = dict(os.environ, **ROOT_OK, PYTHONPATH=ROOT)
    with SlurmCluster(2) as cluster:
        out = cluster.base / "deploy"
        argv = ["salloc", "-N2", "--ntasks-per-node=2", args.python, "-m", "quadsel", "tune", "-o", str(out), *options]
        load = os.getloadavg()[0]
        start = time.monotonic()
        done = cluster.run(argv, env=env, timeout=args.timeout)
        seconds = time.monotonic() - start
        if args.keep and out.exists():
            import shutil
            shutil.copytree(out, args.keep, dirs_exist_ok=True)
        print(f"$ {' '.join(argv[:7])} -o DIR {' '.join(options)}")
        print(f"exit {done.returncode}; {seconds:.1f} s wall; load average {load:.2f} before, "
              f"{os.getloadavg()[0]:.2f} after")
        print("last line:", (done.stdout.strip().splitlines() or ["(none)"])[-1])
        if done.returncode:
            print(done.stderr[-3000:])
            return 1
        journal = json.load(open(out / "tune.json"))
        steps = journal["steps"]
        for name, step in steps.items():
            if isinstance(step, dict) and step.get("seconds") is not None:
                print(f"  {name:28s} {step['seconds']:8.1f} s")
        for label in ("first", "pruned"):     # inside each verify: the timing jobs and the follow check
            path = out / "verify" / f"{label}.json"
            if path.exists():
                doc = json.load(open(path))
                split = (doc.get("statistics") or {}).get("seconds") or {}
                print(f"  verify {label}: {', '.join(doc.get('summary') or {})}: timing {split.get('timing')} s, "
                      f"follow check {split.get('check')} s")
        summary = steps.get("summary", {})
        print("allocation:", summary.get("allocation"))
        for coll, verdict in sorted(summary.get("per_collective", {}).items()):
            print(f"  {coll:22s} {'deploy' if verdict['deploy'] else 'keep default':13s} {verdict['why']}")
        print(open(out / "report.md").read().split("\n## ")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
