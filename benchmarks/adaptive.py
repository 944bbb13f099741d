"""Adaptive measurement replayed on recorded full sweeps (docs/benchmarks.md, *Adaptive measurement*).

For every data set (ORFEO EPYC bcast and reduce from ../shared, when present; the project's examples/):

1. `quadsel measure --replay FILES` (the full sweep) and `quadsel measure --replay FILES --adaptive [OPTIONS]`;
2. the default build of each CSV — `quadsel build CSV -o TREE` with no option, whatever the default is
   when this runs — and of random samples of whole points (every method) of the same benchmarking time;
3. every tree scored on the full data: mean penalty (quadsel.evaluate.penalty) of the tree's choice at
   every measured point of the full decision map.

Benchmarking time = sum over the measured (method, point) pairs of time per call × repetitions (the
recorded repetitions for the full sweep; the replayed decision-aware stopping for --adaptive; one call
per pair where a file records no repetitions). Run from the project root:

    python benchmarks/adaptive.py [--seeds 20] [-- ADAPTIVE OPTIONS, e.g. --behind 2 --agree 0.02]
    python benchmarks/adaptive.py --grid          # time share / penalty for --behind x --cheap
"""

import argparse
import csv
import glob
import json
import os
import random
import sys
import tempfile

import numpy as np
from click.testing import CliRunner

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from quadsel.cli import main  # noqa: E402
from quadsel.decision.decision_function import DecisionFunction  # noqa: E402
from quadsel.decision.decision_map import build_decision_map  # noqa: E402
from quadsel.evaluate.comparators import QuadtreeSelector, choice_on  # noqa: E402
from quadsel.evaluate.penalty import penalty_grid, summarize  # noqa: E402
from quadsel.ingest import GENERIC_COLUMNS, read_measurements  # noqa: E402

ORFEO = os.environ.get("ORFEO", os.path.join(ROOT, "..", "shared", "datasets", "orfeo-epyc-openmpi4"))


def datasets():
    """(name, collective, files) of every data set present."""
    out = []
    if os.path.isdir(ORFEO):
        for coll in ("bcast", "reduce"):
            files = sorted(glob.glob(os.path.join(ORFEO, f"{coll}_algo*.csv"))) + [
                os.path.join(ORFEO, f"{coll}_default.csv")]
            out.append((f"orfeo-{coll}", coll, files))
    else:
        print(f"no ORFEO data at {ORFEO} (../shared is absent): skipped", file=sys.stderr)
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.csv"))):
        stem = os.path.basename(path)[:-4]
        coll = next(c for c in ("allreduce", "bcast", "reduce") if c in stem)
        out.append((stem, coll, [path]))
    return out


def cli(args):
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    if result.exit_code != 0:
        raise SystemExit(f"quadsel {' '.join(args)} failed: {result.output}")
    return result


def replay(files, collective, out, options=()):
    cli(["measure", "--replay", *files, "-c", collective, "-o", out, "--quiet", "--no-resume", *options])
    with open(out[:-4] + ".meta.json") as handle:
        return json.load(handle)


def default_build_penalty(csv_path, full_map, workdir, options=()):
    """Mean penalty (%) on the full map of the tree `quadsel build CSV --no-keep-default [OPTIONS]` makes
    (--adaptive and the sampled runs do not measure the library default, so no build here may keep it for
    the trees to compare)."""
    tree = os.path.join(workdir, os.path.basename(csv_path)[:-4] + "-".join(("",) + tuple(options[:2])) + ".qt.json")
    cli(["build", csv_path, "--no-keep-default", "-o", tree, *options])
    fn = DecisionFunction.load(tree)
    return summarize(penalty_grid(full_map, choice_on(QuadtreeSelector.of(fn), full_map)), full_map).mean


def random_sample(rows, budget, seed, out):
    """Whole points (every method; not `default`, which no decision uses and --adaptive does not measure)
    in random order, each taken while the benchmarking time stays within `budget`; written as a generic
    CSV. Returns (cost, points taken)."""
    points = {}
    for r in rows:
        if r.is_default:
            continue
        points.setdefault((r.comm_size, r.msg_size), []).append(r)
    order = sorted(points)
    random.Random(seed).shuffle(order)
    taken, cost = [], 0.0
    for p in order:
        c = sum(r.time * (r.reps or 1) for r in points[p])
        if cost + c <= budget:
            taken.append(p)
            cost += c
    with open(out, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(GENERIC_COLUMNS)
        for p in taken:
            for r in points[p]:
                writer.writerow([r.collective, r.algorithm, r.segsize, r.comm_size, r.msg_size, r.time,
                                 "" if r.stddev is None else r.stddev, "" if r.reps is None else r.reps])
    return cost, len(taken)


def evaluate(name, collective, files, options, seeds, workdir):
    rows = read_measurements(files, collective=collective)
    full_map = build_decision_map(rows, collective)
    full_csv = os.path.join(workdir, f"{name}-full.csv")
    adaptive_csv = os.path.join(workdir, f"{name}-adaptive.csv")
    full_meta = replay(files, collective, full_csv)
    meta = replay(files, collective, adaptive_csv, ["--adaptive", *options])
    done = meta["adaptive"]
    share = done["benchmarking_time_us"] / done["full_sweep_benchmarking_time_us"]
    full_penalty = default_build_penalty(full_csv, full_map, workdir)
    adaptive_penalty = default_build_penalty(adaptive_csv, full_map, workdir)
    sampled = []
    for seed in range(seeds):
        out = os.path.join(workdir, f"{name}-random{seed}.csv")
        cost, _ = random_sample(rows, done["benchmarking_time_us"], seed, out)
        sampled.append((default_build_penalty(out, full_map, workdir), cost / done["full_sweep_benchmarking_time_us"]))
    random_penalties = [p for p, _ in sampled] or [float("nan")]
    return {
        "data": name, "points": done["points"], "methods": len(full_map.methods),
        "time_share": share, "point_share": done["points_measured"] / done["points"],
        "pairs": f"{done['pairs_measured']}/{done['pairs_measured'] + done['pairs_skipped']}",
        "full_penalty": full_penalty, "adaptive_penalty": adaptive_penalty,
        "random_mean": float(np.mean(random_penalties)), "random_min": float(np.min(random_penalties)),
        "random_max": float(np.max(random_penalties)),
        "full_check": full_meta["benchmarking_time_us"] == full_meta["full_sweep_benchmarking_time_us"],
    }


GRID = [(behind, cheap) for behind in ("1.25", "1.5", "2", "3") for cheap in ("0", "0.01", "0.03")]


def grid():
    """One line per (--behind, --cheap): time share and penalty (pp over the full sweep's build) per data set."""
    sets = datasets()
    print("| --behind | --cheap | " + " | ".join(name for name, _, _ in sets) + " | ORFEO mean share |")
    print("|---:|---:|" + "---:|" * (len(sets) + 1))
    with tempfile.TemporaryDirectory() as workdir:
        for behind, cheap in GRID:
            cells, orfeo = [], []
            for name, collective, files in sets:
                r = evaluate(name, collective, files, ["--behind", behind, "--cheap", cheap], 0, workdir)
                cells.append(f"{r['time_share']:.1%} / {r['adaptive_penalty'] - r['full_penalty']:+.2f}")
                if name.startswith("orfeo-"):
                    orfeo.append(r["time_share"])
            mean = f"{np.mean(orfeo):.1%}" if orfeo else "-"
            print(f"| {behind} | {cheap} | " + " | ".join(cells) + f" | {mean} |", flush=True)


def real(outdir):
    """The figures of benchmarks/adaptive_real.sh: OUTDIR/full.csv and OUTDIR/adaptive.csv, both measured."""
    full_csv, adaptive_csv = os.path.join(outdir, "full.csv"), os.path.join(outdir, "adaptive.csv")
    full_map = build_decision_map(read_measurements([full_csv]))
    times = {}
    for name, path in (("full", full_csv), ("adaptive", adaptive_csv)):
        rows = read_measurements([path])
        times[name] = sum(r.time * r.reps for r in rows) / 1e6
        with open(path[:-4] + ".meta.json") as handle:
            meta = json.load(handle)
        done = meta.get("adaptive") or {}
        line = (f"{name}: {len(rows)} rows, {sum(r.reps for r in rows)} timed calls, benchmarking time "
                f"{times[name]:.2f} s; default build's penalty on full.csv "
                f"{default_build_penalty(path, full_map, outdir):.2f} %")
        if done:
            line += (f"; its own estimate of the full sweep {done['full_sweep_benchmarking_time_us'] / 1e6:.1f} s "
                     f"(share {done['share_of_full_sweep']:.1%}); {done['points_measured']}/{done['points']} points")
        print(line)
    print(f"adaptive / full benchmarking time: {times['adaptive'] / times['full']:.1%}")


def main_(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="random samples per data set")
    parser.add_argument("--grid", action="store_true", help="vary --behind and --cheap instead (no random samples)")
    parser.add_argument("--real", metavar="OUTDIR", help="summarise benchmarks/adaptive_real.sh's OUTDIR instead")
    parser.add_argument("options", nargs=argparse.REMAINDER, help="-- then options for --adaptive")
    args = parser.parse_args(argv)
    if args.real:
        return real(args.real)
    if args.grid:
        return grid()
    options = [o for o in args.options if o != "--"]
    print(f"adaptive options: {' '.join(options) or '(defaults)'}; random samples: {args.seeds} seeds\n")
    print("| data | points × methods | time share | point share | pairs measured | penalty: full sweep | "
          "penalty: adaptive | penalty: random, same time (mean [min–max]) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    shares = {}
    with tempfile.TemporaryDirectory() as workdir:
        for name, collective, files in datasets():
            r = evaluate(name, collective, files, options, args.seeds, workdir)
            assert r["full_check"], "the full replay must spend exactly the full sweep's time"
            shares[name] = r
            print(f"| {name} | {r['points']} × {r['methods']} | {r['time_share']:.1%} | {r['point_share']:.0%} | "
                  f"{r['pairs']} | {r['full_penalty']:.2f} % | {r['adaptive_penalty']:.2f} % | "
                  f"{r['random_mean']:.2f} % [{r['random_min']:.2f}–{r['random_max']:.2f}] |", flush=True)
    orfeo = [shares[n] for n in ("orfeo-bcast", "orfeo-reduce") if n in shares]
    if orfeo:
        mean_share = float(np.mean([r["time_share"] for r in orfeo]))
        worst = max(r["adaptive_penalty"] - r["full_penalty"] for r in orfeo)
        print(f"\nORFEO bcast + reduce: mean time share {mean_share:.1%} (goal <= 30 %); adaptive penalty "
              f"at most {worst:+.2f} pp from the full sweep's build (goal <= 0.5 pp): "
              f"{'met' if mean_share <= 0.30 and worst <= 0.5 else 'NOT met'}")


if __name__ == "__main__":
    main_()
