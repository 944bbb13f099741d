"""Digest of everything quadsel generates from examples/: trees, C, rules files, reports, queries.

usage: python benchmarks/outputs_digest.py [OUTDIR]

Runs the commands through the CLI in one process and prints `sha256  name` per output, then one
combined digest. Run it before and after a change that must not alter behaviour (a refactoring, a
package move): equal combined digests mean byte-identical outputs. The tree files' `created` timestamp
is the only field normalised in a tree file (the wall-clock time of the build); a replay's metadata loses its command line and times. docs/architecture.md records the
digest of the layout move.
"""

import hashlib
import json
import os
import sys
import tempfile

from click.testing import CliRunner

from quadsel.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
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


def normalised(path):
    with open(path, "rb") as handle:
        data = handle.read()
    if path.endswith(".qt.json"):
        doc = json.loads(data)
        doc.get("provenance", {}).pop("created", None)
        data = json.dumps(doc, indent=1, sort_keys=True).encode()
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


def main_(argv):
    out = argv[1] if len(argv) > 1 else tempfile.mkdtemp(prefix="quadsel-outputs.")
    os.makedirs(out, exist_ok=True)
    generate(out)
    combined = hashlib.sha256()
    for name in sorted(os.listdir(out)):
        digest = hashlib.sha256(normalised(os.path.join(out, name))).hexdigest()
        combined.update(f"{digest}  {name}\n".encode())
        print(f"{digest}  {name}")
    print(f"combined {combined.hexdigest()}  ({len(os.listdir(out))} files in {out})")


if __name__ == "__main__":
    main_(sys.argv)
