"""Shared test helpers: builders of measurement tables and trees (no files needed), MPI discovery."""

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.ingest.table import Measurement

REPO = Path(__file__).resolve().parents[1]


def table_from_cube(cost, comm_sizes, msg_sizes, methods, collective="bcast", default=None):
    """Measurements from a (C, M, K) cost cube (NaN = not measured); methods are (algorithm, segsize)."""
    rows = []
    for ci, comm in enumerate(comm_sizes):
        for mi, msg in enumerate(msg_sizes):
            for k, (alg, seg) in enumerate(methods):
                if not np.isnan(cost[ci, mi, k]):
                    rows.append(Measurement(collective, alg, seg, int(comm), int(msg), float(cost[ci, mi, k])))
            if default is not None:
                rows.append(Measurement(collective, "default", 0, int(comm), int(msg), float(default[ci, mi])))
    return rows


def random_table(rng, n_comm, n_msg, n_methods, names=None, collective="bcast"):
    comm_sizes = np.sort(rng.choice(np.arange(2, 300), size=n_comm, replace=False))
    msg_sizes = np.sort(rng.choice(np.arange(0, 1 << 21), size=n_msg, replace=False))
    names = names or [str(k + 1) for k in range(n_methods)]
    methods = [(names[k % len(names)], 0 if k < len(names) else 1024 * k) for k in range(n_methods)]
    cost = rng.uniform(1.0, 100.0, size=(n_comm, n_msg, n_methods))
    return table_from_cube(cost, comm_sizes, msg_sizes, methods, collective), comm_sizes, msg_sizes


def probe_points(fn):
    """Every grid point, the sizes just below/above each, and sizes outside the measured range."""
    comms = sorted({1, 2, int(fn.comm_sizes[-1]) + 1000} | {int(c) + d for c in fn.comm_sizes for d in (-1, 0, 1) if c + d >= 1})
    msgs = sorted({0, int(fn.msg_sizes[-1]) * 2 + 1} | {int(m) + d for m in fn.msg_sizes for d in (-1, 0, 1) if m + d >= 0})
    return [(c, m) for c in comms for m in msgs]


def random_fn(seed, n_comm, n_msg, n_methods, max_depth, pad_mode="spread", names=None, collective="bcast",
              library_default=False):
    """A random tree; library_default=True: the table also has the library default (random times), the tree keeps
    it where it is not beaten and hands sizes outside the measured range back to it (decision/library_default.py)."""
    rng = np.random.default_rng(seed)
    rows, comm_sizes, msg_sizes = random_table(rng, n_comm, n_msg, n_methods, names=names, collective=collective)
    if not library_default:
        return build_size_tree(build_decision_map(rows, collective), max_depth=max_depth, pad_mode=pad_mode)
    cost = rng.uniform(1.0, 100.0, size=(len(comm_sizes), len(msg_sizes), 1))
    rows = list(rows) + list(table_from_cube(cost, comm_sizes, msg_sizes, [("default", 0)], collective))
    return build_size_tree(build_decision_map(rows, collective), max_depth=max_depth, split="measured",
                                   between="least-bad", leaf_rule="penalty", keep_default=True, outside="default")


# what a test's MPICH `base` (its own selection) chooses, for regions handed back to it
MPICH_BASE = {f"collective={c}": {"comm_type=intra": {f"algorithm=MPIR_{c.capitalize()}_intra_binomial": {}},
                                  "comm_type=inter": {f"algorithm=MPIR_{c.capitalize()}_inter_auto": {}}}
              for c in ("bcast", "reduce", "allreduce")}


OMPI_IDS = {"bcast": ["1", "2", "3", "5", "6", "7"], "reduce": ["1", "2", "4", "5", "6", "7"],
            "allreduce": ["1", "3", "4", "6"]}
MPICH_NAMES = {"bcast": ["binomial", "scatter_ring_allgather", "tree", "pipelined_tree", "smp"],
               "reduce": ["binomial", "reduce_scatter_gather", "smp"], "allreduce": ["recursive_doubling", "ring", "tree"]}
COLL_ID = {"bcast": 7, "reduce": 11, "allreduce": 2}


def ompi_fns(seed, collectives, n_comm=4, n_msg=6, n_methods=4, max_depth=None, library_default=False):
    fns = []
    for i, coll in enumerate(collectives):
        fns.append(random_fn(seed + i, n_comm, n_msg, n_methods, max_depth, names=OMPI_IDS[coll], collective=coll,
                             library_default=library_default))
    return fns


def mpich_fns(seed, collectives, n_comm, n_msg, n_methods, max_depth=None, library_default=False):
    """Random trees over MPICH algorithm names, one per collective."""
    return [random_fn(seed + i, n_comm, n_msg, min(n_methods, len(MPICH_NAMES[c])), max_depth, names=MPICH_NAMES[c],
                      collective=c, library_default=library_default)
            for i, c in enumerate(collectives)]


def tree_choosing(collective, comm_sizes, msg_sizes, choice):
    """A decision function whose method at (comm index, msg index) is choice[ci][mi] = (algorithm, segsize)."""
    methods = sorted({m for row in choice for m in row})
    cost = np.full((len(comm_sizes), len(msg_sizes), len(methods)), 10.0)
    for ci, row in enumerate(choice):
        for mi, method in enumerate(row):
            cost[ci, mi, methods.index(method)] = 1.0
    rows = table_from_cube(cost, comm_sizes, msg_sizes, methods, collective)
    return build_size_tree(build_decision_map(rows, collective))


# -- MPI discovery (real launches are skipped without them) --
def mpi_library(python):
    code = "import mpi4py; mpi4py.rc.initialize = False; from mpi4py import MPI; print(MPI.Get_library_version())"
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, PYTHONPATH=str(REPO))).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return "openmpi" if "Open MPI" in out else "mpich" if "MPICH" in out else None


def mpiexec_beside(python):
    beside = Path(python).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


def run_launcher(cmd, **kwargs):
    """subprocess.run of a test's own mpiexec command line (capture_output, text), made once more when Open MPI's
    launcher failed before starting any rank (launch.LAUNCHER_FLAKE, exit 213: seen in this project's fresh-clone
    runs), as quadsel's own launches do (launch.run)."""
    from quadsel.measure.launch import LAUNCHER_FLAKE
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if done.returncode != 0 and LAUNCHER_FLAKE.decode() in done.stderr:
        done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    return done


def like_a_terminal():
    """preexec_fn of a child that a test interrupts as a terminal's Ctrl-C would: a process group of its own, and
    SIGINT at its default even when the test runs under a shell that ignores it (a background job of a shell
    without job control starts with SIGINT ignored, and a program keeps an ignored SIGINT ignored)."""
    import signal
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def verified_again(out, journal=None):
    """The verify runs tune made: "first", and "pruned" when pruning changed a tree (only those are verified
    again, tune/run.py); the second's collectives are the ones whose trees pruning changed."""
    import json
    journal = journal or json.loads((out / "tune.json").read_text())
    again = (out / "verify" / "pruned.json").exists()
    assert again == ("verify:pruned" in journal["steps"])
    if again:
        first = json.loads((out / "verify" / "first.json").read_text())
        second = json.loads((out / "verify" / "pruned.json").read_text())
        slower = {p["collective"] for p in first["points"] if p["verdict"] == "slower"}
        assert set(second["summary"]) <= slower and set(second["summary"]) <= set(first["summary"])
    return ["first", "pruned"] if again else ["first"]
