"""Up, down and launch times of the Slurm test cluster (docs/cluster.md, "A Slurm cluster on one machine").

usage (root, from the repository root):
    PYTHONPATH=$PWD QUADSEL_MPICH_PYTHON=… python benchmarks/slurm_cluster.py [--cycles 5] [--launches 5]

--cycles clusters of 2 hosts × 2 CPUs are brought up (namespaces, munged, slurmctld, 2 slurmd, until `sinfo` shows
both idle) and down (daemons by PID, munged last, then the namespaces); the first cycle's cluster also times
--launches runs of each launch below, one after another, 1 s apart (a job submitted while the previous one is still
completing waits for its nodes: seconds, not what is measured here). Each row: median [min, max] in seconds.
An MPI launch is a 4-rank mpi4py job that gathers its processor names (the row fails unless they are
node1, node1, node2, node2); MPICH's rows need QUADSEL_MPICH_PYTHON.
"""

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from quadsel.testbed.slurm import SlurmCluster, unavailable  # noqa: E402

NAMES = ("from mpi4py import MPI; c = MPI.COMM_WORLD; n = c.gather(MPI.Get_processor_name()); "
         "c.rank or print(c.size, *n)")
ALLOC = ["salloc", "-N2", "--ntasks-per-node=2"]


def launches(mpich_python):
    ompi = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    rows = [("salloc -N2 --ntasks-per-node=2 true", ALLOC + ["true"], None),
            ("srun -N2 -n4 true", ["srun", "-N2", "-n4", "true"], None),
            ("salloc … mpiexec -n 4 (Open MPI)", ALLOC + [ompi, "-n", "4", sys.executable, "-c", NAMES], "4"),
            ("srun -N2 -n4 --mpi=pmix (Open MPI)",
             ["srun", "-N2", "-n4", "--mpi=pmix", sys.executable, "-c", NAMES], "4")]
    if mpich_python:
        mpiexec = os.path.join(os.path.dirname(mpich_python), "mpiexec")
        rows += [("salloc … mpiexec -n 4 (MPICH hydra)",
                  ALLOC + [mpiexec, "-n", "4", mpich_python, "-c", NAMES], "4"),
                 ("srun -N2 -n4 --mpi=pmi2 (MPICH)",
                  ["srun", "-N2", "-n4", "--mpi=pmi2", mpich_python, "-c", NAMES], "4")]
    return rows


def sbatch_row(cluster):
    """Submission to the end of a batch job of `srun hostname`, polled every 0.05 s."""
    start = time.monotonic()
    jobid = cluster.sbatch("#!/bin/sh\nsrun hostname\n", "-N2", "--ntasks-per-node=2")
    info = cluster.wait(jobid, timeout=120, poll=0.05)
    if info["JobState"] != "COMPLETED":
        raise SystemExit(f"sbatch job {jobid}: {info['JobState']}")
    return time.monotonic() - start


def summary(values):
    return f"{statistics.median(values):6.2f} [{min(values):.2f}, {max(values):.2f}]"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=5)
    parser.add_argument("--launches", type=int, default=5)
    args = parser.parse_args()
    reason = unavailable()
    if reason:
        raise SystemExit(reason)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    ups, downs, times = [], [], {}
    for cycle in range(args.cycles):
        cluster = SlurmCluster(2)
        with cluster:
            if cycle == 0:
                for name, argv, size in launches(os.environ.get("QUADSEL_MPICH_PYTHON")):
                    for _ in range(args.launches):
                        start = time.monotonic()
                        result = cluster.run(argv, env=env, timeout=300)
                        times.setdefault(name, []).append(time.monotonic() - start)
                        if result.returncode != 0 or (size and result.stdout.split() !=
                                                      [size, "node1", "node1", "node2", "node2"]):
                            raise SystemExit(f"{name} failed:\n{result.stdout}{result.stderr[-2000:]}")
                        time.sleep(1)
                for _ in range(args.launches):
                    times.setdefault("sbatch + srun hostname, submission to end", []).append(sbatch_row(cluster))
                    time.sleep(1)
        ups.append(cluster.timings["up"])
        downs.append(cluster.timings["down"])
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print(f"{'what':52s} seconds: median [min, max]")
    print(f"{f'up ({args.cycles} cycles)':52s} {summary(ups)}")
    print(f"{f'down ({args.cycles} cycles)':52s} {summary(downs)}")
    for name, values in times.items():
        print(f"{f'{name} ({len(values)} runs)':52s} {summary(values)}")


if __name__ == "__main__":
    main()
