"""Open MPI 5.0.x follows quadsel's coll/han + coll/tuned files per layout, on the namespace cluster (2 hosts x 2
ranks: 4 ranks on 2 cores, oversubscribed; no timing is read here).

A layout forest whose 2x2 layout wants bcast scatter_allgather (8) and whose one-node layouts want binomial (6) is
written as `-t ompi-han` + `-t ompi-rules`. One job bcasts on three communicators: MPI_COMM_WORLD (2 nodes x 2),
a node's shared-memory communicator (1 x 2, which coll/han never takes) and one rank of each node (2 x 1). The
preloaded function probe (quadsel.verify.probe) names the coll/base algorithm that ran; it must be the one
`ompi_han.decide` reads from the two files. With the coll/han file dropped (its first configuration size made 2,
which Open MPI rejects as a whole), MPI_COMM_WORLD runs coll/han's own hierarchical bcast instead, so the same
check fails: the test proves the file is followed, not only parsed."""

import json
import os

import pytest

from netns_helpers import job_env, library_python, needs_netns
from quadsel.decision.builder import build_size_tree
from quadsel.decision.layouts import build_from_groups, layout_groups
from quadsel.ingest.table import Measurement
from quadsel.libraries import openmpi
from quadsel.targets import emit, ompi_han, ompi_rules

pytestmark = needs_netns
LAYOUTS = {"world": (2, 2), "node": (1, 2), "across": (2, 1)}
MSG = 4096

JOB = r"""
import json, sys
import numpy as np
from mpi4py import MPI
from quadsel.verify.probe import Probe
world = MPI.COMM_WORLD
probe = Probe(world)
node = world.Split_type(MPI.COMM_TYPE_SHARED)
across = world.Split(node.Get_rank())
out = {}
for name, comm in (("world", world), ("node", node), ("across", across)):
    buf = np.zeros(int(sys.argv[1]), dtype=np.uint8)
    comm.Barrier()
    before = probe.snapshot()
    comm.Bcast(buf, root=0)
    out[name] = sorted(n for n, c in probe.since(before) if n.startswith("bcast_"))
got = world.gather(out, root=0)
if world.Get_rank() == 0:
    print(json.dumps(got))
"""


def forest():
    """ppn 1 (1x1, 2x1) and ppn 2 (1x2, 2x2): binomial wins everywhere but on 2x2, where scatter_allgather does."""
    rows = []
    for nodes, ppn in ((1, 1), (2, 1), (1, 2), (2, 2)):
        for msg in (1024, 4096, 65536):
            for name in ("6", "8"):
                fast = "8" if (nodes, ppn) == (2, 2) else "6"
                rows.append(Measurement("bcast", name, 0, nodes * ppn, msg, 1.0 if name == fast else 5.0,
                                        source=f"x.csv:{len(rows) + 2}", nodes=nodes, ppn=ppn))
    build = lambda d: build_size_tree(d, outside="extrapolate")  # noqa: E731
    return build_from_groups(layout_groups(rows), "bcast", build)[0]


def run(cluster, python, tmp, han_text, tuned_text):
    from quadsel.verify.probe import environment
    probe_env, why = environment("openmpi", str(tmp), python)
    if probe_env is None:
        pytest.skip(f"no function probe: {why}")
    (tmp / "han.rules").write_text(han_text)
    (tmp / "tuned.rules").write_text(tuned_text)
    (tmp / "job.py").write_text(JOB)
    files = {"OMPI_MCA_coll_han_use_dynamic_file_rules": "1",
             "OMPI_MCA_coll_han_dynamic_rules_filename": str(tmp / "han.rules"),
             "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
             "OMPI_MCA_coll_tuned_dynamic_rules_filename": str(tmp / "tuned.rules")}
    argv, env = cluster.launcher("openmpi", os.path.join(os.path.dirname(python), "mpiexec"), 2)
    forward = [word for name in probe_env for word in ("-x", name)]
    result = cluster.run(1, argv + forward + [python, str(tmp / "job.py"), str(MSG)],
                         env=job_env(dict(env, **files, **probe_env)), timeout=150)
    assert result.returncode == 0, result.stderr[-3000:]
    ranks = json.loads(result.stdout.strip().splitlines()[-1])
    return ranks


def expected(han_text, tuned_text):
    han = ompi_han.read(han_text, "han.rules")
    _, tuned, ignored, _ = ompi_rules.read(tuned_text, "tuned.rules")
    assert ignored is None
    out = {}
    for name, (nodes, ppn) in LAYOUTS.items():
        component, rule = ompi_han.decide(han, tuned.get(openmpi.COLLECTIVE_IDS["bcast"], []), "bcast", nodes,
                                          nodes * ppn, MSG, MSG)
        out[name] = (component, None if component != "tuned" or rule is None
                     else f"bcast_intra_{openmpi.algorithm_name('bcast', str(rule.alg))}")
    return out


def test_open_mpi_follows_the_han_and_tuned_files_per_layout_and_not_without_the_han_file(cluster2, tmp_path):
    python = library_python("openmpi")
    if python is None:
        pytest.skip("no mpi4py on the openmpi wheel in this Python")
    f = forest()
    han_text, tuned_text = emit("ompi-han", [f]), emit("ompi-rules", [f])
    want = expected(han_text, tuned_text)
    assert want == {"world": ("tuned", "bcast_intra_scatter_allgather"), "node": ("tuned", "bcast_intra_binomial"),
                    "across": ("tuned", "bcast_intra_binomial")}
    ranks = run(cluster2, python, tmp_path, han_text, tuned_text)
    for name, (_, function) in want.items():
        for rank, seen in enumerate(ranks):
            assert function in seen[name], (name, rank, seen[name])
            others = {n for n in seen[name] if n != function and n != "bcast_intra_generic"}
            assert not others, (name, rank, seen[name])
    # the same files with coll/han's dropped (first configuration size 2): MPI_COMM_WORLD no longer runs the tree's
    # algorithm, so the check above would fail
    dropped = han_text.replace("1 1 # configuration size 1", "2 1 # configuration size 2")
    assert ompi_han.read(dropped, "han.rules").ignored
    ranks = run(cluster2, python, tmp_path, dropped, tuned_text)
    assert all("bcast_intra_scatter_allgather" not in seen["world"] for seen in ranks), ranks


CHECK = r"""
import json, sys
from quadsel.decision.decision_function import DecisionFunction
from quadsel.targets import ompi_rules
from quadsel.verify import follow, hosts
from quadsel.verify.selection import TreeSelection
forest = DecisionFunction.load(sys.argv[1])
member = forest.at_ppn(2)
with open(sys.argv[2], "w") as handle:
    handle.write(ompi_rules.emit([member]))
with hosts.passing(sys.argv[4]):
    checks = follow.check_follows([TreeSelection(forest, "openmpi")], sys.argv[2], "openmpi", 4, points={"bcast": [(4, 4096, 2, 2)]},
                                  mpiexec=sys.argv[3], han_route=tuple(sys.argv[5].split(",")))
print(json.dumps([[c.status, c.method, c.matches] for c in checks]))
"""


def test_verify_proves_the_deployment_through_coll_hans_routing_file_and_not_without_it(cluster2, tmp_path):
    """verify's follow check of a forest on 2+ nodes (verify/han.py) loads coll/han's routing file with coll/han on,
    as `quadsel tune` deploys: at 2 x 2 bcast goes coll/han -> tuned -> the tuned file's scatter_allgather (follows).
    With a routing file that names every collective coll/han takes but bcast, coll/han keeps bcast in the file launch
    and the check must not say `follows`: it proves the routing file is read, not only the tuned file. (On this
    cluster Open MPI 5.0.x then crashes in coll/han's own bcast under the traffic counter, pml/monitoring, which the
    check reports as a failed launch: verify's rule makes that `unproven`, never deploy.)"""
    from netns_helpers import job_on_hosts
    from quadsel.targets.ompi_han import HAN_5_0
    python, mpiexec, options, env = job_on_hosts(cluster2, "openmpi")
    (tmp_path / "bcast.qt.json").write_text(forest().dumps())
    (tmp_path / "check.py").write_text(CHECK)
    got = {}
    for name, route in (("all", HAN_5_0), ("all but bcast", [c for c in HAN_5_0 if c != "bcast"])):
        argv = [python, str(tmp_path / "check.py"), str(tmp_path / "bcast.qt.json"), str(tmp_path / "tuned.rules"),
                mpiexec, options, ",".join(route)]
        done = cluster2.run(1, argv, env=job_env(env), timeout=200)
        got[name] = (json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else
                     "failed: " + (done.stderr.strip().splitlines() or ["?"])[-1])
    assert got["all"] == [["follows", "8", ["8"]]], got
    without = got["all but bcast"]
    assert (isinstance(without, str) and "fingerprint launch failed" in without) or without[0][0] == "differs", got
