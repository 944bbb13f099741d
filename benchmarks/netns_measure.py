"""`quadsel measure` across the namespace cluster's 2 hosts x 2 ranks (root, ip netns): the layouts 2x1, 1x2, 2x2,
the clock offsets and how late the common start was. 4 ranks on this machine's cores: oversubscribed.

usage: PYTHONPATH=$PWD QUADSEL_MPICH_PYTHON=... python benchmarks/netns_measure.py [--libraries openmpi,mpich]
       [--sync start,barrier] [--out DIR]

Each library is self-launched (`quadsel measure --np 4 --mpiexec-args "<its launcher's host options>"`), bcast of
8 B and 64 KiB, the library default and binomial. Prints, per run, the metadata's clock_sync and one line per row.
"""

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))
from netns_helpers import job_env, library_python  # noqa: E402
from quadsel.testbed import NetnsCluster, host_options  # noqa: E402

ALGORITHM = {"openmpi": "6", "mpich": "binomial", "intelmpi": "1"}


def run(cluster, flavor, sync, out):
    python = library_python(flavor)
    mpiexec = os.path.join(os.path.dirname(python), "mpiexec")
    options, env = host_options(flavor, mpiexec, cluster, 2)
    cmd = [python, "-m", "quadsel", "measure", "--np", "4", "--mpiexec", mpiexec, "--mpiexec-args", options,
           "-c", "bcast", "--algorithms", f"default,{ALGORITHM[flavor]}", "--segments", "0", "--msg-sizes", "8,64K",
           "--layouts", "2x1,1x2,2x2", "--sync", sync, "--rounds", "1", "--quiet", "--no-resume", "-o", out]
    started = time.time()
    result = cluster.run(1, cmd, env=job_env(env), timeout=900)
    if result.returncode:
        print(f"{flavor} --sync {sync}: exit {result.returncode}\n{result.stderr[-2000:]}")
        return
    meta = json.load(open(out[:-4] + ".meta.json"))
    print(f"## {flavor}, --sync {sync}: {time.time() - started:.0f} s; 2 hosts x 2 ranks on "
          f"{os.cpu_count()} cores (oversubscribed); load average {os.getloadavg()[0]:.2f}")
    print(json.dumps(meta["clock_sync"]))
    with open(out) as handle:
        print(handle.read().strip())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--libraries", default="openmpi,mpich")
    parser.add_argument("--sync", default="start,barrier")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="quadsel-netns-measure-")
    os.makedirs(out, exist_ok=True)
    with NetnsCluster(2) as cluster:
        for flavor in args.libraries.split(","):
            if library_python(flavor) is None:
                print(f"{flavor}: no Python with mpi4py on it (QUADSEL_MPICH_PYTHON, QUADSEL_IMPI_PYTHON)")
                continue
            for sync in args.sync.split(","):
                run(cluster, flavor, sync, os.path.join(out, f"{flavor}-{sync}.csv"))


if __name__ == "__main__":
    main()
