"""Measuring strategies replayed on recorded full sweeps (docs/benchmarks.md, *Measuring strategies*): which one
`quadsel tune` measures with by default (issue 33: within +0.5 pp of the full sweep's penalty at <= 30 % of its time).

For every data set — ORFEO EPYC bcast and reduce from ../shared (when present), the project's examples/*.csv, and,
held out (never looked at while the strategy and its parameters were chosen), examples/{second,third}-run/ and
examples/two-ranks/ (allreduce: a collective no choice was made on):

1. `quadsel measure --replay FILES` (the full sweep, the library default included), `... --adaptive [OPTIONS]`
   and `... --sample model --budget 30%`;
2. the default build of each CSV — `quadsel build CSV -o TREE` with no option, the build `quadsel tune` deploys
   (the library default kept where nothing beats it, when the CSV has its times);
3. every tree scored on the full data: mean penalty (quadsel.evaluate.penalty) of the tree's choice at every
   measured point of the full decision map, against the best measured choice, the library default included;
4. (`--noise SEEDS`) the gap again with each CSV's measuring noise put back (`with_noise`): a replay answers a
   pair stopped after n calls with the mean of the full sweep's N calls, which flatters any early stop.

Benchmarking time = sum over the measured (method, point) pairs of time per call × repetitions (the recorded
repetitions for the full sweep; the replayed decision-aware stopping for --adaptive; one call per pair where a file
records no repetitions). Run from the project root:

    python benchmarks/adaptive.py [--seeds 5] [--noise 5] [--indifference D] [-- ADAPTIVE OPTIONS, e.g. --behind 2]
    python benchmarks/adaptive.py --grid          # time share / penalty gap for --behind x --hopeless x --cheap
    python benchmarks/adaptive.py --diagnose orfeo-bcast [-- OPTIONS]   # where its time goes, what its tree loses
    python benchmarks/adaptive.py --scale         # the plan's own cost: replays of a 200 x 40 x 12 synthetic sweep
    python benchmarks/adaptive.py --layouts       # across hosts: one plan per ppn of a 16 x 6 x 40 x 12 synthetic sweep
"""

import argparse
import csv
import glob
import itertools
import json
import os
import math
import random
import sys
import tempfile
import zlib

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
MAX_SHARE, MAX_GAP = 0.30, 0.5      # issue 33's bounds: time share of the full sweep, penalty gap in pp
HELD_OUT = ("second-run", "third-run", "two-ranks")
_TREES = itertools.count()


def datasets(held_out=True):
    """(name, collective, files, held out?) of every data set present."""
    out = []
    if os.path.isdir(ORFEO):
        for coll in ("bcast", "reduce"):
            files = sorted(glob.glob(os.path.join(ORFEO, f"{coll}_algo*.csv"))) + [
                os.path.join(ORFEO, f"{coll}_default.csv")]
            out.append((f"orfeo-{coll}", coll, files, False))
    else:
        print(f"no ORFEO data at {ORFEO} (../shared is absent): skipped", file=sys.stderr)
    folders = [""] + (list(HELD_OUT) if held_out else [])
    for folder in folders:
        for path in sorted(glob.glob(os.path.join(ROOT, "examples", folder, "*.csv"))):
            stem = os.path.basename(path)[:-4]
            coll = next(c for c in ("allreduce", "bcast", "reduce") if c in stem)
            out.append((f"{folder}/{stem}" if folder else stem, coll, [path], bool(folder)))
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
    """Mean penalty (%) on the full map of the tree `quadsel build CSV [OPTIONS]` makes (no option: the default
    build, which tune deploys); against the best measured choice there, the library default included."""
    tree = os.path.join(workdir, f"{os.path.basename(csv_path)[:-4]}-{next(_TREES)}.qt.json")
    cli(["build", csv_path, "-o", tree, *options])
    fn = DecisionFunction.load(tree).size_tree
    return summarize(penalty_grid(full_map, choice_on(QuadtreeSelector.of(fn), full_map)), full_map).mean


def random_sample(rows, budget, seed, out):
    """Whole points (every method and the library default) in random order, each taken while the benchmarking
    time stays within `budget`; written as a generic CSV. Returns (cost, points taken)."""
    points = {}
    for r in rows:
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


def with_noise(src, dst, recorded, seed):
    """`src` (a replayed CSV) with every time re-drawn as a measurement of its repetitions would give it: the
    recorded mean + N(0, stddev / sqrt(reps)) (deterministic per seed and pair). A replay answers a pair stopped
    after n calls with the recorded mean of all the full sweep's calls, which no real run of n calls gets; this
    puts back the error of n calls (the full sweep's CSV gets the same treatment with its own repetitions, an
    independent draw: both are one run against the recorded means taken as the truth)."""
    with open(src, newline="") as handle:
        lines = handle.read().splitlines()
    header, out = None, []
    for line in lines:
        if line.startswith("#") or not line.strip() or header is None:
            header = header or (None if line.startswith("#") else line.split(","))
            out.append(line)
            continue
        row = dict(zip(header, line.split(",")))
        key = (row["algorithm"], int(row["segsize"]), int(row["comm_size"]), int(row["msg_size"]))
        truth = recorded.get(key)
        if truth is not None and truth.stddev and row.get("reps"):
            z = random.Random(zlib.crc32(f"{seed}/{key}".encode())).gauss(0.0, 1.0)
            row["time_us"] = f"{max(float(row['time_us']) + truth.stddev / math.sqrt(int(row['reps'])) * z, 1e-3):.4f}"
        out.append(",".join(row[k] for k in header))
    with open(dst, "w", newline="") as handle:
        handle.write("\n".join(out) + "\n")


def noisy_gap(files, collective, full_csv, adaptive_csv, full_map, seeds, workdir):
    """Mean and max over `seeds` of (adaptive's penalty - the full sweep's), each CSV with its measuring noise put
    back (`with_noise`); None where no pair records a stddev and repetitions (ORFEO: no noise to put back)."""
    recorded = {(r.algorithm, r.segsize, r.comm_size, r.msg_size): r
                for r in read_measurements(files, collective=collective)}
    if not any(r.stddev and r.reps for r in recorded.values()):
        return None
    gaps = []
    for seed in range(seeds):
        pair = []
        for label, path in (("full", full_csv), ("adaptive", adaptive_csv)):
            noisy = path[:-4] + f"-noise{seed}.csv"
            with_noise(path, noisy, recorded, f"{label}{seed}")
            pair.append(default_build_penalty(noisy, full_map, workdir))
        gaps.append(pair[1] - pair[0])
    return float(np.mean(gaps)), float(np.max(gaps))


def evaluate(name, collective, files, options, seeds, workdir, sample=None, noise=0, build_options=()):
    """One data set: the full sweep and `--adaptive OPTIONS` (with `sample`: `--sample model --budget SAMPLE`
    too) replayed, built and scored on the full data (with `noise`: also `noisy_gap` over that many seeds)."""
    rows = read_measurements(files, collective=collective)
    full_map = build_decision_map(rows, collective)
    slug = name.replace("/", "-")
    full_csv = os.path.join(workdir, f"{slug}-full.csv")
    adaptive_csv = os.path.join(workdir, f"{slug}-adaptive.csv")
    full_meta = replay(files, collective, full_csv)
    meta = replay(files, collective, adaptive_csv, ["--adaptive", *options])
    done = meta["adaptive"]
    full_time = done["full_sweep_benchmarking_time_us"]
    out = {"data": name, "points": done["points"], "methods": len(full_map.methods),
           "time_share": done["benchmarking_time_us"] / full_time,
           "point_share": done["points_measured"] / done["points"],
           "pairs": f"{done['pairs_measured']}/{done['pairs_measured'] + done['pairs_skipped']}",
           "full_penalty": default_build_penalty(full_csv, full_map, workdir, build_options),
           "adaptive_penalty": default_build_penalty(adaptive_csv, full_map, workdir, build_options),
           "full_check": full_meta["benchmarking_time_us"] == full_meta["full_sweep_benchmarking_time_us"],
           "time_us": done["benchmarking_time_us"], "full_time_us": full_time}
    out["gap"] = out["adaptive_penalty"] - out["full_penalty"]
    out["noisy"] = noisy_gap(files, collective, full_csv, adaptive_csv, full_map, noise, workdir) if noise else None
    if sample:
        sample_csv = os.path.join(workdir, f"{slug}-sample.csv")
        smeta = replay(files, collective, sample_csv, ["--sample", "model", "--budget", sample])
        out["sample_share"] = smeta["benchmarking_time_us"] / full_time
        out["sample_gap"] = default_build_penalty(sample_csv, full_map, workdir) - out["full_penalty"]
    sampled = []
    for seed in range(seeds):
        path = os.path.join(workdir, f"{slug}-random{seed}.csv")
        random_sample(rows, done["benchmarking_time_us"], seed, path)
        sampled.append(default_build_penalty(path, full_map, workdir))
    out["random_mean"] = float(np.mean(sampled)) if sampled else float("nan")
    return out


GRID = [(behind, hopeless, cheap) for behind in ("1.25", "1.3", "1.5", "2") for hopeless in ("2", "3")
        for cheap in ("0.003", "0.01", "0.03")]


def grid():
    """One line per (--behind, --hopeless, --cheap) on the data sets the choice is made on (not the held-out
    ones): time share / penalty gap (pp over the full sweep's build) per data set, and whether the bounds hold."""
    sets = [d for d in datasets(held_out=False)]
    print("| --behind | --hopeless | --cheap | " + " | ".join(name for name, *_ in sets) + " | bounds met |")
    print("|---:|---:|---:|" + "---:|" * (len(sets) + 1))
    with tempfile.TemporaryDirectory() as workdir:
        for behind, hopeless, cheap in GRID:
            cells, met = [], 0
            for name, collective, files, _ in sets:
                r = evaluate(name, collective, files, ["--behind", behind, "--hopeless", hopeless, "--cheap", cheap],
                             0, workdir)
                cells.append(f"{r['time_share']:.1%} / {r['gap']:+.2f}")
                met += r["time_share"] <= MAX_SHARE and r["gap"] <= MAX_GAP
            print(f"| {behind} | {hopeless} | {cheap} | " + " | ".join(cells) + f" | {met} of {len(sets)} |",
                  flush=True)


def diagnose(name, options, budgets=(8, 16, 22, 32, 70)):
    """Where one data set's adaptive run spends its time and what its tree loses (docs/benchmarks.md, *Diagnosis*):
    the time share by the pair's true ratio to the best of its point (from the full sweep), the pairs skipped
    within 1.5x of the best, the share per communicator size, and the deployed penalty of the full and the
    adaptive data at fixed leaf budgets (the same trees: the difference is the budget the folds choose)."""
    found = {n: (c, f) for n, c, f, _ in datasets()}
    collective, files = found[name]
    with tempfile.TemporaryDirectory() as workdir:
        full_csv, adaptive_csv = os.path.join(workdir, "full.csv"), os.path.join(workdir, "adaptive.csv")
        replay(files, collective, full_csv)
        replay(files, collective, adaptive_csv, ["--adaptive", *options])
        full = {(r.comm_size, r.msg_size, r.algorithm, r.segsize): r for r in read_measurements([full_csv])}
        taken = {(r.comm_size, r.msg_size, r.algorithm, r.segsize): r for r in read_measurements([adaptive_csv])}
        total = sum(r.time * (r.reps or 1) for r in full.values())
        best = {}
        for (c, m, _, _), r in full.items():
            best[c, m] = min(best.get((c, m), float("inf")), r.time)
        bands, by_comm = {}, {}
        for key, r in taken.items():
            ratio = full[key].time / best[key[:2]]
            band = "< 1.1" if ratio < 1.1 else "< 1.5" if ratio < 1.5 else "< 3" if ratio < 3 else ">= 3"
            bands[band] = bands.get(band, 0.0) + r.time * (r.reps or 1) / total
            by_comm[key[0]] = by_comm.get(key[0], 0.0) + r.time * (r.reps or 1) / total
        print(f"{name}: adaptive {' '.join(options) or '(defaults)'}: {sum(bands.values()):.1%} of the full sweep")
        print("  by the pair's ratio to the best of its point: " +
              ", ".join(f"{b}: {bands.get(b, 0.0):.1%}" for b in ("< 1.1", "< 1.5", "< 3", ">= 3")))
        missed = sorted((full[k].time / best[k[:2]], k) for k in full if k not in taken and full[k].time / best[k[:2]] < 1.5)
        print(f"  pairs skipped within 1.5x of the best: {len(missed)}" +
              "".join(f"; {k[2]}/{k[3]} at {k[0]} ranks, {k[1]} B ({x:.2f}x)" for x, k in missed[:5]))
        print("  by communicator size: " + ", ".join(f"{c}: {v:.1%}" for c, v in sorted(by_comm.items())))
        full_map = build_decision_map(read_measurements(files, collective=collective), collective)
        for label, path in (("full", full_csv), ("adaptive", adaptive_csv)):
            cells = [f"{b} leaves {default_build_penalty(path, full_map, workdir, ['--max-leaves', str(b), '--keep-default']):.2f} %"
                     for b in budgets]
            tree = os.path.join(workdir, f"{label}-auto.qt.json")
            cli(["build", path, "-o", tree])
            chosen = DecisionFunction.load(tree).size_tree
            print(f"  {label}: default build {chosen.constraint.split(',')[0]}, "
                  f"{default_build_penalty(path, full_map, workdir):.2f} %; fixed budgets (--keep-default): " + ", ".join(cells))


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


def scale(seed=1):
    """The plan's own cost at a real sweep's size: wall time of `measure --replay` of a seeded synthetic bcast sweep
    of 200 communicator sizes x 40 message sizes x 12 methods (96,000 rows), full and --adaptive, in one process
    each (start-up included). The replay measures nothing, so the difference is the plan's bookkeeping."""
    import subprocess
    import time
    rng = random.Random(seed)
    msgs = sorted({int(round(2 ** (k / 1.75))) for k in range(41)})[:40]
    methods = [(str(a), 0) for a in range(1, 10)] + [("3", 8192), ("3", 65536), ("5", 32768)]
    with tempfile.TemporaryDirectory() as workdir:
        sweep = os.path.join(workdir, "sweep.csv")
        with open(sweep, "w") as out:
            out.write(",".join(GENERIC_COLUMNS) + "\n")
            for c in range(2, 202):
                for m in msgs:
                    for i, (a, seg) in enumerate(methods):
                        t = ((1 + i % 4) * math.log2(c) * (1 + 0.1 * i) + m / (1000 + 300 * ((i * 7) % 5))
                             * (1 + (c % (i + 2)) / 10)) * math.exp(rng.gauss(0, 0.03))
                        out.write(f"bcast,{a},{seg},{c},{m},{t:.4f},{t * 0.05:.4f},20\n")
        with open(sweep[:-4] + ".meta.json", "w") as out:
            out.write('{"library": "openmpi"}\n')
        for label, extra in (("full", []), ("adaptive", ["--adaptive"])):
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "quadsel", "measure", "--replay", sweep, "-c", "bcast", "-o",
                                   os.path.join(workdir, f"{label}.csv"), "--no-resume", *extra],
                                  capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT), check=True)
            said = (done.stderr.strip().splitlines() or [""])[-1].replace(workdir, "DIR")
            print(f"{label}: {time.perf_counter() - start:.2f} s ({said})")


def layouts(seed=1):
    """Across hosts `measure --adaptive` runs one plan per ppn over its node counts x message sizes
    (sampling/adaptive_run.py). The seeded synthetic 3-axis sweep of benchmarks/layouts.py (16 node counts x 6 ppn x
    40 message sizes x 12 methods, 46,080 rows) is cut per ppn into the 2-D map that plan covers; each is replayed
    full and adaptive and scored as the data sets above; the last line sums the run (every ppn)."""
    from layouts import sweep_csv
    print("| ppn | points × methods | adaptive: time share | pairs measured | penalty: full sweep | "
          "penalty: adaptive | gap (pp) | bounds |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|")
    spent = full = 0.0
    gaps, fulls, adapts = [], [], []
    with tempfile.TemporaryDirectory() as workdir:
        src = os.path.join(workdir, "sweep.csv")
        sweep_csv(src, seed)
        with open(src, newline="") as handle:
            rows = list(csv.DictReader(handle))
        for ppn in sorted({int(r["ppn"]) for r in rows}):
            path = os.path.join(workdir, f"ppn{ppn}.csv")
            with open(path, "w", newline="") as handle:
                out = csv.writer(handle, lineterminator="\n")
                out.writerow(["collective", "algorithm", "segsize", "comm_size", "msg_size", "time_us", "stddev_us",
                              "reps"])
                for r in rows:
                    if int(r["ppn"]) == ppn:
                        out.writerow([r[k] for k in ("collective", "algorithm", "segsize", "comm_size", "msg_size",
                                                     "time_us", "stddev_us", "reps")])
            with open(path[:-4] + ".meta.json", "w") as handle:
                handle.write('{"library": "synthetic"}\n')
            r = evaluate(f"ppn{ppn}", "bcast", [path], [], 0, workdir, build_options=["--library", "synthetic"])
            ok = r["time_share"] <= MAX_SHARE and r["gap"] <= MAX_GAP
            spent, full = spent + r["time_us"], full + r["full_time_us"]
            gaps.append(r["gap"]), fulls.append(r["full_penalty"]), adapts.append(r["adaptive_penalty"])
            print(f"| {ppn} | {r['points']} × {r['methods']} | {r['time_share']:.1%} | {r['pairs']} | "
                  f"{r['full_penalty']:.2f} % | {r['adaptive_penalty']:.2f} % | {r['gap']:+.2f} | "
                  f"{'met' if ok else 'NOT met'} |", flush=True)
    print(f"| all | {len(rows)} rows | {spent / full:.1%} | | {np.mean(fulls):.2f} % | {np.mean(adapts):.2f} % | "
          f"{np.mean(gaps):+.2f} | {'met' if spent / full <= MAX_SHARE and np.mean(gaps) <= MAX_GAP else 'NOT met'} |")


def main_(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="random samples per data set")
    parser.add_argument("--sample", default="30%", help="the --sample model budget compared (none: not run)")
    parser.add_argument("--grid", action="store_true", help="vary --behind, --hopeless and --cheap instead")
    parser.add_argument("--real", metavar="OUTDIR", help="summarise benchmarks/adaptive_real.sh's OUTDIR instead")
    parser.add_argument("--diagnose", metavar="DATA", help="where DATA's adaptive run spends and loses (e.g. orfeo-bcast)")
    parser.add_argument("--scale", action="store_true", help="the plan's own cost on a 96,000-row synthetic sweep")
    parser.add_argument("--layouts", action="store_true", help="one plan per ppn of the 46,080-row 3-axis sweep")
    parser.add_argument("--noise", type=int, default=5, metavar="SEEDS",
                        help="the gap again with each CSV's measuring noise put back, mean/max over SEEDS (0: not)")
    parser.add_argument("--indifference", type=float, default=None, metavar="DELTA",
                        help="the stopping rule's indifference zone (quadsel.measure.timing.INDIFFERENCE) for this run")
    parser.add_argument("options", nargs=argparse.REMAINDER, help="-- then options for --adaptive")
    args = parser.parse_args(argv)
    if args.real:
        return real(args.real)
    if args.scale:
        return scale()
    if args.layouts:
        return layouts()
    options = [o for o in args.options if o != "--"]
    if args.indifference is not None:
        from quadsel.measure import timing
        timing.INDIFFERENCE = args.indifference
    if args.diagnose:
        return diagnose(args.diagnose, options)
    if args.grid:
        return grid()
    sample = None if args.sample == "none" else args.sample
    from quadsel.measure import timing
    print(f"adaptive options: {' '.join(options) or '(defaults)'}; indifference {timing.INDIFFERENCE}; random "
          f"samples of the adaptive run's time: {args.seeds} seeds; sampled: --sample model --budget {sample}; "
          f"noise put back: {args.noise} seeds\n")
    print("| data | held out | points × methods | adaptive: time share | point share | pairs measured | "
          "penalty: full sweep | penalty: adaptive | gap (pp) | bounds | with noise: gap mean / max | "
          "sampled: share / gap | random, same time: gap (mean) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    missed = []
    with tempfile.TemporaryDirectory() as workdir:
        for name, collective, files, held in datasets():
            r = evaluate(name, collective, files, options, args.seeds, workdir, sample, args.noise)
            assert r["full_check"], "the full replay must spend exactly the full sweep's time"
            ok = r["time_share"] <= MAX_SHARE and r["gap"] <= MAX_GAP
            if not ok:
                missed.append(name)
            sampled = f"{r['sample_share']:.1%} / {r['sample_gap']:+.2f}" if sample else "-"
            randoms = f"{r['random_mean'] - r['full_penalty']:+.2f}" if args.seeds else "-"
            noisy = f"{r['noisy'][0]:+.2f} / {r['noisy'][1]:+.2f}" if r["noisy"] else "-"
            print(f"| {name} | {'yes' if held else 'no'} | {r['points']} × {r['methods']} | {r['time_share']:.1%} | "
                  f"{r['point_share']:.0%} | {r['pairs']} | {r['full_penalty']:.2f} % | {r['adaptive_penalty']:.2f} % | "
                  f"{r['gap']:+.2f} | {'met' if ok else 'NOT met'} | {noisy} | {sampled} | {randoms} |", flush=True)
    print(f"\nadaptive within {MAX_SHARE:.0%} of the full sweep's time and +{MAX_GAP} pp of its penalty: "
          + ("every case" if not missed else "not on " + ", ".join(missed)))


if __name__ == "__main__":
    main_()
