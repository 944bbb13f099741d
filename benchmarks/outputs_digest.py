"""Digest of everything quadsel generates from examples/, ../shared/datasets and a seeded layout sweep: trees,
layout forests, C, every rules file, reports, queries.

usage: python benchmarks/outputs_digest.py [OUTDIR]       (QUADSEL_SHARED: the shared/ folder, default ../shared)

Runs the commands through the CLI in one process and prints `sha256  name` per output, then one
combined digest. Run it before and after a change that must not alter behaviour (a refactoring, a
package move): equal combined digests mean byte-identical outputs. The tree files' `created` timestamps,
input paths and the libmpi path copied from an example's metadata are the only fields normalised in a tree file
(the wall-clock time of the build, where the output folder and the measuring checkout were); a replay's metadata loses its command line and times. docs/architecture.md records the
digest of the layout move.

Beyond examples/ (issue 38): every data set of ../shared/datasets (ORFEO EPYC bcast/reduce from its per-algorithm
files, the six PICO cases, the ompi-collectives-tuning example; skipped, and said, when ../shared is absent) and a
seeded synthetic sweep over nodes x ranks per node with a library default (benchmarks/layouts.py's cluster model,
cut down), its methods relabelled with each library's own bcast algorithms, so that the layout forest goes through
every target that takes one. Each section's digest is printed too.
"""

import hashlib
import json
import math
import os
import sys
import tempfile

from click.testing import CliRunner

from quadsel.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
DATASETS = os.path.join(os.environ.get("QUADSEL_SHARED") or os.path.join(ROOT, "..", "shared"), "datasets")
OPENMPI = ("ompi5-bcast", "ompi5-reduce")
MPICH = ("mpich5-bcast",)
TREES = {"exact": [], "d1": ["--max-depth", "1"], "d2": ["--max-depth", "2"], "d3": ["--max-depth", "3"],
         "t07": ["--threshold", "0.7"], "d3pen": ["--max-depth", "3", "--leaf-rule", "penalty"],
         "d3edge": ["--max-depth", "3", "--pad", "edge"]}
TUNED = ("exact", "d3")
QUERIES = [(1, "0"), (2, "1"), (3, "100"), (5, "4K"), (8, "1M"), (1000, "1G")]


def run(args):
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    if result.exit_code != 0:
        raise SystemExit(f"quadsel {' '.join(args)} failed ({result.exit_code}): {result.output}")
    return result.output


def attempt(args, path):
    """Run a command whose refusal is behaviour too: its output file, or its exit code and message in PATH.err."""
    result = CliRunner().invoke(main, [*args, "-o", path], catch_exceptions=False)
    if result.exit_code != 0:
        with open(path + ".err", "w") as handle:
            handle.write(f"exit {result.exit_code}: {result.output}")


def normalised(path):
    with open(path, "rb") as handle:      # where the checkout and the output folder are (a trace breakdown names its
        data = handle.read().replace(ROOT.encode(), b"<root>")       # trace file): digests equal from any checkout
    data = data.replace(os.path.dirname(os.path.abspath(path)).encode(), b"<out>")
    if path.endswith(".qt.json"):    # when it was built, and where its inputs were relative to it (a forest's too);
        # the libmpi an example's metadata names (a path on the machine that measured it, under that checkout)
        data = json.dumps(_without(json.loads(data), {"created", "path", "libmpi"}), indent=1, sort_keys=True).encode()
    elif path.endswith(".meta.json"):   # a replay's metadata: when and how it was run
        data = json.dumps(_without(json.loads(data), {"command", "started", "finished", "created"}),
                          indent=1, sort_keys=True).encode()
    return data


def _without(doc, keys):
    if isinstance(doc, dict):
        return {k: _without(v, keys) for k, v in doc.items() if k not in keys}
    if isinstance(doc, list):
        return [_without(v, keys) for v in doc]
    return doc


def generate(out):
    for name in OPENMPI + MPICH:
        csv = os.path.join(EXAMPLES, name + ".csv")
        for tag, options in TREES.items():
            tree = os.path.join(out, f"{name}.{tag}.qt.json")
            run(["build", csv, *options, "-o", tree])
            run(["codegen", tree, "-o", os.path.join(out, f"{name}.{tag}.c")])
            run(["codegen", tree, "--flavor", "table", "-o", os.path.join(out, f"{name}.{tag}.table.c")])
            # Open MPI's fixed decision and an MPICH file without a base cannot hand regions back to the
            # library: they get a tree without such regions
            full = os.path.join(out, f"{name}.{tag}.full.qt.json")
            if tag in TUNED or name in MPICH:
                run(["build", csv, *options, "--extrapolate", "--no-keep-default", "-o", full])
            if name in OPENMPI:
                if tag in TUNED:
                    run(["codegen", full, "--flavor", "ompi-tuned", "-o", os.path.join(out, f"{name}.{tag}.tuned.c")])
                run(["codegen", tree, "-t", "ompi-rules", "-o", os.path.join(out, f"{name}.{tag}.rules")])
                run(["codegen", tree, "-t", "ompi-rules", "--max-requests", "4",
                     "-o", os.path.join(out, f"{name}.{tag}.v2.rules")])
                run(["codegen", tree, "-t", "ompi-json", "-o", os.path.join(out, f"{name}.{tag}.ompi.json")])
            else:
                run(["codegen", full, "-t", "mpich-json", "--mpich-base", "none",
                     "-o", os.path.join(out, f"{name}.{tag}.mpich.json")])
            with open(os.path.join(out, f"{name}.{tag}.queries.txt"), "w") as handle:
                for comm, msg in QUERIES:
                    handle.write(run(["query", tree, "--comm", str(comm), "--msg", msg, "--json"]))
        holdout = ["--holdout", "msg", "--holdout", "comm", "--holdout", "random:0.25"]
        for fmt in ("md", "csv", "json"):
            run(["report", csv, *holdout, "--format", fmt, "-o", os.path.join(out, f"{name}.report.{fmt}")])
        run(["report", csv, "--leaf-rule", "penalty", "-o", os.path.join(out, f"{name}.report-penalty.md")])
    both = [os.path.join(out, f"{n}.exact.qt.json") for n in OPENMPI]
    run(["codegen", *both, "-t", "ompi-rules", "-o", os.path.join(out, "both.rules")])
    # the measuring strategies answered from the recorded sweeps (no MPI), and the trace breakdowns
    for strategy, options in (("adaptive", ["--adaptive"]), ("sample", ["--sample", "model", "--budget", "30%"])):
        run(["measure", "--replay", os.path.join(EXAMPLES, "ompi5-bcast.csv"), "-c", "bcast", *options, "--quiet",
             "-o", os.path.join(out, f"replay-{strategy}.csv")])
    traces = os.path.join(EXAMPLES, "traces")
    with open(os.path.join(out, "breakdown.txt"), "w") as handle:
        handle.write(run(["breakdown", os.path.join(traces, "bcast.json"), os.path.join(traces, "allreduce.json")]))
    run(["breakdown", os.path.join(traces, "map2-core-1.json"), os.path.join(traces, "map2-socket-1.json"),
         "--json", "-o", os.path.join(out, "breakdown.json")])


def generate_datasets(out):
    """Every data set of ../shared/datasets: trees, C, the rules files of its library, queries, reports."""
    if not os.path.isdir(DATASETS):
        print(f"no data sets at {DATASETS} (../shared is absent): that section skipped", file=sys.stderr)
        return
    orfeo = os.path.join(DATASETS, "orfeo-epyc-openmpi4")
    for coll in ("bcast", "reduce"):
        files = sorted(os.path.join(orfeo, f) for f in os.listdir(orfeo)
                       if f.startswith(coll + "_algo") or f == coll + "_default.csv")
        dataset(out, f"orfeo-{coll}", files, library_targets=("ompi-rules", "ompi-json", "ompi-han"))
    pico = os.path.join(DATASETS, "pico-public")
    for case in sorted(os.listdir(pico)):
        if os.path.isdir(os.path.join(pico, case)):
            dataset(out, case, [os.path.join(pico, case, "all.csv")], library_targets=())
    detail = os.path.join(DATASETS, "ompi-collectives-tuning-example", "detail.out")
    dataset(out, "occ-gather", [detail, "-c", "gather"], library_targets=("ompi-rules",), holdout=False)


def dataset(out, name, files, library_targets, holdout=True):
    trees = {"default": [], "exact": ["--max-leaves", "none"], "l16": ["--max-leaves", "16"],
             "d3": ["--max-depth", "3"], "paper": ["--paper"], "x": ["--extrapolate"]}
    for tag, options in trees.items():
        tree = os.path.join(out, f"ds-{name}.{tag}.qt.json")
        run(["build", *files, *options, "-o", tree])
        run(["codegen", tree, "-o", os.path.join(out, f"ds-{name}.{tag}.c")])
        run(["codegen", tree, "--flavor", "table", "-o", os.path.join(out, f"ds-{name}.{tag}.table.c")])
        for target in library_targets:
            attempt(["codegen", tree, "-t", target], os.path.join(out, f"ds-{name}.{tag}.{target}"))
        with open(os.path.join(out, f"ds-{name}.{tag}.queries.txt"), "w") as handle:
            for comm, msg in QUERIES:
                handle.write(run(["query", tree, "--comm", str(comm), "--msg", msg, "--json"]))
    splits = ["--holdout", "msg", "--holdout", "comm"] if holdout else []
    run(["report", *files, *splits, "--format", "json", "-o", os.path.join(out, f"ds-{name}.report.json")])


# the layout sweep: a cut-down benchmarks/layouts.py model, its methods as each library's own bcast algorithms
LAYOUT_NODES = (1, 2, 4, 8, 16)
LAYOUT_PPN = (1, 2, 4, 8)
LAYOUT_MESSAGES = (1, 8, 64, 512, 4096, 32768, 262144, 2097152)
LAYOUT_METHODS = {   # benchmarks/layouts.py method -> (Open MPI id, segsize), MPICH name, Intel MPI preset
    ("binomial", 0): (("6", 0), "binomial", "1"),
    ("knomial4", 0): (("7", 0), "tree", "8"),
    ("linear", 0): (("1", 0), "nb", "0"),
    ("scatter_rd_allgather", 0): (("8", 0), "scatter_recursive_doubling_allgather", "2"),
    ("scatter_ring_allgather", 0): (("9", 0), "scatter_ring_allgather", "3"),
    ("pipeline", 65536): (("3", 65536), "pipelined_tree", "7"),
    ("smp_binomial", 0): (("2", 0), "smp", "4"),
    ("smp_scatter_allgather", 0): (("4", 0), "binomial", "5"),
}


def layout_csv(path, library):
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    from layouts import model
    import numpy as np
    rng = np.random.default_rng(7)
    column = {"openmpi": 0, "mpich": 1, "intelmpi": 2}[library]
    rows = {}
    for nodes in LAYOUT_NODES:
        for ppn in LAYOUT_PPN:
            for m in LAYOUT_MESSAGES:
                times = []
                for (name, seg), labels in LAYOUT_METHODS.items():
                    t = (model(name, seg, nodes, ppn, m) + 0.3) * math.exp(rng.normal(0.0, 0.02))
                    label, segsize = labels[column] if column == 0 else (labels[column], 0)
                    key = (label, segsize, nodes, ppn, m)
                    rows[key] = min(t, rows.get(key, t))
                    times.append(t)
                # the library's default: a fixed rule of thumb, sometimes the best, sometimes far from it
                rows[("default", 0, nodes, ppn, m)] = sorted(times)[(nodes + m) % 3] * 1.01
    lines = ["collective,algorithm,segsize,nodes,ppn,comm_size,msg_size,time_us,stddev_us,reps"]
    for (label, seg, nodes, ppn, m), t in rows.items():
        lines.append(f"bcast,{label},{seg},{nodes},{ppn},{nodes * ppn},{m},{t:.4f},{t * 0.02:.4f},20")
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    with open(path[:-4] + ".meta.json", "w") as handle:
        handle.write(json.dumps({"library": library}) + "\n")


LAYOUT_TARGETS = {"openmpi": ("ompi-rules", "ompi-json", "ompi-han"), "mpich": ("mpich-json",),
                  "intelmpi": ("impi-json", "env-script")}


def generate_layouts(work, out):
    """A layout forest per library and build setting, through the C and every target of its library."""
    for library, targets in LAYOUT_TARGETS.items():
        csv = os.path.join(work, f"layout-{library}.csv")
        layout_csv(csv, library)
        for tag, options in (("default", []), ("x", ["--extrapolate"]), ("l8", ["--max-leaves", "8"])):
            tree = os.path.join(out, f"lay-{library}.{tag}.qt.json")
            run(["build", csv, *options, "-o", tree])
            run(["codegen", tree, "-o", os.path.join(out, f"lay-{library}.{tag}.c")])
            for target in targets:
                extra = ["--mpich-base", "none"] if target == "mpich-json" else []
                if target == "mpich-json" and tag != "x":
                    continue       # a base-less MPICH file cannot hand regions back
                attempt(["codegen", tree, "-t", target, *extra], os.path.join(out, f"lay-{library}.{tag}.{target}"))
            # the targets whose key is the process count alone take the member of one ppn
            per_ppn = ["blob", "impi-adjust"] if library == "intelmpi" else ["blob"]
            for target in per_ppn:
                attempt(["codegen", tree, "-t", target, "--ppn", "4"], os.path.join(out, f"lay-{library}.{tag}.{target}"))
            with open(os.path.join(out, f"lay-{library}.{tag}.queries.txt"), "w") as handle:
                for comm, msg in QUERIES:
                    for ppn in (1, 3, 8, 64):
                        handle.write(run(["query", tree, "--comm", str(comm), "--msg", msg, "--ppn", str(ppn),
                                          "--json"]))
        run(["report", csv, "--tree", os.path.join(out, f"lay-{library}.default.qt.json"), "--format", "json",
             "-o", os.path.join(out, f"lay-{library}.report-tree.json")])


def main_(argv):
    out = argv[1] if len(argv) > 1 else tempfile.mkdtemp(prefix="quadsel-outputs.")
    os.makedirs(out, exist_ok=True)
    generate(out)
    generate_datasets(out)
    with tempfile.TemporaryDirectory() as work:
        generate_layouts(work, out)
    combined = hashlib.sha256()
    sections = {}
    for name in sorted(os.listdir(out)):
        digest = hashlib.sha256(normalised(os.path.join(out, name))).hexdigest()
        combined.update(f"{digest}  {name}\n".encode())
        section = "datasets" if name.startswith("ds-") else "layouts" if name.startswith("lay-") else "examples"
        sections.setdefault(section, hashlib.sha256()).update(f"{digest}  {name}\n".encode())
        print(f"{digest}  {name}")
    for section, digest in sorted(sections.items()):
        print(f"section {section} {digest.hexdigest()}")
    print(f"combined {combined.hexdigest()}  ({len(os.listdir(out))} files in {out})")


if __name__ == "__main__":
    main_(sys.argv)
