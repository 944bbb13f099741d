"""Decision time of every C form of a tree against m2cgen's C of a scikit-learn tree, and the paper's Table 3.

usage: python benchmarks/decision_time.py [--collective C] [--build paper|exact] [--rounds 21] [--callgrind] FILES...

--build paper: the tree of `quadsel build --paper`; exact: of `quadsel build --max-leaves none` (the default
builder, no leaf budget). Sizes outside the measured range return 0 in both, as `quadsel build` makes them.

One program (gcc -O2, every form in its own translation unit, so every decision is a real call) holds, for
the exact tree: the paper's unmerged if/else-if, the merged if/else-if in the quadtree's order (`--order tree`)
and in the default order (fewest expected tests, c_order.py), `--flavor table` (the grid table
searched branch-free, c_grid.py, or the node table when the grid is too large), the compact node table
(c_table.py, the blob's layout), the loaded blob, m2cgen's C of a DecisionTreeClassifier fitted to the same cells (its double comparisons, the class
scores it writes and their argmax: what deploying it costs), and an empty function (the call overhead);
plus the merged function, the grid table and the node table of every depth-limited tree. It first checks that every form
answers what the Python query answers, then times 2^20 decisions per form and query stream, in rounds with
the forms in rotating order, and reports medians over the rounds. Streams (2^16 queries each, the same for
every form): uniform communicator and message sizes over the measured ranges (the paper's Table 3),
log-uniform message sizes, and 16 queries repeated (what one application does). --callgrind also counts
instructions per decision (deterministic, unlike times on a shared machine).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import median

import numpy as np

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.decision.options import DEFAULT_BUILD, PAPER_BUILD
from quadsel.evaluate.penalty import penalty_grid, summarize
from quadsel.ingest import read_measurements
from quadsel.targets.blob import to_blob
from quadsel.targets.c import generate_c
from quadsel.targets.c_common import algorithm_ids
from quadsel.targets.c_branches import function_size, walked_tests
from quadsel.targets import emit
from quadsel.targets.c_grid import generate_c_grid, grid_bytes, grid_fits
from quadsel.targets.c_table import generate_c_table, table_bytes

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE.parent / "templates"
STREAMS = ("uniform", "log-uniform", "repeated")
MAIN_FORMS = ("paper", "tree", "merged", "table", "nodes", "blob", "m2cgen", "none")
SERIES = (("merged", generate_c), ("grid", generate_c_grid), ("nodes", generate_c_table))
Q, CALLS = 1 << 16, 1 << 20
# `quadsel build --paper` and `quadsel build --max-leaves none` (cli/options.py build_settings, no --extrapolate)
BUILDS = {"paper": dict(PAPER_BUILD, outside="default"),
          "exact": dict(DEFAULT_BUILD, max_leaves=None, outside="default")}
NONE = ("#include <stddef.h>\nint d_none(int comm_size, size_t msg_size, int *segsize)\n"
        "{\n    (void)msg_size;\n    *segsize = 0;\n    return comm_size & 1;\n}\n")


def m2cgen_source(fn, name):
    """m2cgen's C of a DecisionTreeClassifier that reproduces fn on every integer size, wrapped as a decision."""
    import m2cgen
    from sklearn.tree import DecisionTreeClassifier
    painted = fn.cell_methods()
    edges = []
    for axis in (fn.comm_axis, fn.msg_axis):           # each cell's first and last size: thresholds land on lo - 0.5
        lo = axis.lo.astype(float)
        hi = np.append(lo[1:] - 1, 2 * max(lo[-1], 1))
        edges.append((lo, hi))
    X, y = [], []
    for r in range(painted.shape[0]):
        for c in range(painted.shape[1]):
            for comm in {edges[0][0][r], edges[0][1][r]}:
                for msg in {edges[1][0][c], edges[1][1][c]}:
                    X.append((comm, msg))
                    y.append(painted[r, c])
    clf = DecisionTreeClassifier(random_state=0).fit(np.array(X), np.array(y))
    ids = algorithm_ids(fn.methods, fn.collective)
    classes = [fn.methods[int(k)] for k in clf.classes_]
    k = len(classes)
    wrapper = f"""
static const int m2c_alg[{k}] = {{ {", ".join(str(ids[m.algorithm].number) for m in classes)} }};
static const int m2c_seg[{k}] = {{ {", ".join(str(m.segsize) for m in classes)} }};
int {name}(int comm_size, size_t msg_size, int *segsize)
{{
    double input[2], output[{max(k, 2)}];
    int j, best = 0;
    input[0] = (double)comm_size;
    input[1] = (double)msg_size;
    m2c_score(input, output);
    for (j = 1; j < {k}; j++) {{
        if (output[j] > output[best]) {{
            best = j;
        }}
    }}
    if (segsize != NULL) {{
        *segsize = m2c_seg[best];
    }}
    return m2c_alg[best];
}}
"""
    source = m2cgen.export_to_c(clf, function_name="m2c_score")
    return "#include <stddef.h>\n" + source + wrapper, clf.get_n_leaves(), clf.get_depth()


def compile_program(folder, functions, cc):
    """functions: [(form name, C function name or None for the blob, source)] -> path of the driver."""
    declarations = ["#include <stddef.h>", "typedef int (*decide_fn)(int, size_t, int *);"]
    entries, objects = [], []
    for n, (form, cname, source) in enumerate(functions):
        if cname is not None:
            declarations.append(f"int {cname}(int comm_size, size_t msg_size, int *segsize);")
            path = folder / f"f{n}.c"
            path.write_text(source)
            objects.append(str(path))
        entries.append(f'{{"{form}", {cname or "NULL"}}}')
    declarations.append("static const struct { const char *name; decide_fn fn; } FORMS[] = {\n    "
                        + ",\n    ".join(entries) + "\n};")
    declarations.append("#define N_FORMS ((int)(sizeof FORMS / sizeof FORMS[0]))")
    driver = (HERE / "decision_time_driver.c").read_text().replace("/* FORMS */", "\n".join(declarations))
    (folder / "driver.c").write_text(driver)
    exe = folder / "decide"
    subprocess.run([cc, "-std=c99", "-O2", "-I", str(TEMPLATES), "-o", str(exe), *objects,
                    str(TEMPLATES / "quadsel_blob.c"), str(folder / "driver.c"), "-lm"], check=True)
    return exe


def check_answers(exe, blob, fns_by_form, forms):
    """Every form answers what the Python query of its tree answers (grid points, +-1, random sizes)."""
    fn = fns_by_form["merged"]
    rng = np.random.default_rng(0)
    comms = sorted({int(c) + d for c in fn.comm_sizes for d in (-1, 0, 1)} | {0, 1, 2**31 - 1})
    msgs = sorted({int(m) + d for m in fn.msg_sizes for d in (-1, 0, 1) if m + d >= 0} | {0, 2**40})
    queries = [(c, m) for c in comms for m in msgs]
    queries += [(int(rng.integers(0, 2 * fn.comm_sizes[-1])), int(rng.integers(0, 2 * fn.msg_sizes[-1])))
                for _ in range(2000)]
    out = subprocess.run([str(exe), "check", str(blob)], input="".join(f"{c} {m}\n" for c, m in queries),
                         capture_output=True, text=True, check=True).stdout.splitlines()
    for f, form in enumerate(forms):
        tree = fns_by_form.get(form)
        if tree is None:
            continue
        ids = algorithm_ids(tree.methods, tree.collective)
        chosen = tree.choices(np.array([c for c, _ in queries]), np.array([m for _, m in queries]))
        want = [f"{ids[tree.methods[k].algorithm].number} {tree.methods[k].segsize}" for k in chosen.tolist()]
        got = [" ".join(line.split()[2 * f:2 * f + 2]) for line in out]
        bad = sum(a != b for a, b in zip(want, got))
        if bad:
            raise SystemExit(f"{form}: {bad} of {len(queries)} answers differ from the Python query")


def load():
    with open("/proc/loadavg") as handle:
        return " ".join(handle.read().split()[:3])


def callgrind_per_call(exe, blob, forms, ranges, wanted):
    """Instructions per decision of each (form, stream) in `wanted` (callgrind): the difference between runs of
    2N and N decisions, over N (so the set-up cancels), less the empty form's on that stream (the loop and
    the call), which is given as it is for ("none", stream)."""
    calls = 1 << 16

    def count(form, stream, n):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "cg.out")
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(exe), "one", str(blob),
                            str(Q), str(n), str(forms.index(form)), str(stream), *ranges], check=True, capture_output=True)
            text = Path(out).read_text()
        return int(re.search(r"^summary:\s+(\d+)", text, re.M).group(1))

    per_call = {key: (count(*key, 2 * calls) - count(*key, calls)) / calls
                for key in set(wanted) | {("none", s) for _, s in wanted}}
    return {(form, s): per_call[form, s] - (per_call["none", s] if form != "none" else 0) for form, s in per_call}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--collective")
    parser.add_argument("--build", default="paper", choices=tuple(BUILDS))
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--callgrind", action="store_true")
    args = parser.parse_args()
    dmap = build_decision_map(read_measurements(args.files, collective=args.collective), args.collective)
    options = BUILDS[args.build]
    exact = build_size_tree(dmap, **options)
    series = [build_size_tree(dmap, max_depth=d, **options) for d in range(1, exact.tree.stats()["depth_max"])]
    series.append(exact)
    m2c, m2c_leaves, m2c_depth = m2cgen_source(exact, "d_m2cgen")
    functions = [("paper", "d_paper", generate_c(exact, name="d_paper", merge=False)),
                 ("tree", "d_tree", generate_c(exact, name="d_tree", order="tree")),
                 ("merged", "d_merged", generate_c(exact, name="d_merged")),
                 ("table", "d_table", emit("c", [exact], flavor="table", name="d_table")),
                 ("nodes", "d_nodes", generate_c_table(exact, name="d_nodes")),
                 ("blob", None, None), ("m2cgen", "d_m2cgen", m2c), ("none", "d_none", NONE)]
    fns_by_form = {form: exact for form in MAIN_FORMS if form != "none"}
    for i, fn in enumerate(series):
        for kind, generate in SERIES:
            functions.append((f"s{i}_{kind}", f"s{i}_{kind}", generate(fn, name=f"s{i}_{kind}")))
            fns_by_form[f"s{i}_{kind}"] = fn
    forms = [form for form, _, _ in functions]
    ranges = [str(int(dmap.comm_sizes[0])), str(int(dmap.comm_sizes[-1])), str(max(int(dmap.msg_sizes[0]), 1)),
              str(int(dmap.msg_sizes[-1]))]
    stats = exact.tree.stats()
    print(f"{dmap.collective}: {dmap.shape[0]}x{dmap.shape[1]} map, {len(dmap.methods)} methods; exact tree "
          f"({exact.constraint}): {stats['leaves']} leaves, {stats['nodes']} nodes; scikit-learn tree: "
          f"{m2c_leaves} leaves, depth {m2c_depth}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        blob = folder / "tree.qsb"
        blob.write_bytes(to_blob(exact))
        exe = compile_program(folder, functions, args.cc)
        check_answers(exe, blob, fns_by_form, forms)
        before = load()
        out = subprocess.run([str(exe), "time", str(blob), str(Q), str(CALLS), str(args.rounds), *ranges],
                             capture_output=True, text=True, check=True).stdout
        after = load()
        wanted = [(form, s) for form in MAIN_FORMS for s in (0, 2)]
        wanted += [(f"s{i}_{kind}", 0) for i in range(len(series)) for kind, _ in SERIES]
        instructions = callgrind_per_call(exe, blob, forms, ranges, wanted) if args.callgrind else None
    times = {}
    for line in out.splitlines():
        _, form, stream, ns = line.split()
        times.setdefault((form, int(stream)), []).append(float(ns))
    ns = {key: median(values) for key, values in times.items()}
    cc = subprocess.run([args.cc, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    print(f"{cc}, -O2; {args.rounds} rounds of {CALLS} decisions per form and stream ({Q} queries per stream); "
          f"load average {before} before, {after} after\n")
    header = "| Form | " + " | ".join(f"{s} [ns] | x m2cgen" for s in STREAMS)
    if instructions:
        header += " | instructions (uniform / repeated)"
    print(header + " |")
    print("|---|" + "---:|---:|" * len(STREAMS) + ("---:|" if instructions else ""))
    table = "grid table" if grid_fits(exact) else "node table (the grid is too large)"
    labels = {"paper": "if/else-if, paper's form (--no-merge)", "tree": "if/else-if, merged, tree's order (--order tree)",
              "merged": "if/else-if, merged, fewest expected tests (default)",
              "table": f"--flavor table: {table}", "nodes": "node table", "blob": "loaded blob", "m2cgen": "m2cgen C (scikit-learn tree)", "none": "empty function (call cost)"}
    for form, label in labels.items():
        cells = [f"{ns[form, s]:.2f} | {ns[form, s] / ns['m2cgen', s]:.2f}" for s in range(len(STREAMS))]
        if instructions:
            cells.append(f"{instructions[form, 0]:.1f} / {instructions[form, 2]:.1f}")
        print(f"| {label} | " + " | ".join(cells) + " |")
    size, paper = function_size(exact), function_size(exact, merge=False)
    walked, tree_walked = walked_tests(exact)
    print(f"\nexact tree: function size {size.tests} tests merged ({function_size(exact, order='tree').tests} in the "
          f"tree's order), {paper.tests} in the paper's form; {walked:.2f} tests per random query ({tree_walked:.2f} in "
          f"the tree's order); node table {table_bytes(exact)} bytes of data ({exact.tree.n_nodes} nodes); grid table "
          f"{grid_bytes(exact)} bytes\n")
    print("Table 3 (paper's columns; times on the uniform stream; in-memory = the node table, ns per level = its "
          "time / (mean depth + 1)):\n")
    columns = ["Constraint", "Mean depth", "Mean penalty [%]", "Leaves", "Memory [bytes]", "In-memory [ns]",
               "ns per level", "Function size (paper's form)", "Compiled [ns]", "Grid [bytes]", "Grid [ns]"]
    if instructions:
        columns += ["In-memory [instructions]", "Compiled [instructions]", "Grid [instructions]"]
    print("| " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * (len(columns) - 1))
    for i, fn in enumerate(series):
        depth = fn.stats()["depth_mean"]
        penalty = summarize(penalty_grid(dmap, fn.choice_grid()), dmap).mean
        table_ns, merged_ns, grid_ns = ns[f"s{i}_nodes", 0], ns[f"s{i}_merged", 0], ns[f"s{i}_grid", 0]
        row = (f"| {fn.constraint} | {depth:.2f} | {penalty:.2f} | {fn.tree.n_leaves} | {table_bytes(fn)} | "
               f"{table_ns:.2f} | {table_ns / (depth + 1):.2f} | {function_size(fn).tests} "
               f"({function_size(fn, merge=False).tests}) | {merged_ns:.2f} | {grid_bytes(fn)} | {grid_ns:.2f} |")
        if instructions:
            row += "".join(f" {instructions[f's{i}_{kind}', 0]:.1f} |" for kind in ("nodes", "merged", "grid"))
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
