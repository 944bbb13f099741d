"""Every collective, really run: measure -> build -> codegen (the library's rules format) -> verify, per library.

For each of Open MPI (the Python running this) and MPICH (QUADSEL_MPICH_PYTHON) and each collective quadsel
covers: `quadsel measure --np 2` on a small grid (the algorithms below, message sizes 8 B, 4 KiB, 1 MiB),
`build`, `codegen` to that library's rules file (Open MPI classic rules, MPICH selection JSON), and
`quadsel verify RULES --np 2 --measurements CSV --check-rules --check-methods` (MPICH: the follow check also at
4 ranks, `--check-comm-sizes 2,4`, on a tree built with `--extrapolate`). Prints one Markdown row per run
(ranks, grid, wall time, leaves, verify's speed-up, the follow counts of the file and of one file per
measured method) for docs/benchmarks.md.

usage: python benchmarks/collectives.py [--library openmpi|mpich] [--collectives a,b] [--workdir DIR]
Short on purpose (2 ranks, 3 sizes, 0.1 s per method and point): the machine is shared.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MSG_SIZES = "8,4K,1M"
# The algorithms measured (chosen with benchmarks/fingerprints.py): Open MPI, wherever a collective has more
# than two, avoid what the fixed decision runs at 2 ranks and these sizes (gather's linear_sync: at 1 MiB only),
# so whatever the timings pick, the rules file's choice is one the follow check can tell from the default;
# MPICH, `nb` (told apart everywhere) and algorithms told apart from MPICH's own choice at 4 ranks.
# Collectives with two algorithms, one of them the default's (Open MPI alltoallv, exscan, scan; MPICH gather,
# scatter, exscan, scan, alltoallv), cannot avoid it: there --check-methods shows the other one is followed.
ALGORITHMS = {
    "openmpi": {
        "allgather": "1,2,4", "allgatherv": "1,2,6", "allreduce": "1,2", "alltoall": "1,3,4", "alltoallv": "1,2",
        "barrier": "1,2,6", "bcast": "2,6,7", "exscan": "1,2", "gather": "1,3", "reduce": "2,5,7",
        "reduce_scatter": "1,2,4", "reduce_scatter_block": "2,4", "scan": "1,2", "scatter": "2,3",
    },
    "mpich": {
        "allgather": "brucks,ring,nb", "allgatherv": "brucks,ring,nb", "allreduce": "tree,ring,nb",
        "alltoall": "brucks,nb", "alltoallv": "scattered,nb", "barrier": "recexch,nb",
        "bcast": "scatter_ring_allgather,tree,nb", "exscan": "recursive_doubling,nb", "gather": "binomial,nb",
        "reduce": "reduce_scatter_gather,nb", "reduce_scatter": "recursive_doubling,recursive_halving,nb",
        "reduce_scatter_block": "recursive_doubling,recursive_halving,nb", "scan": "recursive_doubling,nb",
        "scatter": "binomial,nb",
    },
}
# MPICH's data movers send alike at 2 ranks: its follow check also runs at 4 (the tree's choice extrapolated)
CHECK_COMM_SIZES = {"openmpi": "2", "mpich": "2,4"}
TARGET = {"openmpi": ("ompi-rules", "rules"), "mpich": ("mpich-json", "json")}


def _run(cmd, env):
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[2:5])}... exit {done.returncode}: "
                           + " | ".join(done.stderr.strip().splitlines()[-3:]))
    return done


def one(python, library, collective, workdir, env):
    base = os.path.join(workdir, f"{library}-{collective}")
    quadsel = [python, "-m", "quadsel"]
    msgs = "0" if collective == "barrier" else MSG_SIZES
    started = time.time()
    _run(quadsel + ["measure", "--np", "2", "-c", collective, "--algorithms", ALGORITHMS[library][collective],
                    "--segments", "0", "--msg-sizes", msgs, "--max-time", "0.1", "--max-reps", "30", "--rounds", "1",
                    "--quiet", "--no-resume", "-o", base + ".csv"], env)
    measured = time.time() - started
    extrapolate = ["--extrapolate"] if CHECK_COMM_SIZES[library] != "2" else []
    built = _run(quadsel + ["build", base + ".csv", "-o", base + ".qt.json", "--json"] + extrapolate, env)
    stats = json.loads(built.stdout)
    target, ext = TARGET[library]
    extra = ["--mpich-base", str(Path(python).parents[1] / "lib" / "libmpi.so")] if library == "mpich" else []
    _run(quadsel + ["codegen", base + ".qt.json", "-t", target, "-o", f"{base}.{ext}"] + extra, env)
    verified = _run(quadsel + ["verify", f"{base}.{ext}", "--np", "2", "--comm-sizes", "2", "--msg-sizes", msgs,
                               "--measurements", base + ".csv", "--check-rules", "--rounds", "2",
                               "--check-comm-sizes", CHECK_COMM_SIZES[library], "--check-methods",
                               "--max-time", "0.1", "--max-reps", "30", "--json"], env)
    doc = json.loads(verified.stdout)
    summary = doc["summary"][collective]
    follow = (doc.get("rules_followed") or {}).get("counts", {})
    methods = ((doc.get("rules_followed") or {}).get("methods") or {}).get(collective, {})
    replaced = sum(1 for line in open(base + ".csv") if line.startswith("# replaced "))
    return {"library": library, "collective": collective, "ranks": 2, "algorithms": ALGORITHMS[library][collective],
            "msg_sizes": msgs, "measure_s": round(measured, 1), "total_s": round(time.time() - started, 1),
            "leaves": stats.get("leaves"), "replaced": replaced,
            "timed": sorted({p["collective"] for p in doc["points"]}),
            "speedup": round(summary["geomean_speedup"], 2), "follow": follow, "methods": methods,
            "check_comm_sizes": CHECK_COMM_SIZES[library],
            "choices": sorted({p["quadsel"] for p in doc["points"]})}


def row(r):
    f = r["follow"]
    follow = ", ".join(f"{k} {v}" for k, v in sorted(f.items())) or "—"
    methods = "; ".join(f"{label}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items()))
                        for label, c in r["methods"].items()) or "—"
    return (f"| {r['library']} | {r['collective']} | {r['ranks']} | {r['algorithms']} | {r['msg_sizes']} | "
            f"{r['measure_s']} | {r['total_s']} | {r['leaves']} | {r['replaced']} | {', '.join(r['choices'])} | "
            f"{r['speedup']:.2f} | {r['check_comm_sizes']} | {follow} | {methods} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--library", choices=["openmpi", "mpich"], action="append")
    parser.add_argument("--collectives", default=None)
    parser.add_argument("--workdir", default="/tmp/quadsel-collectives")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from quadsel.libraries import COLLECTIVES
    collectives = args.collectives.split(",") if args.collectives else list(COLLECTIVES)
    os.makedirs(args.workdir, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(REPO), OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    pythons = {"openmpi": sys.executable, "mpich": os.environ.get("QUADSEL_MPICH_PYTHON")}
    print("| library | collective | ranks | algorithms | msg sizes (B) | measure s | total s | leaves | replaced | "
          "tree's choices | verify speed-up (geomean) | checked at comm | follow check (the file) | "
          "one file per measured method |")
    print("|---|---|---:|---|---|---:|---:|---:|---:|---|---:|---|---|---|")
    results = []
    for library in args.library or ["openmpi", "mpich"]:
        if not pythons[library]:
            print(f"<!-- {library}: set QUADSEL_MPICH_PYTHON -->")
            continue
        for collective in collectives:
            try:
                r = one(pythons[library], library, collective, args.workdir, env)
                results.append(r)
                print(row(r), flush=True)
            except RuntimeError as exc:
                print(f"| {library} | {collective} | 2 | FAILED: {exc} |", flush=True)
    with open(os.path.join(args.workdir, "results.json"), "w") as handle:
        json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
