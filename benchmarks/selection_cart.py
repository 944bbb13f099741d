"""Issue 39: quadsel's trees scored through their compiled C, beside CART and simple rules, by one penalty.

usage: python benchmarks/selection_cart.py [--cases SUBSTR,..] [--variants NAME,..] [--splits NAME,..] [--jobs 2]
                                            [--json OUT.json] [--fresh]
       QUADSEL_SHARED: the shared/ folder; QUADSEL_ROOT: a checkout whose quadsel builds the trees (default: this one)

Independent of quadsel's own penalty code: quadsel's readers give the cost cube (ingest + decision_map), and
everything else is here. The rule (issue 39): at a point, penalty = time of the answer / time of the fastest
measured choice there (the library default included) - 1; an answer of "library default" (the C returns 0) is
charged the default's measured time; an answer not measured there, the slowest measured choice's. Mean and max
over the scored points, in %.

quadsel's trees: `quadsel build TRAIN.csv FLAGS` -> `quadsel codegen` -> gcc with a driver that reads (comm, msg)
pairs and prints the id the C returns; ids are mapped back through the C's own "Algorithm ids" comment.
References, trained on the same points with features (log2 comm size, log2 msg size): CART with 16 leaves and the
default as a class; regret-weighted CART (sample weight = the second-best choice's regret); cost-sensitive CART
(a 16-leaf regression tree of the penalty vector, argmin); CART pruned by ccp_alpha chosen by 5-fold CV of the
penalty; the paper's floor rule on the exact training map, the same with the default as a choice, the default.
Splits: all points; every other message size of each communicator size (odd positions, even positions);
every other communicator size (3 sizes or more); the edge sizes (the smallest and largest message size of each
communicator size; the smallest and largest communicator size) held out, the inner ones trained on.
--fresh: 14 other data sets instead, none of which chose a rule of the default build (fresh_cases).
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Optional

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
SHARED = os.environ.get("QUADSEL_SHARED") or os.path.join(ROOT, "..", "shared")
DATA = os.path.join(SHARED, "datasets")
BUILDER = os.environ.get("QUADSEL_ROOT") or ROOT      # whose quadsel builds the trees (another checkout: before/after)
DEFAULT, UNKNOWN = -1, -2                # answers besides a method index
VARIANTS = {"default build": [], "16 leaves": ["--max-leaves", "16"], "exact": ["--max-leaves", "none"],
            "extrapolate": ["--extrapolate"], "paper": ["--paper"]}
REFERENCES = ("CART-16", "CART-16 regret-weighted", "CART-16 cost-sensitive", "CART ccp-CV", "floor",
              "floor + default", "default")
HELD_OUT = ("msg-odd", "msg-even", "comm-odd", "comm-even")
DRIVER = r"""#include <stdio.h>
#include <stddef.h>
int decide(int comm_size, size_t msg_size, int *segsize);
int main(void) { long c; unsigned long long m; int s, a;
  while (scanf("%ld %llu", &c, &m) == 2) { a = decide((int)c, (size_t)m, &s); printf("%d %d\n", a, s); }
  return 0; }
"""


@dataclass
class Cube:
    name: str
    collective: str
    library: Optional[str]
    comm: np.ndarray          # (C,)
    msg: np.ndarray           # (M,)
    methods: list             # [(algorithm, segsize)]
    cost: np.ndarray          # (C, M, K) µs, NaN = not measured
    se: Optional[np.ndarray]  # (C, M, K) standard error or None
    default: np.ndarray       # (C, M) the library default's time, NaN = not measured
    default_se: Optional[np.ndarray] = None
    meta: Optional[str] = None  # the source's .meta.json: the training CSV is read as the source was (measured by quadsel)

    @property
    def choices(self):        # (C, M, K + 1): every method and the default, last
        return np.concatenate([self.cost, self.default[:, :, None]], axis=2)

    @property
    def measured(self):
        return ~np.all(np.isnan(self.choices), axis=2)


def cube_of(name, files, collective=None, library=None):
    from quadsel.decision.decision_map import build_decision_map
    from quadsel.ingest import read_measurements
    d = build_decision_map(read_measurements(files, collective=collective, library=library), collective)
    default = d.default_cost if d.default_cost is not None else np.full(d.shape, np.nan)
    meta = files[0][:-4] + ".meta.json" if len(files) == 1 else None
    return Cube(name, d.collective, d.library, d.comm_sizes, d.msg_sizes, [(m.algorithm, m.segsize) for m in d.methods],
                d.cost, d.cost_se, default, d.default_se, meta if meta and os.path.exists(meta) else None)


# -- scoring: the rule, nothing of quadsel's -------------------------------------------------------------
def penalties(cube, points, answers):
    """Penalty % of each answer (method index, DEFAULT or UNKNOWN) at points [(c, m) indices]."""
    out = []
    for (c, m), a in zip(points, answers):
        times = cube.choices[c, m]
        best, slowest = np.nanmin(times), np.nanmax(times)
        t = times[-1] if a == DEFAULT else times[a] if a >= 0 else np.nan
        out.append((slowest if np.isnan(t) else t) / best * 100.0 - 100.0)
    return np.array(out)


# -- splits: (C, M) masks of the scored points; training = measured & ~test, or all for "all" ------------------
def splits(cube):
    meas = cube.measured
    out = {"all": meas.copy()}
    for parity, name in ((1, "msg-odd"), (0, "msg-even")):
        mask = np.zeros_like(meas)
        for c in range(len(cube.comm)):                       # each communicator size's own message sizes
            cols = np.flatnonzero(meas[c])
            mask[c, cols[parity::2]] = True
        out[name] = mask
    rows = np.flatnonzero(meas.any(axis=1))
    if rows.size >= 3:
        for parity, name in ((1, "comm-odd"), (0, "comm-even")):
            mask = np.zeros_like(meas)
            mask[rows[parity::2]] = True
            out[name] = mask & meas
    edge = np.zeros_like(meas)
    for c in rows:
        cols = np.flatnonzero(meas[c])
        if cols.size >= 3:
            edge[c, [cols[0], cols[-1]]] = True
    out["msg-edge"] = edge
    if rows.size >= 3:
        out["comm-edge"] = np.zeros_like(meas)
        out["comm-edge"][[rows[0], rows[-1]]] = True
        out["comm-edge"] &= meas
    return {k: v for k, v in out.items() if v.any() and (k == "all" or (meas & ~v).any())}


def train_of(cube, split, test):
    return cube.measured if split == "all" else cube.measured & ~test


# -- quadsel through its C -----------------------------------------------------------------------------------------
def write_csv(cube, train, path):
    lines = ["collective,algorithm,segsize,comm_size,msg_size,time_us,stddev_us,reps"]
    for c, m in zip(*np.nonzero(train)):
        rows = [(a, s, cube.cost[c, m, k], None if cube.se is None else cube.se[c, m, k])
                for k, (a, s) in enumerate(cube.methods)]
        rows.append(("default", 0, cube.default[c, m], None if cube.default_se is None else cube.default_se[c, m]))
        for a, s, t, se in rows:
            if not np.isnan(t):
                spread = "" if se is None or np.isnan(se) else f"{se:.6g}"
                lines.append(f"{cube.collective},{a},{s},{cube.comm[c]},{cube.msg[m]},{t:.6g},{spread},"
                             f"{1 if spread else ''}")
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")
    if cube.meta:
        shutil.copyfile(cube.meta, path[:-4] + ".meta.json")


def run(cmd, **kw):
    env = dict(os.environ, PYTHONPATH=BUILDER)      # run from a temporary folder: PYTHONPATH picks the quadsel
    return subprocess.run(cmd, capture_output=True, text=True, env=env, **kw)


def quadsel_answers(cube, train, points, flags, folder):
    """Answers of the C of `quadsel build TRAIN FLAGS` at points, and the tree's leaf count."""
    csv, tree, src, exe = (os.path.join(folder, f) for f in ("train.csv", "t.qt.json", "t.c", "t"))
    write_csv(cube, train, csv)
    lib = ["--library", cube.library] if cube.library else []
    built = run([sys.executable, "-m", "quadsel", "build", csv, *lib, *flags, "-o", tree], cwd=folder)
    if built.returncode:
        raise RuntimeError(built.stderr.strip().splitlines()[-1])
    gen = run([sys.executable, "-m", "quadsel", "codegen", tree, "--name", "decide", "-o", src], cwd=folder)
    if gen.returncode:
        raise RuntimeError(gen.stderr.strip())
    with open(os.path.join(folder, "driver.c"), "w") as out:
        out.write(DRIVER)
    cc = run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O1", "-o", exe, src,
              os.path.join(folder, "driver.c")])
    if cc.returncode:
        raise RuntimeError(cc.stderr)
    text = open(src).read()
    ids = dict(re.findall(r"(\d+) = ([^\s,]+)", re.search(r"Algorithm ids[^:]*:(.*)", text).group(1)))
    leaves = int(re.search(r"(\d+) leaves", text).group(1))
    query = "".join(f"{cube.comm[c]} {cube.msg[m]}\n" for c, m in points)
    out = run([exe], input=query).stdout.split()
    index = {meth: k for k, meth in enumerate(cube.methods)}
    algs = {a for a, _ in cube.methods}
    answers = []
    for alg, seg in zip(out[0::2], out[1::2]):
        if alg == "0":
            answers.append(DEFAULT)
            continue
        label = ids.get(alg, alg)
        label = label if label in algs else alg
        answers.append(index.get((label, int(seg)), UNKNOWN))
    return answers, leaves


# -- references ---------------------------------------------------------------------------------------------------
def features(cube, points):
    return np.array([[np.log2(max(cube.comm[c], 0.5)), np.log2(max(cube.msg[m], 0.5))] for c, m in points])


def pen_matrix(cube, points):
    """(n, K + 1) penalty % of every choice (the default last) at points, unmeasured: the slowest's."""
    out = []
    for c, m in points:
        t = cube.choices[c, m]
        out.append(np.where(np.isnan(t), np.nanmax(t), t) / np.nanmin(t) * 100.0 - 100.0)
    return np.array(out)


def as_answers(k, K):
    return [DEFAULT if int(v) == K else int(v) for v in k]


def cart_answers(kind, cube, train_pts, points):
    from sklearn.model_selection import KFold
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
    X, P = features(cube, train_pts), pen_matrix(cube, train_pts)
    y, K = P.argmin(axis=1), P.shape[1] - 1
    Xq = features(cube, points)
    if kind == "CART-16 cost-sensitive":
        model = DecisionTreeRegressor(max_leaf_nodes=16, random_state=0).fit(X, P)
        return as_answers(model.predict(Xq).argmin(axis=1), K)
    weight = None
    if kind == "CART-16 regret-weighted":
        weight = np.maximum(np.sort(P, axis=1)[:, 1], 1e-3)    # what a wrong answer costs here, at least
    if kind == "CART ccp-CV":
        alphas = np.unique(DecisionTreeClassifier(random_state=0).cost_complexity_pruning_path(X, y).ccp_alphas)
        folds = KFold(min(5, len(X)), shuffle=True, random_state=0) if len(X) >= 2 else None
        scores = []
        for alpha in alphas:
            if folds is None:
                scores.append(0.0)
                continue
            loss = []
            for tr, te in folds.split(X):
                fit = DecisionTreeClassifier(ccp_alpha=alpha, random_state=0).fit(X[tr], y[tr])
                loss.extend(P[te, fit.predict(X[te])])
            scores.append(np.mean(loss))
        alpha = alphas[max(i for i, s in enumerate(scores) if s <= min(scores) + 1e-12)]   # ties: the simpler
        return as_answers(DecisionTreeClassifier(ccp_alpha=alpha, random_state=0).fit(X, y).predict(Xq), K)
    model = DecisionTreeClassifier(max_leaf_nodes=16, random_state=0).fit(X, y, sample_weight=weight)
    return as_answers(model.predict(Xq), K)


def floor_answers(kind, cube, train, points):
    """The paper's rule on the exact training map: the communicator size at or below (else the smallest), then
    that row's message size at or below (else its smallest); its fastest forced method (or choice, or default)."""
    if kind == "default":
        return [DEFAULT] * len(points)
    rows = np.flatnonzero(train.any(axis=1))
    out = []
    for c, m in points:
        r = rows[max(0, np.searchsorted(cube.comm[rows], cube.comm[c], side="right") - 1)]
        cols = np.flatnonzero(train[r])
        col = cols[max(0, np.searchsorted(cube.msg[cols], cube.msg[m], side="right") - 1)]
        times = cube.choices[r, col] if kind == "floor + default" else cube.cost[r, col]
        times = np.where(np.isnan(times), np.inf, times)
        k = int(np.argmin(times))
        out.append(DEFAULT if k == len(cube.methods) else k if np.isfinite(times[k]) else UNKNOWN)
    return out


# -- cases ----------------------------------------------------------------------------------------------------------
def cases():
    found = []
    orfeo = os.path.join(DATA, "orfeo-epyc-openmpi4")
    for coll in ("bcast", "reduce"):
        files = sorted(glob.glob(os.path.join(orfeo, f"{coll}_algo*.csv"))) + [os.path.join(orfeo, f"{coll}_default.csv")]
        if os.path.exists(files[-1]):
            found.append(lambda coll=coll, files=files: cube_of(f"orfeo-{coll}", files))
    for folder in sorted(glob.glob(os.path.join(DATA, "pico-public", "pico_*"))):
        found.append(lambda f=folder: cube_of(os.path.basename(f), [os.path.join(f, "all.csv")]))
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.csv"))):
        coll = next((c for c in ("allreduce", "bcast", "reduce") if c in os.path.basename(path)), None)
        found.append(lambda p=path, c=coll: cube_of(os.path.basename(p)[:-4], [p], c))
    from synthetic_maps import layout_cube, piecewise_cube
    found += [lambda: layout_cube(Cube, 8), lambda: piecewise_cube(Cube, 1), lambda: piecewise_cube(Cube, 2)]
    return found


def fresh_cases():
    """The data sets of --fresh: none of them was used to choose a rule of the default build."""
    import glob
    from synthetic_maps import layout_cube, piecewise_cube
    found = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*-run", "*.csv"))):
        coll = next(c for c in ("bcast", "reduce") if c in os.path.basename(path))
        name = os.path.basename(os.path.dirname(path)) + "-" + os.path.basename(path)[:-4]
        found.append(lambda p=path, c=coll, n=name: cube_of(n, [p], c))
    found += [lambda s=seed: piecewise_cube(Cube, s) for seed in range(3, 11)]
    return found + [lambda p=ppn: layout_cube(Cube, p) for ppn in (4, 16)]


# -- one case -------------------------------------------------------------------------------------------------------
def score_case(cube, variants, split_names, jobs):
    """{split: {selector: (mean, max, leaves or None)}}."""
    results = {}
    tasks = []
    for split, test in splits(cube).items():
        if split_names and split not in split_names:
            continue
        train = train_of(cube, split, test)
        points = list(zip(*np.nonzero(test)))
        train_pts = list(zip(*np.nonzero(train)))
        row = results.setdefault(split, {})
        for ref in REFERENCES:
            answers = cart_answers(ref, cube, train_pts, points) if ref.startswith("CART") else \
                floor_answers(ref, cube, train, points)
            p = penalties(cube, points, answers)
            row[ref] = (float(p.mean()), float(p.max()), None)
        for variant in variants:
            tasks.append((split, variant, train, points))

    def one(task):
        split, variant, train, points = task
        with tempfile.TemporaryDirectory() as folder:
            try:
                answers, leaves = quadsel_answers(cube, train, points, VARIANTS[variant], folder)
            except RuntimeError as exc:
                print(f"  {cube.name} {split} {variant}: {exc}", file=sys.stderr)
                return split, variant, (float("nan"), float("nan"), None)
            p = penalties(cube, points, answers)
            return split, variant, (float(p.mean()), float(p.max()), leaves)
    with ThreadPoolExecutor(jobs) as pool:
        for split, variant, value in pool.map(one, tasks):
            results[split]["quadsel " + variant] = value
    return results


def print_case(name, results):
    names = list(next(iter(results.values())))
    order = [n for n in names if n.startswith("quadsel")] + [n for n in names if not n.startswith("quadsel")]
    print(f"\n#### {name}\n\n| selector | " + " | ".join(results) + " |\n|---|" + "---:|" * len(results))
    for n in order:
        cells = []
        for split in results:
            mean, worst, leaves = results[split].get(n, (float("nan"),) * 2 + (None,))
            cells.append(f"{mean:.2f}" + (f" ({leaves})" if leaves and split == "all" else ""))
        print(f"| {n} | " + " | ".join(cells) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", default="", help="substrings of the case names to run (comma-separated)")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--splits", default="")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", help="write every figure here")
    parser.add_argument("--fresh", action="store_true", help="14 data sets no rule of the default build was chosen on")
    args = parser.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    wanted = [c for c in args.cases.split(",") if c]
    split_names = [s for s in args.splits.split(",") if s]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    everything = {}
    for make in (fresh_cases() if args.fresh else cases()):
        cube = make()
        if wanted and not any(w in cube.name for w in wanted):
            continue
        print(f"== {cube.name}: {cube.measured.sum()} points, {len(cube.methods)} methods", file=sys.stderr)
        everything[cube.name] = score_case(cube, variants, split_names, args.jobs)
        print_case(cube.name, everything[cube.name])
        sys.stdout.flush()
    from selection_cart_table import done_when
    print(done_when(everything))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(everything, out, indent=1)


if __name__ == "__main__":
    main()
