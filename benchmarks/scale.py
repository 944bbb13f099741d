"""Build and report at the size of real sweeps: time and peak memory against a pandas baseline (issue 19).

usage: python benchmarks/scale.py [--sizes 250,500,...] [--methods 36] [--timeout 900] [--dir DIR]
                                  [--commands build,exact,paper,report] [--repeat N]

Generates seeded synthetic sweeps of growing size (Open MPI bcast ids 2-7 x segment sizes: 36 methods by
default, 3 % log-normal noise with its standard deviation and repetition count recorded, regions where the
best method changes along both axes), from 250 grid points (10 x 25) up to 28,000 (100 communicator sizes x
280 message sizes; x 36 methods = 1,008,000 rows, 29 MB of CSV). For each sweep it runs, each in its own
process (so that its peak resident memory is its own):

  baseline  pandas: read the CSV, pivot to (point x method) and take the per-point argmin;
  build     quadsel build FILE                      (the default build: leaf budget chosen by held-out folds);
  exact     quadsel build FILE --max-leaves none    (cuts at measured sizes, exact tree);
  paper     quadsel build FILE --paper              (the paper's padded midpoint tree);
  report    quadsel report FILE                     (every tree and comparator on all points).

and prints per command its wall time, peak RSS and both as a ratio to the baseline of the same sweep, then
the growth exponent of each command's time over the sweeps (least-squares slope of log time on log points,
and the slope between the two largest sweeps). A command stopped by --timeout is shown as `>T`. For the
commands that write a tree file it also prints the tree's true penalty: its mean penalty over every point
against the noise-free times the sweep was drawn from (`true_penalty`, computed after the timing), which
says how good the tree is beyond the noise its build saw.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPES = {250: (10, 25), 500: (20, 25), 1000: (20, 50), 2000: (25, 80), 4000: (40, 100), 7000: (50, 140),
          14000: (70, 200), 28000: (100, 280)}
ALGORITHMS = (2, 3, 4, 5, 6, 7)             # Open MPI bcast algorithms that read the segment size
SEGMENTS = (0, 1024, 4096, 16384, 65536, 262144)
COMMANDS = {
    "build": ["build", "{csv}", "-o", "{out}.qt.json"],
    "exact": ["build", "{csv}", "--max-leaves", "none", "-o", "{out}.qt.json"],
    "paper": ["build", "{csv}", "--paper", "-o", "{out}.qt.json"],
    "report": ["report", "{csv}", "-o", "{out}.md"],
}
BASELINE_PATH = None   # a PYTHONPATH entry with pandas for the baseline (main), None when pandas imports
BASELINE = """
import sys, pandas as pd
frame = pd.read_csv(sys.argv[1])
table = frame.pivot_table(index=["comm_size", "msg_size"], columns=["algorithm", "segsize"], values="time_us")
best = table.to_numpy().argmin(axis=1)
print(len(frame), table.shape, int(best.sum()))
"""


def sweep_axes(points):
    rows, cols = SHAPES[points]
    comm = 2 + 3 * np.arange(rows)                                        # 2, 5, 8, ... (up to 299)
    msg = (16 * 1.06 ** np.arange(cols)).astype(np.int64) + np.arange(cols)  # 16 B ... about 200 MB
    return comm, msg


def write_sweep(path, points, n_methods, seed=0):
    """A seeded synthetic sweep: a pipelined-tree cost model per method (tree depth, per-segment overhead,
    bandwidth), so that the best algorithm and segment size change with both sizes; 3 % log-normal noise."""
    rng = np.random.default_rng(seed)
    comm, msg, methods, mean = model_times(points, n_methods)
    alg = np.array([a for a, _ in methods])
    times = mean * rng.lognormal(0.0, 0.03, mean.shape)
    C, M, K = times.shape
    cc, mm, kk = np.meshgrid(np.arange(C), np.arange(M), np.arange(K), indexing="ij")
    alg_col = alg[kk.ravel()]
    seg_col = np.array([s for _, s in methods])[kk.ravel()]
    t = times.ravel()
    with open(path, "w") as out:
        out.write("collective,algorithm,segsize,comm_size,msg_size,time_us,stddev_us,reps\n")
        out.writelines(f"bcast,{a},{s},{c},{m},{x:.4f},{0.03 * x:.4f},20\n"
                       for a, s, c, m, x in zip(alg_col.tolist(), seg_col.tolist(), comm[cc.ravel()].tolist(),
                                                msg[mm.ravel()].tolist(), t.tolist()))
    return C * M * K


def model_times(points, n_methods):
    """(comm sizes, msg sizes, [(algorithm, segsize)], (C, M, K) noise-free times in us) of a sweep."""
    comm, msg = sweep_axes(points)
    methods = [(a, s) for s in SEGMENTS for a in ALGORITHMS][:n_methods]
    p = comm[:, None, None].astype(float)
    b = msg[None, :, None].astype(float)
    alg = np.array([a for a, _ in methods])
    seg = np.array([s for _, s in methods], dtype=float)[None, None, :]
    log_p = np.log2(p + 1)
    depth = {2: (p - 1) / 4 + 1, 3: p, 4: log_p + 1, 5: log_p, 6: log_p, 7: log_p / 2 + 1}
    overhead = {2: 3.0, 3: 2.0, 4: 4.0, 5: 3.0, 6: 2.0, 7: 2.5}
    spread = {2: 1.0, 3: 1.0, 4: 1.2, 5: 2.0, 6: 1.6, 7: 2.5}
    d = np.concatenate([np.broadcast_to(depth[a], (len(comm), 1, 1)) for a in alg], axis=2)
    o = np.array([overhead[a] for a in alg])[None, None, :]
    w = np.array([spread[a] for a in alg])[None, None, :]
    piece = np.where(seg > 0, np.minimum(seg, b), b)           # bytes per step (the whole message unsegmented)
    steps = np.ceil(b / np.maximum(piece, 1)) + d - 1
    mean = steps * (o + piece * 1e-3 * w) * (1 + 0.05 * np.sin(alg[None, None, :] * p / 30 + np.log(b + 1)))
    return comm, msg, methods, mean


def true_penalty(tree, points, n_methods):
    """Mean penalty (%) of a tree file's choices at every point of the sweep against the noise-free times the
    sweep was drawn from (what the measurements estimate): how good the tree really is, noise aside."""
    from quadsel.decision.decision_function import DecisionFunction
    comm, msg, methods, mean = model_times(points, n_methods)
    fn = DecisionFunction.load(tree).size_tree
    index = {(a, s): k for k, (a, s) in enumerate(methods)}
    to_sweep = np.array([index.get((int(m.algorithm), int(m.segsize or 0)), -1) if m.algorithm.isdigit() else -1
                         for m in fn.methods])
    cc, mm = np.meshgrid(np.arange(comm.size), np.arange(msg.size), indexing="ij")
    chosen = to_sweep[fn.choices(comm[cc.ravel()], msg[mm.ravel()])]
    if (chosen < 0).any():
        return None
    best = mean.min(axis=2).ravel()
    return float(((mean.reshape(-1, len(methods))[np.arange(chosen.size), chosen] - best) / best).mean() * 100)


def measure(argv, timeout, repeat=1):
    """(wall seconds, peak RSS MiB, exit status) of one command in a process of its own; None on a timeout.
    `repeat` runs: the least time, the largest peak, the first failure."""
    runs = []
    for _ in range(max(repeat, 1)):
        got = _measure_once(argv, timeout)
        if got is None or got[2] != 0:
            return got
        runs.append(got)
    return min(r[0] for r in runs), max(r[1] for r in runs), 0


def _measure_once(argv, timeout):
    start = time.perf_counter()
    extra = [BASELINE_PATH] if BASELINE_PATH and "-c" in argv[:2] else []   # pandas for the baseline only
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + extra)))
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            return None
        time.sleep(0.02)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        err = proc.stderr.read().decode(errors="replace").strip().splitlines()
        print(f"  ! {' '.join(argv[2:4])} exited {code}: {err[-1] if err else ''}", file=sys.stderr)
    return wall, usage.ru_maxrss / 1024.0, code


def growth(points, seconds):
    """Least-squares slope of log(time) on log(points), and the slope between the last two."""
    known = [(p, s) for p, s in zip(points, seconds) if s is not None]
    if len(known) < 2:
        return None, None
    x, y = np.log([p for p, _ in known]), np.log([s for _, s in known])
    slope = float(np.polyfit(x, y, 1)[0])
    last = float((y[-1] - y[-2]) / (x[-1] - x[-2]))
    return slope, last


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SHAPES)), help="grid points of each sweep")
    parser.add_argument("--methods", type=int, default=36, help="methods per sweep (at most 36)")
    parser.add_argument("--commands", default=",".join(COMMANDS))
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per command before it is stopped")
    parser.add_argument("--dir", default=None, help="where the sweeps are written (default: a temporary folder)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each command (and of the baseline): the least time and the largest peak memory "
                             "are shown (a 2-core VM's timings move by 10 %% from run to run)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    commands = [c for c in args.commands.split(",") if c]
    folder = args.dir or tempfile.mkdtemp(prefix="quadsel-scale-")
    os.makedirs(folder, exist_ok=True)
    print(f"# load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs; "
          f"{args.methods} methods; timeout {args.timeout:g} s; {args.repeat} run(s) of each command (least time, "
          f"largest peak)", flush=True)
    print("| points | rows | CSV MB | command | time s | x baseline | peak MiB | x baseline | true penalty % |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|---:|", flush=True)
    global BASELINE_PATH
    from layouts import pandas_path     # benchmarks/layouts.py: pandas installed into a cache when it is absent
    BASELINE_PATH = pandas_path(folder)
    times = {c: [] for c in ["baseline"] + commands}
    for points in sizes:
        csv = os.path.join(folder, f"sweep-{points}-{args.methods}.csv")
        if not os.path.exists(csv):
            write_sweep(csv, points, args.methods)
        rows = SHAPES[points][0] * SHAPES[points][1] * args.methods
        mb = os.path.getsize(csv) / 1e6
        base = measure([sys.executable, "-c", BASELINE, csv], args.timeout, args.repeat)
        times["baseline"].append(base[0] if base else None)
        print(f"| {points} | {rows} | {mb:.1f} | pandas read + pivot + argmin | {base[0]:.2f} | 1 | "
              f"{base[1]:.0f} | 1 | - |", flush=True)
        for name in commands:
            out = os.path.join(folder, f"out-{name}")
            argv = [sys.executable, "-m", "quadsel"] + [a.format(csv=csv, out=out) for a in COMMANDS[name]]
            got = measure(argv, args.timeout, args.repeat)
            if got is None:
                times[name].append(None)
                print(f"| {points} | {rows} | {mb:.1f} | {name} | >{args.timeout:g} | >{args.timeout / base[0]:.1f} "
                      f"| - | - | - |", flush=True)
                continue
            wall, rss, code = got
            times[name].append(wall if code == 0 else None)
            truth = true_penalty(out + ".qt.json", points, args.methods) if code == 0 and \
                COMMANDS[name][-1].endswith(".qt.json") else None      # a tree file: scored after the timing
            print(f"| {points} | {rows} | {mb:.1f} | {name}{'' if code == 0 else f' (exit {code})'} | {wall:.2f} | "
                  f"{wall / base[0]:.1f} | {rss:.0f} | {rss / base[1]:.2f} | "
                  f"{'-' if truth is None else f'{truth:.3f}'} |", flush=True)
    print()
    print("| command | growth exponent (fit over all sweeps) | between the two largest |")
    print("|---|---:|---:|")
    for name, seconds in times.items():
        slope, last = growth(sizes, seconds)
        show = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
        print(f"| {name} | {show(slope)} | {show(last)} |")
    print(f"\n# load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
