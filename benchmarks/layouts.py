"""The layout axis (issue 30): build time of a 3-axis sweep, and held-out-layout penalties of the layout forest
against the layout-blind tree and other rules for an unseen ppn.

usage: python benchmarks/layouts.py [--seed 1] [--dir DIR] [--quick]

Generates a seeded synthetic bcast sweep over 16 node counts x 6 ranks per node (ppn) x 40 message sizes x 12
methods (46,080 rows), from a model a cluster plausibly follows: messages within a node cost shared memory's
alpha/beta (0.4 us, 8 GB/s), between nodes the network's (3 us, 3 GB/s per NIC), and ranks of one node that
send across at once share its NIC (their bandwidth divided among them). Algorithm families: binomial, 4-nomial,
linear, scatter + recursive-doubling / ring allgather, chain pipelines (8 KiB, 64 KiB segments), a segmented
binary tree and a segmented binomial, and three hierarchical (smp) ones: leaders' binomial, scatter-allgather or
pipeline between the nodes, a shared-memory broadcast within. 2 % log-normal noise, stddev and reps recorded.
At one communicator size the switch points move with ppn (8 x 8 against 64 x 1).

Prints
 (i)  the wall time of `quadsel build` of the CSV (the default build, one tree per ppn) against pandas' read +
      pivot + argmin of the same CSV, each in its own process, in one run (pandas is installed into a cache
      folder for this run only when it is absent: a benchmark-only dependency);
 (ii) held-out penalties (mean % over the held-out points, against their measured times): whole layouts held
      out -- each ppn in turn (all its node counts), and every 4th node count of every ppn in turn -- for
      (a) the layout forest (first member with ppn bound >= the query's, MPICH's comm_avg_ppn<=P),
      (b) the layout-blind tree built on the pooled data (rows of one comm size pooled across layouts by their
          median, what quadsel did when the layout was not recorded), queried by comm size alone,
      (c) the forest with other rules for an unseen ppn: the nearest lower member, the nearest in log2(ppn).
Every tree is the default build with --extrapolate (the synthetic data have no library default to hand back to).
 (iii) the time of every Open MPI multi-node target and the C function on that forest, the methods relabelled
      with Open MPI bcast ids (`quadsel codegen FOREST -t T`, each its own process, start-up included).
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

NODES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
PPN = (1, 2, 4, 8, 16, 32)
MESSAGES = tuple(sorted({int(round(2 ** (k / 1.75))) for k in range(41)}))      # 1 B to 8 MiB, 40 sizes
SHM = (0.4, 1 / 8000.0)          # alpha µs, beta µs per byte (8 GB/s)
NET = (3.0, 1 / 3000.0)          # per NIC: 3 GB/s, shared by the node's ranks sending across at once
METHODS = (("binomial", 0), ("knomial4", 0), ("linear", 0), ("scatter_rd_allgather", 0),
           ("scatter_ring_allgather", 0), ("pipeline", 8192), ("pipeline", 65536), ("binary_tree", 32768),
           ("binomial_seg", 32768), ("smp_binomial", 0), ("smp_scatter_allgather", 0), ("smp_pipeline", 65536))
BASELINE = """
import sys, pandas as pd
frame = pd.read_csv(sys.argv[1])
table = frame.pivot_table(index=["nodes", "ppn", "msg_size"], columns=["algorithm", "segsize"], values="time_us")
best = table.to_numpy().argmin(axis=1)
print(len(best))
"""


def lg(x, base=2):
    return 0 if x <= 1 else math.ceil(math.log(x, base) - 1e-9)


def link(kind, size, share=1):
    alpha, beta = SHM if kind == "shm" else NET
    return alpha + size * beta * share


def model(name, seg, nodes, ppn, m):
    """The noise-free time (µs) of one bcast of m bytes on nodes x ppn ranks (block placement)."""
    p = nodes * ppn
    if p == 1:
        return 0.2
    inter = nodes > 1
    worst = (lambda s: max(link("net", s), link("shm", s))) if inter else (lambda s: link("shm", s))
    scatter = lg(nodes) * NET[0] + m * (1 - 1 / nodes) * NET[1] + lg(ppn) * SHM[0] + m / nodes * (1 - 1 / ppn) * SHM[1]
    shm_bcast = SHM[0] * 2 + m * SHM[1] * (1 + ppn / 8) if ppn > 1 else 0.0
    if name == "binomial":
        return lg(nodes) * link("net", m) + lg(ppn) * link("shm", m)
    if name == "knomial4":      # small distances first: across nodes, all of a node's ranks send at once
        return 3 * (lg(ppn, 4) * link("shm", m) + lg(nodes, 4) * link("net", m, ppn))
    if name == "linear":
        return (ppn - 1) * link("shm", m) + (p - ppn) * link("net", m)
    if name == "scatter_rd_allgather":
        inner = lg(ppn) * SHM[0] + m * (ppn - 1) / p * SHM[1]
        outer = lg(nodes) * NET[0] + m * (p - ppn) / p * NET[1] * ppn if inter else 0.0
        return scatter + inner + outer + (0.3 * lg(p) if p & (p - 1) else 0.0)
    if name == "scatter_ring_allgather":
        return scatter + (p - 1) * worst(m / p)
    if name in ("pipeline", "binary_tree", "binomial_seg"):
        s = min(seg, max(m, 1))
        segments = max(1, math.ceil(m / s))
        if name == "pipeline":
            hops = (nodes - 1) * link("net", s) + (p - nodes) * link("shm", s)
            return hops + (segments - 1) * worst(s)
        depth = lg(p) if name == "binomial_seg" else lg(p + 1) - 1
        fan = 2 if name == "binary_tree" else max(1, lg(p) // 2)
        return depth * worst(s) + (segments - 1) * fan * worst(s)
    if name.startswith("smp_"):
        base = 1.5                                       # the sub-communicators' own work
        if name == "smp_binomial":
            outer = lg(nodes) * link("net", m)
        elif name == "smp_scatter_allgather":
            outer = (lg(nodes) * NET[0] + 2 * m * (1 - 1 / nodes) * NET[1] + (nodes - 1) * 0.2) if inter else 0.0
        else:
            s = min(seg, max(m, 1))
            outer = ((nodes - 1) * link("net", s) + (math.ceil(m / s) - 1) * link("net", s)) if inter else 0.0
        return base + outer + shm_bcast
    raise ValueError(name)


def sweep_csv(path, seed):
    rng = np.random.default_rng(seed)
    lines = ["collective,algorithm,segsize,nodes,ppn,comm_size,msg_size,time_us,stddev_us,reps"]
    for nodes in NODES:
        for ppn in PPN:
            for m in MESSAGES:
                for name, seg in METHODS:
                    t = (model(name, seg, nodes, ppn, m) + 0.3) * math.exp(rng.normal(0.0, 0.02))
                    lines.append(f"bcast,{name},{seg},{nodes},{ppn},{nodes * ppn},{m},{t:.4f},{t * 0.02 * math.sqrt(20):.4f},20")
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")
    with open(path[:-4] + ".meta.json", "w") as out:       # a model's names: no MPI library's ids
        out.write('{"library": "synthetic"}\n')
    return len(lines) - 1


def pandas_path(folder):
    """A PYTHONPATH for the baseline: none when pandas imports, else a cache folder it is installed into."""
    if subprocess.run([sys.executable, "-c", "import pandas"], capture_output=True).returncode == 0:
        return None
    target = os.path.join(tempfile.gettempdir(), "quadsel-bench-pandas")
    probe = subprocess.run([sys.executable, "-c", "import pandas"], capture_output=True,
                           env=dict(os.environ, PYTHONPATH=target))
    if probe.returncode:
        print(f"pandas is not installed: installing it into {target} for the baseline only", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target", target, "pandas"], check=True)
    return target


def timed(command, env=None):
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def build_time(csv, folder):
    extra = pandas_path(folder)
    env = dict(os.environ, PYTHONPATH=extra) if extra else None
    base = timed([sys.executable, "-c", BASELINE, csv], env)
    build = timed([sys.executable, "-m", "quadsel", "build", csv, "-o", os.path.join(folder, "sweep.qt.json")],
                  dict(os.environ, PYTHONPATH=ROOT))
    return base, build


# -- codegen of the forest ---------------------------------------------------------------------------------------
OMPI_IDS = {("binomial", 0): ("6", 0), ("knomial4", 0): ("7", 0), ("linear", 0): ("1", 0),
            ("scatter_rd_allgather", 0): ("8", 0), ("scatter_ring_allgather", 0): ("9", 0),
            ("pipeline", 8192): ("3", 8192), ("pipeline", 65536): ("3", 65536), ("binary_tree", 32768): ("5", 32768),
            ("binomial_seg", 32768): ("6", 32768), ("smp_binomial", 0): ("2", 0),
            ("smp_scatter_allgather", 0): ("4", 0), ("smp_pipeline", 65536): ("2", 65536)}
TARGETS = ("c", "ompi-rules", "ompi-json", "ompi-han")


def codegen_times(csv, folder):
    """(build seconds, leaves line, {target: seconds}) of the sweep relabelled with Open MPI bcast ids (a model's
    names are no library's: the library targets need its ids)."""
    ompi = os.path.join(folder, "sweep-ompi.csv")
    with open(csv) as src, open(ompi, "w") as out:
        out.write(next(src))
        for line in src:
            cells = line.split(",")
            cells[1], seg = OMPI_IDS[(cells[1], int(cells[2]))]
            cells[2] = str(seg)
            out.write(",".join(cells))
    with open(ompi[:-4] + ".meta.json", "w") as out:
        out.write('{"library": "openmpi"}\n')
    env = dict(os.environ, PYTHONPATH=ROOT)
    tree = os.path.join(folder, "sweep-ompi.qt.json")
    build = timed([sys.executable, "-m", "quadsel", "build", ompi, "--extrapolate", "-o", tree], env)
    from quadsel.decision.decision_function import DecisionFunction
    out = {}
    for target in TARGETS:
        out[target] = timed([sys.executable, "-m", "quadsel", "codegen", tree, "-t", target, "-o",
                             os.path.join(folder, f"sweep-ompi.{target}.out")], env)
    return build, DecisionFunction.load(tree).leaf_line(), out


# -- held-out layouts ----------------------------------------------------------------------------------------------
def settings():
    from quadsel.decision.options import DEFAULT_BUILD
    return dict(DEFAULT_BUILD, outside="extrapolate")


def forest_of(rows):
    from quadsel.decision.builder import build_size_tree
    from quadsel.decision.layouts import build_from_groups, layout_groups
    return build_from_groups(layout_groups(rows), "bcast", lambda d: build_size_tree(d, **settings()))[0]


def blind_of(rows):
    """The layout-blind tree: every row without its layout, rows of one point pooled (ingest's median)."""
    from quadsel.decision.builder import build_size_tree
    from quadsel.decision.decision_map import build_decision_map
    from quadsel.ingest import Table, aggregate
    pooled = aggregate([replace(m, nodes=None, ppn=None) for m in rows])
    return build_size_tree(build_decision_map(Table(pooled, aggregated=True)), **settings())


def penalties(test, choose):
    """Mean penalty % over the held-out points of `choose(ppn, comm, msg arrays) -> Methods`."""
    points = {}
    for m in test:
        points.setdefault((m.ppn, m.comm_size, m.msg_size), {})[(m.algorithm, m.segsize)] = m.time
    keys = list(points)
    chosen = choose(np.array([k[0] for k in keys]), np.array([k[1] for k in keys]), np.array([k[2] for k in keys]))
    out = [(times[(c.algorithm, c.segsize)] - min(times.values())) / min(times.values()) * 100
           for (key, times), c in zip(points.items(), chosen)]
    return float(np.mean(out)), float(np.max(out)), len(out)


def held_out(rows, quick=False, echo=print):
    """{split: {selector: (mean %, max %, points)}} over the folds of each split (points pooled over folds); each
    fold's means are echoed as it ends."""
    folds = {"each ppn held out": [{p} for p in PPN], "every 4th node count held out": list(range(4))}
    if quick:
        folds = {"each ppn held out": [{4}, {32}], "every 4th node count held out": [1]}
    out = {}
    for split, which in folds.items():
        scores = {}
        for fold in which:
            if isinstance(fold, set):
                test = [m for m in rows if m.ppn in fold]
            else:
                test = [m for m in rows if NODES.index(m.nodes) % 4 == fold]
            held = set(map(id, test))
            train = [m for m in rows if id(m) not in held]
            forest, blind = forest_of(train), blind_of(train)
            selectors = {"(a) forest, ceiling ppn (deployed)": lambda p, c, s: forest.methods_at(p, c, s),
                         "(b) layout-blind tree, pooled": lambda p, c, s: [blind.methods[k] for k in blind.choices(c, s)],
                         "(c) forest, nearest lower ppn": lambda p, c, s: forest.methods_at(p, c, s, rule="lower"),
                         "(c) forest, nearest ppn (log2)": lambda p, c, s: forest.methods_at(p, c, s, rule="nearest")}
            means = []
            for name, choose in selectors.items():
                mean, worst, n = penalties(test, choose)
                total, top, count = scores.get(name, (0.0, 0.0, 0))
                scores[name] = (total + mean * n, max(top, worst), count + n)
                means.append(f"{mean:.2f}")
            shown = f"ppn {sorted(fold)[0]}" if isinstance(fold, set) else \
                f"node counts {', '.join(str(v) for i, v in enumerate(NODES) if i % 4 == fold)}"
            echo(f"    fold: {shown} held out ({n} points): (a) {means[0]}, (b) {means[1]}, (c) lower {means[2]}, "
                 f"nearest {means[3]}")
        out[split] = {name: (total / count, top, count) for name, (total, top, count) in scores.items()}
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", default=None, help="where the CSV and tree go (default: a temporary folder)")
    parser.add_argument("--quick", action="store_true", help="two ppn folds and one node fold only")
    args = parser.parse_args(argv)
    folder = args.dir or tempfile.mkdtemp(prefix="quadsel-layouts.")
    csv = os.path.join(folder, "sweep.csv")
    n = sweep_csv(csv, args.seed)
    print(f"sweep: {len(NODES)} node counts x {len(PPN)} ppn x {len(MESSAGES)} message sizes x {len(METHODS)} methods "
          f"= {n} rows, {os.path.getsize(csv) / 1e6:.1f} MB (seed {args.seed}; {csv})")
    base, build = build_time(csv, folder)
    print(f"(i) build time: quadsel build {build:.2f} s, pandas read + pivot + argmin {base:.2f} s: "
          f"{build / base:.1f}x (target <= 15x)")
    from quadsel.decision.decision_function import DecisionFunction
    forest = DecisionFunction.load(os.path.join(folder, "sweep.qt.json"))
    print(f"    the forest: {len(forest.layers)} trees, {forest.leaf_line()}")
    from quadsel.ingest import read_measurements
    rows = list(read_measurements(csv))
    print("(ii) held-out penalty, mean % (max %) over the held-out points (each fold's means first):")
    for split, scores in held_out(rows, args.quick, echo=lambda text: print(text, flush=True)).items():
        print(f"  {split} ({next(iter(scores.values()))[2]} points):")
        for name, (mean, worst, _) in scores.items():
            print(f"    {name:38s} {mean:7.2f}  ({worst:.1f})")
    build, leaves, times = codegen_times(csv, folder)
    print(f"(iii) codegen of the forest relabelled with Open MPI ids (built in {build:.2f} s, {leaves}): "
          + ", ".join(f"-t {t} {v:.2f} s" for t, v in times.items())
          + f"; `quadsel --version` alone {timed([sys.executable, '-m', 'quadsel', '--version']):.2f} s")


if __name__ == "__main__":
    main()
