"""What `sh benchmarks/alpha_tree.sh OUTDIR` measured: the alpha-tree broadcast beside the library's bcast.

    python benchmarks/alpha_tree.py OUTDIR

Reads OUTDIR/barrier.csv and OUTDIR/ring.csv (one grid, measured with a barrier and with the ring
semi-barrier before every call), OUTDIR/multilevel.csv and the default build of each (`NAME.qt.json`).
Prints markdown: (1) barrier vs ring semi-barrier, per communicator size and overall: geometric mean of the
ring/barrier time ratio over every (method, point), its spread, the relative standard deviation of each, and how
often the two agree on the best method; (2) per (comm size, message size), from each file: the best alpha-tree
(its alpha and time), the best of the library's own algorithms, the library default, and best alpha / best
library; (3) the leaves of each default build, alpha-trees among them.
"""

import csv
import math
import os
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from quadsel.decision.decision_function import DecisionFunction  # noqa: E402
from quadsel.libraries import alphatree, openmpi  # noqa: E402


def read(path):
    """{(comm, msg): {label: (mean µs, stddev µs)}} of a measure CSV (segment sizes are all 0 here)."""
    table = defaultdict(dict)
    with open(path, newline="") as handle:
        for row in csv.DictReader(line for line in handle if not line.startswith("#")):
            label = row["algorithm"] if row["segsize"] == "0" else f"{row['algorithm']}/seg{row['segsize']}"
            table[(int(row["comm_size"]), int(row["msg_size"]))][label] = (float(row["time_us"]),
                                                                           float(row["stddev_us"]))
    return table


def name(label):
    if alphatree.is_alpha(label) or label == "default":
        return label
    algorithm, _, seg = label.partition("/")
    return f"{label} ({openmpi.algorithm_name('bcast', algorithm)})"


def size_text(m):
    return f"{m >> 20}M" if m >= 1 << 20 and not m % (1 << 20) else f"{m >> 10}K" if m >= 1024 and not m % 1024 else str(m)


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def barrier_vs_ring(barrier, ring):
    print("## Barrier vs ring semi-barrier (same grid, same methods)\n")
    print("| comm size | pairs | geomean ring/barrier | median | ratio 10th-90th pct | rel. stddev barrier | rel. stddev ring "
          "| same best method |")
    print("|---:|---:|---:|---:|---|---:|---:|---:|")
    by_comm = defaultdict(list)
    for point in sorted(set(barrier) & set(ring)):
        by_comm[point[0]].append(point)
    every = []
    for comm, points in sorted(by_comm.items()) + [("all", [p for ps in by_comm.values() for p in ps])]:
        ratios, cv_b, cv_r, same = [], [], [], 0
        for p in points:
            shared = set(barrier[p]) & set(ring[p]) - {"default"}
            for label in shared:
                (tb, sb), (tr, sr) = barrier[p][label], ring[p][label]
                ratios.append(tr / tb)
                cv_b.append(sb / tb)
                cv_r.append(sr / tr)
            best_b = min(shared, key=lambda k: barrier[p][k][0])
            best_r = min(shared, key=lambda k: ring[p][k][0])
            same += best_b == best_r
        ratios.sort()
        lo, hi = ratios[len(ratios) // 10], ratios[(9 * len(ratios)) // 10]
        print(f"| {comm} | {len(ratios)} | {geomean(ratios):.3f} | {median(ratios):.3f} | {lo:.2f}-{hi:.2f} | {median(cv_b):.2f} "
              f"| {median(cv_r):.2f} | {same}/{len(points)} |")
        every = ratios
    print(f"\n(relative standard deviation: median over the pairs of stddev/mean of the per-call times; {len(every)} "
          "(method, point) pairs, the library default left out)\n")


def median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else float("nan")


def best_alpha(table, title):
    print(f"## Best alpha-tree vs the library's algorithms: {title}\n")
    print("| comm | msg | best alpha-tree | µs | best library algorithm | µs | default µs | best alpha / best library |")
    print("|---:|---:|---|---:|---|---:|---:|---:|")
    wins, ratios = 0, []
    for (comm, msg), row in sorted(table.items()):
        alphas = {k: v for k, v in row.items() if alphatree.is_alpha(k)}
        library = {k: v for k, v in row.items() if not alphatree.is_alpha(k) and k != "default"}
        if not alphas or not library:
            continue
        a = min(alphas, key=lambda k: alphas[k][0])
        b = min(library, key=lambda k: library[k][0])
        ratio = alphas[a][0] / library[b][0]
        ratios.append(ratio)
        wins += ratio < 1
        default = f"{row['default'][0]:.1f}" if "default" in row else "-"
        print(f"| {comm} | {size_text(msg)} | {a} | {alphas[a][0]:.1f} | {name(b)} | {library[b][0]:.1f} | {default} "
              f"| {ratio:.2f} |")
    print(f"\nan alpha-tree is the fastest at {wins} of {len(ratios)} points; geomean best alpha / best library "
          f"{geomean(ratios):.3f}\n")


def python_cost(table, title):
    """At 2 ranks every α-tree is one message, as basic_linear is: their ratio is what Python adds."""
    ratios = [row[a][0] / row["1"][0] for (comm, _), row in table.items() if comm == 2 and "1" in row
              for a in row if alphatree.is_alpha(a)]
    if ratios:
        print(f"- {title}: at 2 ranks (one message for every alpha-tree and for basic_linear) alpha-tree / "
              f"basic_linear geomean {geomean(ratios):.2f}, median {median(ratios):.2f} over {len(ratios)} pairs")


def leaves(path):
    fn = DecisionFunction.load(path).size_tree
    used = [fn.methods[k].label for k in sorted(set(fn.tree.method[fn.tree.is_leaf].tolist()))]
    count = int(fn.tree.is_leaf.sum())
    alphas = [u for u in used if alphatree.is_alpha(u)]
    print(f"- `{os.path.basename(path)}`: {count} leaves, methods {', '.join(used)}; alpha-trees among them: "
          f"{', '.join(alphas) or 'none'}")


def main(out):
    barrier, ring = read(os.path.join(out, "barrier.csv")), read(os.path.join(out, "ring.csv"))
    barrier_vs_ring(barrier, ring)
    best_alpha(barrier, "barrier before every call")
    best_alpha(ring, "ring semi-barrier")
    multilevel = os.path.join(out, "multilevel.csv")
    if os.path.exists(multilevel):
        best_alpha(read(multilevel), "multilevel, emulated nodes of 2 ranks (blocks:2), ring semi-barrier")
    print("## What the Python point-to-point code costs\n")
    python_cost(barrier, "barrier")
    python_cost(ring, "ring")
    print("\n## The default builds' leaves\n")
    for kind in ("barrier", "ring", "multilevel"):
        path = os.path.join(out, f"{kind}.qt.json")
        if os.path.exists(path):
            leaves(path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
