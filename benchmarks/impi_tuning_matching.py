"""How does Intel MPI match its JSON tuning file (I_MPI_TUNING)? The experiment behind quadsel/targets/impi_json.py.

Each case writes a small allreduce tuning file, launches verify's fingerprint worker with I_MPI_TUNING set
(quadsel.verify.follow), and names the forced presets whose reduction-order fingerprint equals the file
launch's (forced: one launch per preset, I_MPI_ADJUST_ALLREDUCE=ID). Presets 3, 7 and 8 (and the default) are
told apart at most points used here; where two share a fingerprint both are printed ("default/7").

usage: QUADSEL_IMPI_PYTHON=... $QUADSEL_IMPI_PYTHON benchmarks/impi_tuning_matching.py   (about 2 minutes)

--ppn: the ppn level across hosts, on the namespace cluster (root; quadsel.testbed, docs/cluster.md): jobs of
2 hosts x 3 ranks and 2 hosts x 1 rank, the fingerprint taken on layout communicators (2x1 = one rank on each
host, 1x2, 2x2, ..., and uneven ones given as world ranks: "0,1,3" = 2 ranks on node1 + 1 on node2), each file
with one comm_size=-1 and msg_size=-1 entry per ppn block, so that only the ppn level decides (about 40 seconds, as root).
"""

import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quadsel.errors import QuadselError    # noqa: E402
from quadsel.measure import launch          # noqa: E402
from quadsel.verify import follow           # noqa: E402

PRESETS = ("default", "3", "7", "8")
MSGS = (8, 1016, 1024, 1032, 8184, 8192, 8200, 65536)
COMM_MSGS = (1024, 8192)


def tree(ppns):
    """[(ppn, [(comm, [(msg, preset)])])] in file order -> the tuning file's text."""
    return json.dumps({"coll=Allreduce": {f"ppn={p}": {f"comm_size={c}": {"comm_id=-1": {
        f"msg_size={m}": {f"ALLREDUCE={a}": {}} for m, a in msgs}} for c, msgs in comms} for p, comms in ppns}})


def one(m):
    return [(-1, [(-1, m)])]


CASES = [   # (name, ranks, file, communicator sizes, message sizes)
    ("msg: 1024:3, 8192:7, -1:8", 2, [(2, [(2, [(1024, 3), (8192, 7), (-1, 8)])])], [2], MSGS),
    ("msg: 1024:8, 8192:3, -1:7", 2, [(2, [(2, [(1024, 8), (8192, 3), (-1, 7)])])], [2], MSGS),
    ("msg: 1024:3, 8192:7 (no -1)", 2, [(2, [(2, [(1024, 3), (8192, 7)])])], [2], MSGS),
    ("msg: 8192:7, 1024:3, -1:8 (unsorted)", 2, [(2, [(2, [(8192, 7), (1024, 3), (-1, 8)])])], [2], MSGS),
    ("comm: 2:8, 4:7", 4, [(4, [(2, [(-1, 8)]), (4, [(-1, 7)])])], [2, 3, 4], COMM_MSGS),
    ("comm: 2:8, -1:7", 4, [(4, [(2, [(-1, 8)]), (-1, [(-1, 7)])])], [2, 3, 4], COMM_MSGS),
    ("comm: 4:7, 2:8 (unsorted)", 4, [(4, [(4, [(-1, 7)]), (2, [(-1, 8)])])], [2, 3, 4], COMM_MSGS),
    ("comm: -1:7, 2:8 (-1 first)", 4, [(4, [(-1, [(-1, 7)]), (2, [(-1, 8)])])], [2, 3, 4], COMM_MSGS),
    ("ppn: 4 only {2:8, 3:8, 4:7}", 4, [(4, [(2, [(-1, 8)]), (3, [(-1, 8)]), (4, [(-1, 7)])])], [2, 3, 4], COMM_MSGS),
    ("ppn: 2 only {2:8, 3:8, 4:7}", 4, [(2, [(2, [(-1, 8)]), (3, [(-1, 8)]), (4, [(-1, 7)])])], [2, 3, 4], COMM_MSGS),
    ("ppn: 2 {2:3, 3:7, 4:3}, 4 {2:8, 3:8, 4:7}", 4,
     [(2, [(2, [(-1, 3)]), (3, [(-1, 7)]), (4, [(-1, 3)])]), (4, [(2, [(-1, 8)]), (3, [(-1, 8)]), (4, [(-1, 7)])])],
     [2, 3, 4], COMM_MSGS),
    ("ppn: 4 {2:8, 3:8, 4:7}, 2 {2:3, 3:7, 4:3} (unsorted)", 4,
     [(4, [(2, [(-1, 8)]), (3, [(-1, 8)]), (4, [(-1, 7)])]), (2, [(2, [(-1, 3)]), (3, [(-1, 7)]), (4, [(-1, 3)])])],
     [2, 3, 4], COMM_MSGS),
    ("ppn: 1 {2:8, 3:8, 4:7}, 3 {2:3, 3:7, 4:3}", 4,
     [(1, [(2, [(-1, 8)]), (3, [(-1, 8)]), (4, [(-1, 7)])]), (3, [(2, [(-1, 3)]), (3, [(-1, 7)]), (4, [(-1, 3)])])],
     [2, 3, 4], COMM_MSGS),
    ("ppn: 2 {2:3, 3:7, 4:3}, -1 {2:8, 3:8, 4:7}", 4,
     [(2, [(2, [(-1, 3)]), (3, [(-1, 7)]), (4, [(-1, 3)])]), (-1, [(2, [(-1, 8)]), (3, [(-1, 8)]), (4, [(-1, 7)])])],
     [2, 3, 4], COMM_MSGS),
]


# The layouts of a 2 x 3 job (ranks 0-2 on node1, 3-5 on node2): ranks per node of each, and of the uneven ones
PPN_LAYOUTS = {"2x1": 2, "1x2": 2, "1x3": 3, "2x2": 4, "2x3": 6, "0,1,3": 3, "0,3,4": 3, "0,1,2,3": 4,
               "0,3,4,5": 4, "0,1,2,3,4": 5}
PPN_MSGS = (1024, 8192)
PPN_CASES = [   # (name, [(ppn key, preset)] in file order)
    ("ppn: 1:8, 2:3, -1:7", [(1, 8), (2, 3), (-1, 7)]),
    ("ppn: 2:3, 1:8 (unsorted, no -1)", [(2, 3), (1, 8)]),
    ("ppn: 2:3, -1:7", [(2, 3), (-1, 7)]),
    ("ppn: 3:8, -1:3", [(3, 8), (-1, 3)]),
]


def ppn_main():
    """The ppn level across hosts (module docstring, --ppn)."""
    from quadsel.testbed import NetnsCluster
    from quadsel.testbed.fingerprints import layout_fingerprints, presets_that_ran
    python = sys.executable
    jobs = {(2, 3): [(PPN_LAYOUTS[k], m, k) for k in PPN_LAYOUTS for m in PPN_MSGS],
            (2, 1): [(2, m, "2x1") for m in PPN_MSGS]}
    with NetnsCluster(2) as cluster, tempfile.TemporaryDirectory(prefix="quadsel-impi-ppn-") as workdir:
        for (nodes, ppn), points in jobs.items():
            forced = {p: layout_fingerprints(cluster, "intelmpi", python, ppn, points, nodes=nodes,
                                             env={} if p == "default" else {"I_MPI_ADJUST_ALLREDUCE": p})
                      for p in PRESETS}
            for name, blocks in PPN_CASES:
                path = os.path.join(workdir, "tuning.json")
                with open(path, "w") as handle:
                    handle.write(tree([(key, [(-1, [(-1, preset)])]) for key, preset in blocks]))
                got = layout_fingerprints(cluster, "intelmpi", python, ppn, points, nodes=nodes,
                                          env={"I_MPI_TUNING": path})
                ran = presets_that_ran(got, forced)
                shown = " ".join(f"{layout}x{m}B={'/'.join(ran[(n, m, layout)]) or '?'}"
                                 for n, m, layout in points)
                print(f"{name} [{nodes}x{ppn} job]: {shown}", flush=True)


def main():
    if "--ppn" in sys.argv[1:]:
        return ppn_main()
    mpiexec = launch.find_mpiexec()
    launch.library_without_init()
    forced = {}
    with tempfile.TemporaryDirectory(prefix="quadsel-impi-matching-") as workdir:
        for np_, comms, msgs in {(2, (2,), MSGS), (4, (2, 3, 4), COMM_MSGS)}:
            spec = {"collective": "allreduce", "kind": "order", "points": [[n, m] for n in comms for m in msgs]}
            got = follow._forced_by_env(np_, spec, [[p, 0] for p in PRESETS], "intelmpi", sys.executable, mpiexec,
                                        900, workdir)
            forced[np_] = {point: {arm.split("/")[0]: v for arm, v in arms.items()} for point, arms in got.items()}
        for name, np_, ppns, comms, msgs in CASES:
            path = os.path.join(workdir, "tuning.json")
            with open(path, "w") as handle:
                handle.write(tree(ppns))
            spec = {"collective": "allreduce", "kind": "order", "points": [[n, m] for n in comms for m in msgs],
                    "forced": None}
            for attempt in (1, 2):      # a launch now and then fails at start-up on the loaded VM (exit 255)
                try:
                    got = follow._launch(np_, spec, {"I_MPI_TUNING": path}, sys.executable, mpiexec, 900, workdir)
                    break
                except QuadselError:
                    if attempt == 2:
                        raise
            ran = []
            for (n, m), arms in sorted(got.items()):
                same = [p for p, v in forced[np_].get((n, m), {}).items() if v == arms.get("library")]
                ran.append(f"{n}x{m}B={'/'.join(same) or '?'}")
            print(f"{name} [{np_} ranks]: {' '.join(ran)}", flush=True)


if __name__ == "__main__":
    main()
