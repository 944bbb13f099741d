"""`quadsel measure` across 2 hosts of the namespace cluster (real jobs): layouts 2x1, 1x2 and 2x2 built from the
node groups, nodes/ppn on every row, the clock offsets in the metadata, `quadsel build` makes a layout forest, and a
run killed with SIGKILL resumes without measuring a finished point again. Open MPI under the user's launcher, MPICH
and Intel MPI self-launched with --mpiexec-args. 4 ranks on this machine's 2 cores: oversubscribed, so no time is asserted."""

import csv
import json
import os
import subprocess
import sys

import pytest

from netns_helpers import job_env, kill_when, library_python, needs_netns
from quadsel.testbed import host_options, launcher_command

pytestmark = needs_netns
TIMEOUT = 240
ALGORITHM = {"openmpi": "6", "mpich": "binomial", "intelmpi": "1"}
GRID = ["-c", "bcast", "--segments", "0", "--msg-sizes", "8,1K", "--layouts", "2x1,1x2,2x2", "--min-reps", "3",
        "--max-reps", "6", "--max-time", "0.5", "--warmup", "1", "--rounds", "2", "--quiet", "--hang-timeout", "120"]


def command(cluster, flavor, out):
    """(argv to run on host 1, env): Open MPI under the user's mpiexec; MPICH and Intel MPI (one launch per method:
    its algorithm is read at start-up) self-launched with --mpiexec-args."""
    python = library_python(flavor)
    if python is None:
        pytest.skip(f"no Python with mpi4py on {flavor}")
    mpiexec = os.path.join(os.path.dirname(python), "mpiexec")
    hosts = [h.address for h in cluster.hosts]
    argv, env = launcher_command(flavor, mpiexec, hosts, 2, cluster.agent, cluster.interface,
                                 network=str(cluster.network))
    measure = [python, "-m", "quadsel", "measure", "--algorithms", f"default,{ALGORITHM[flavor]}", *GRID, "-o", out]
    if flavor == "openmpi":
        env["OMPI_MCA_coll"] = "^han"
        return argv + measure, env
    options, env = host_options(flavor, mpiexec, cluster, 2)
    return measure[:4] + ["--np", "4", "--mpiexec", mpiexec, "--mpiexec-args", options] + measure[4:], env


def rows(path):
    with open(path) as handle:
        return [r for r in csv.DictReader(line for line in handle if not line.startswith("#"))]


def key(row):
    return (row["algorithm"], row["nodes"], row["ppn"], row["comm_size"], row["msg_size"])


@pytest.mark.parametrize("flavor", ["openmpi", "mpich", "intelmpi"])
def test_measure_layouts_across_two_hosts_killed_and_resumed(cluster2, flavor, tmp_path):
    out = str(tmp_path / f"{flavor}.csv")
    argv, env = command(cluster2, flavor, out)
    env = job_env(dict(env, QUADSEL_MEASURE_POINT_DELAY="0.4"))
    # first run: SIGKILL to the launcher's whole group once a few rows are written, then whatever is left
    kill_when(cluster2, argv, env, lambda: os.path.exists(out) and len(rows(out)) >= 3, TIMEOUT)
    before = rows(out)
    assert 3 <= len(before) < 12
    with open(out) as handle:
        kept = handle.read()

    result = cluster2.run(1, argv, env=job_env(dict(env, QUADSEL_MEASURE_POINT_DELAY="0")), timeout=TIMEOUT)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    with open(out) as handle:
        text = handle.read()
    assert text.startswith(kept.rsplit("\n", 1)[0])        # the finished rows are kept as they were
    assert text.splitlines()[0] == "collective,algorithm,segsize,nodes,ppn,comm_size,msg_size,time_us,stddev_us,reps"
    after = rows(out)
    keys = [key(r) for r in after]
    assert len(keys) == len(set(keys)) == 12                # every point of every layout exactly once
    assert {(r["nodes"], r["ppn"]) for r in after} == {("2", "1"), ("1", "2"), ("2", "2")}
    assert all(int(r["comm_size"]) == int(r["nodes"]) * int(r["ppn"]) for r in after)

    meta = json.load(open(out[:-4] + ".meta.json"))
    assert meta["complete"] and len(meta["runs"]) >= 2
    assert meta["methodology"]["timing"] == "offset" and meta["methodology"]["sync"] == "start"
    assert {f"{x['nodes']}x{x['ppn']}": x["hosts"] for x in meta["layouts"]} == {
        "2x1": ["node1", "node2"], "1x2": ["node1"], "2x2": ["node1", "node2"]}
    assert [g["host"] for g in meta["node_groups"]] == ["node1", "node2"]
    sync = meta["clock_sync"]
    node2 = sync["hosts"][1]
    # the hosts share one kernel clock: the true offset is 0, so the estimate is its own error (< half the RTT)
    assert abs(node2["offset_us"]) <= node2["min_rtt_us"] / 2 and node2["min_rtt_us"] > 0
    assert "residual_offset_us_at_end" in node2 and sync["start_minus_common_time"]["calls"] > 0

    tree = tmp_path / "tree.json"
    built = subprocess.run([sys.executable, "-m", "quadsel", "build", out, "-o", str(tree)], env=job_env(),
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr[-2000:]
    forest = json.loads(tree.read_text())
    assert forest["format"] == "quadsel-layout-forest"


def test_adaptive_across_two_hosts_one_plan_per_ppn(cluster2, tmp_path):
    """`measure --adaptive` across hosts (sampling/adaptive_run.py): one plan per ppn over its layouts' communicator
    sizes, every row with its nodes/ppn, `# skipped` keys ending in nodes,ppn, the metadata's plans per ppn; the same
    command again answers every pair from the file (nothing measured twice) and `build` makes a layout forest."""
    python = library_python("openmpi")
    if python is None:
        pytest.skip("no Python with mpi4py on openmpi")
    mpiexec = os.path.join(os.path.dirname(python), "mpiexec")
    options, env = host_options("openmpi", mpiexec, cluster2, 2)
    out = str(tmp_path / "bcast.csv")
    argv = [python, "-m", "quadsel", "measure", "--np", "4", "--mpiexec", mpiexec, "--mpiexec-args", options, "-c",
            "bcast", "--algorithms", "1,2,3,6", "--segments", "0", "--msg-sizes", "1K,4K,16K,64K", "--layouts",
            "2x1,1x2,2x2", "--sync", "barrier", "--adaptive", "--max-reps", "6", "--max-time", "0.2", "--quiet",
            "-o", out]
    for run in (1, 2):
        done = cluster2.run(1, argv, env=job_env(env), timeout=TIMEOUT)
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        if run == 1:
            first = open(out).read()
    assert open(out).read().startswith(first) and len(rows(out)) == len([r for r in first.splitlines()
                                                                          if r and not r.startswith("#")]) - 1
    got = rows(out)
    assert {(r["nodes"], r["ppn"], r["comm_size"]) for r in got} == {("2", "1", "2"), ("1", "2", "2"), ("2", "2", "4")}
    assert len({key(r) for r in got}) == len(got)                       # no pair twice
    skipped = [line.split()[2] for line in open(out) if line.startswith("# skipped ")]
    assert all(len(s.split(",")) == 7 for s in skipped), skipped       # ... ,comm,msg,nodes,ppn
    meta = json.load(open(out[:-4] + ".meta.json"))
    plans = meta["adaptive"]["per_ppn"]
    assert set(plans) == {"1", "2"} and meta["adaptive"]["finished"] and meta["complete"]
    assert plans["1"]["comm_sizes_measured"] == [2] and set(plans["2"]["comm_sizes_measured"]) <= {2, 4}
    measured = sum(p["pairs_measured"] for p in plans.values())
    assert measured + sum(p["pairs_skipped"] for p in plans.values()) == 4 * 4 * 3
    forest = str(tmp_path / "bcast.qt.json")
    built = subprocess.run([sys.executable, "-m", "quadsel", "build", out, "-o", forest], capture_output=True,
                           text=True, env=job_env(), timeout=120)
    assert built.returncode == 0, built.stderr
    assert json.load(open(forest))["format"] == "quadsel-layout-forest"
