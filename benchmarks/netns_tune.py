"""`quadsel tune` across 2 hosts of the namespace cluster, with its figures (docs/tune.md, "Clusters"): every layout
(2x1, 1x2, 2x2) measured, one forest per collective, verified per layout with the follow proof, pruned, verified
again, deployed. Prints the tune's last line, its wall time, the second verify's line per layout and the files of
the deployment.

usage (root, from the repository root):
    PYTHONPATH=$PWD python benchmarks/netns_tune.py [--collectives allreduce,bcast] [--keep DIR]

Open MPI (the wheel). 4 ranks on this machine's 2 cores: oversubscribed, so the speed-ups are the scheduler's as much
as the algorithms'; the follow proof per layout is what the run establishes.
"""

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from quadsel.testbed import NetnsCluster, host_options, unavailable  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collectives", default="allreduce,bcast")
    parser.add_argument("--keep", default=None, help="the tune folder (default: a new temporary one)")
    args = parser.parse_args()
    if unavailable():
        sys.exit(f"netns_tune: {unavailable()}")
    out = args.keep or tempfile.mkdtemp(prefix="quadsel-netns-tune-")
    python = sys.executable
    mpiexec = os.path.join(os.path.dirname(python), "mpiexec")
    env0 = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with NetnsCluster(2) as cluster:
        options, env = host_options("openmpi", mpiexec, cluster, 2)
        argv = [python, "-m", "quadsel", "tune", "--np", "4", "--mpiexec", mpiexec, "--mpiexec-args", options,
                "-c", args.collectives, "--msg-sizes", "1K,16K", "--sync", "barrier", "--no-figures", "-o", out]
        start = time.monotonic()
        done = cluster.run(1, argv, env=dict(env0, **env), timeout=3600)
        elapsed = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"netns_tune: tune failed (exit {done.returncode}): {done.stderr[-2000:]}")
    print(f"wall time {elapsed:.0f} s (4 ranks on {os.cpu_count()} cores: oversubscribed)")
    print(done.stdout.strip().splitlines()[-1])
    doc = json.load(open(os.path.join(out, "verify", "pruned.json")))
    print("\n| collective | layout | changed | speed-up on them (oversubscribed) | follow check |")
    print("|---|---|---:|---:|---|")
    for x in doc["statistics"].get("layouts") or []:
        gain = "—" if x["geomean_speedup"] is None else f"{x['geomean_speedup']:.3f}x"
        followed = ", ".join(f"{v} {k}" for k, v in sorted((x["followed"] or {}).items()))
        print(f"| {x['collective']} | {x['layout']} | {x['changed']} of {x['points']} | {gain} | {followed} |")
    han = [p for p in doc["points"] if p.get("han")]
    print(f"\npoints whose default is coll/han's (2+ nodes): {len(han)} of {len(doc['points'])}")
    print("deployed files:", ", ".join(sorted(n for n in os.listdir(out) if n.endswith((".rules", ".env")))))


if __name__ == "__main__":
    main()
