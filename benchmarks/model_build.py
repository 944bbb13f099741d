"""Model-based build at equal measurement cost (docs/benchmarks.md, *Model-based build*).

For every data set (ORFEO EPYC bcast and reduce from ../shared, when present; the project's examples/) and
every share S of the full sweep's benchmarking time (10 %, 25 %, 50 %):

1. `quadsel measure --replay FILES --adaptive --budget S`, then `quadsel build CSV` (the default build);
2. `quadsel measure --replay FILES --sample model --budget S`, then `quadsel build CSV` (no model) and
   `quadsel build --model hockney|paper CSV` predicting the full grid;
3. random samples of whole points (every method) costing what the model sample cost (SEEDS seeds, 0..SEEDS-1),
   then `quadsel build CSV` and `quadsel build --model hockney CSV`;
4. every tree scored on the full data: mean penalty (quadsel.evaluate.penalty) of its choice at every
   measured point of the full decision map.

Deterministic: the replays and builds are, and the random samples are seeded. Run from the project root:

    python benchmarks/model_build.py [--seeds 5] [--shares 10,25,50] [--data orfeo-bcast,...]
"""

import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from adaptive import datasets, default_build_penalty, random_sample, replay  # noqa: E402
from quadsel.decision.decision_map import build_decision_map  # noqa: E402
from quadsel.ingest import read_measurements  # noqa: E402


def build_penalty(csv_path, full_map, workdir, options=()):
    """adaptive.default_build_penalty with --no-keep-default (the model sample does not time the library
    default); with a --model option the full grid is predicted."""
    grid = ["--predict-comm-sizes", ",".join(map(str, full_map.comm_sizes.tolist())),
            "--predict-msg-sizes", ",".join(map(str, full_map.msg_sizes.tolist()))] if options else []
    return default_build_penalty(csv_path, full_map, workdir, ("--no-keep-default", *options, *grid))


def evaluate(name, collective, files, share, seeds, workdir):
    rows = read_measurements(files, collective=collective)
    full_map = build_decision_map(rows, collective)
    budget = f"{share:g}%"
    out = {}
    adaptive_csv = os.path.join(workdir, f"{name}-{share:g}-adaptive.csv")
    done = replay(files, collective, adaptive_csv, ["--adaptive", "--budget", budget])
    full = done["full_sweep_benchmarking_time_us"]
    out["adaptive"] = (done["benchmarking_time_us"] / full, build_penalty(adaptive_csv, full_map, workdir))
    sample_csv = os.path.join(workdir, f"{name}-{share:g}-sample.csv")
    sampled = replay(files, collective, sample_csv, ["--sample", "model", "--budget", budget])
    spent = sampled["benchmarking_time_us"]
    out["sample"] = (spent / full, sampled["sample"]["points_measured"] / sampled["sample"]["points"])
    out["sample_plain"] = build_penalty(sample_csv, full_map, workdir)
    for form in ("hockney", "paper"):
        out[f"sample_{form}"] = build_penalty(sample_csv, full_map, workdir, ("--model", form))
    plain, model, shares = [], [], []
    for seed in range(seeds):
        random_csv = os.path.join(workdir, f"{name}-{share:g}-random{seed}.csv")
        cost, _ = random_sample([r for r in rows if not r.is_default], spent, seed, random_csv)
        shares.append(cost / full)
        plain.append(build_penalty(random_csv, full_map, workdir))
        model.append(build_penalty(random_csv, full_map, workdir, ("--model", "hockney")))
    out["random"] = (float(np.mean(shares)), float(np.mean(plain)), float(np.mean(model)))
    out["full"] = build_penalty_full(files, collective, full_map, workdir, name)
    return out


_FULL = {}


def build_penalty_full(files, collective, full_map, workdir, name):
    """The full sweep's default build (once per data set)."""
    if name not in _FULL:
        full_csv = os.path.join(workdir, f"{name}-full.csv")
        replay(files, collective, full_csv)
        _FULL[name] = build_penalty(full_csv, full_map, workdir)
    return _FULL[name]


def main_(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="random samples per data set and share")
    parser.add_argument("--shares", default="10,25,50", help="budgets, %% of the full sweep's benchmarking time")
    parser.add_argument("--data", default=None, help="comma list of data set names (default: all present)")
    args = parser.parse_args(argv)
    shares = [float(s) for s in args.shares.split(",")]
    wanted = None if args.data is None else set(args.data.split(","))
    print(f"random samples: {args.seeds} seeds (0..{args.seeds - 1}), each of the model sample's cost\n")
    print("| data | budget | full sweep, default build | adaptive: time share / penalty | model sample: time share "
          "(points) | its default build | --model hockney | --model paper | random, same cost: default build | "
          "random: --model hockney |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as workdir:
        for name, collective, files, _ in datasets(held_out=False):
            if wanted is not None and name not in wanted:
                continue
            for share in shares:
                r = evaluate(name, collective, files, share, args.seeds, workdir)
                a_share, a_pen = r["adaptive"]
                s_share, s_points = r["sample"]
                rnd_share, rnd_plain, rnd_model = r["random"]
                print(f"| {name} | {share:g} % | {r['full']:.2f} % | {a_share:.1%} / {a_pen:.2f} % | "
                      f"{s_share:.1%} ({s_points:.0%}) | {r['sample_plain']:.2f} % | {r['sample_hockney']:.2f} % | "
                      f"{r['sample_paper']:.2f} % | {rnd_plain:.2f} % | {rnd_model:.2f} % |", flush=True)


if __name__ == "__main__":
    main_()
