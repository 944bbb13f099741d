"""Issue 30 end to end on the namespace cluster, per library, with its figures (docs/cluster.md, "Tuning a cluster
end to end"): measure bcast across 2 hosts in the layouts 2x1, 1x2, 2x2, build the layout forest, report it per
layout, verify it on the cluster (--mpiexec-args) with the follow proof per layout. The same steps as
tests/cluster/test_cluster_e2e.py, with more rounds, and the outputs printed.

usage (root, from the repository root):
    PYTHONPATH=$PWD QUADSEL_MPICH_PYTHON=... python benchmarks/netns_verify.py [--flavor openmpi,mpich]
        [--rounds 5] [--keep DIR]

4 ranks on this machine's 2 cores: oversubscribed (the verify table's machine line says so too). The machine is
shared, so the times move between runs: read them as orders of magnitude, the follow proof as exact.
"""

import argparse
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from quadsel.testbed import NetnsCluster, host_options, unavailable  # noqa: E402

PYTHONS = {"openmpi": sys.executable, "mpich": os.environ.get("QUADSEL_MPICH_PYTHON")}
ALGORITHMS = {"openmpi": "2,3", "mpich": "nb,scatter_ring_allgather"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flavor", default="openmpi,mpich")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--keep", default=None, help="folder for the CSVs, forests and verify results")
    args = parser.parse_args()
    if unavailable():
        sys.exit(f"netns_verify: {unavailable()}")
    folder = args.keep or tempfile.mkdtemp(prefix="quadsel-netns-verify-")
    env0 = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with NetnsCluster(2) as cluster:
        for flavor in args.flavor.split(","):
            python = PYTHONS.get(flavor)
            if not python:
                print(f"## {flavor}: no Python given, left out\n")
                continue
            mpiexec = os.path.join(os.path.dirname(python), "mpiexec")
            options, env = host_options(flavor, mpiexec, cluster, 2)
            hosts = ["--np", "4", "--mpiexec", mpiexec, "--mpiexec-args", options]
            out = os.path.join(folder, flavor)
            os.makedirs(out, exist_ok=True)
            csv, forest, result = (os.path.join(out, f) for f in ("bcast.csv", "bcast.qt.json", "verify.json"))
            steps = [
                ["measure", "--algorithms", ALGORITHMS[flavor], "-c", "bcast", "--segments", "0", "--msg-sizes",
                 "1K,16K", "--layouts", "2x1,1x2,2x2", "--sync", "barrier", "--quiet", *hosts, "-o", csv],
                ["build", csv, "-o", forest],
                ["report", csv, "--tree", forest],
                ["verify", forest, *hosts, "--rounds", str(args.rounds)],
            ]
            print(f"## {flavor} (2 hosts x 2 ranks = 4 ranks on {os.cpu_count()} cores: oversubscribed)\n")
            for step in steps:
                shown = [a if a != options else "'<launcher options>'" for a in step]
                print("$ quadsel " + " ".join(shown).replace(folder, "DIR"))
                done = cluster.run(1, [python, "-m", "quadsel", *step], env=dict(env0, **env), timeout=900)
                text = (done.stdout + ("" if step[0] in ("measure", "verify") else done.stderr)).strip()
                print(text.replace(folder, "DIR") + f"\n(exit {done.returncode})\n")
    print(f"files in {folder}")


if __name__ == "__main__":
    main()
