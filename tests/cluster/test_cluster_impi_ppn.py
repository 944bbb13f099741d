"""Intel MPI follows the ppn blocks of the tuning file `codegen -t impi-json` writes for a layout forest, across the
2 hosts of the namespace cluster (a real 2 hosts x 2 ranks job; QUADSEL_IMPI_PYTHON): on the layout communicators
2x1 (one rank on each host), 1x2 and 2x2 the allreduce it runs with I_MPI_TUNING has the reduction-order
fingerprint of the preset the forest's member for that ppn names, and not the other member's: a library that
ignored the ppn level (taking the first or the last block everywhere) fails one of them
(docs/cluster.md, "Intel MPI's ppn level")."""

import pytest

from netns_helpers import job_env, library_python, needs_netns
from quadsel.testbed.fingerprints import layout_fingerprints
from quadsel.decision.builder import build_size_tree
from quadsel.decision.layouts import build_from_groups, layout_groups
from quadsel.ingest.table import Measurement
from quadsel.targets import emit

pytestmark = needs_netns
MSGS = (1024, 8192)
WINNER = {1: "8", 2: "3"}       # ppn -> the preset measured fastest on that ppn (presets 3 and 8 differ at 2, 4 ranks)


def forest():
    """A forest of two members: ppn <= 1 (2 nodes x 1) selects preset 8, ppn > 1 (1 x 2, 2 x 2) preset 3."""
    rows = []
    for nodes, ppn in ((2, 1), (1, 2), (2, 2)):
        for m in MSGS:
            for preset in ("3", "7", "8"):
                rows.append(Measurement("allreduce", preset, 0, nodes * ppn, m, 1.0 if preset == WINNER[ppn] else 5.0,
                                        source=f"x.csv:{len(rows) + 2}", nodes=nodes, ppn=ppn))
    built, _ = build_from_groups(layout_groups(rows), "allreduce", lambda d: build_size_tree(d, outside="extrapolate"))
    for member in built.layers:
        member.tree.provenance["library"] = "intelmpi"
    assert [m.ppn for m in built.layers] == [1, 2]
    return built


def test_intel_mpi_runs_each_layouts_ppn_block(make_cluster, tmp_path, monkeypatch):
    python = library_python("intelmpi")
    if python is None:
        pytest.skip("no Python with mpi4py on Intel MPI (QUADSEL_IMPI_PYTHON)")
    monkeypatch.setattr("os.environ", job_env())        # the ranks import this tree's quadsel
    path = tmp_path / "tuning.json"
    path.write_text(emit("impi-json", [forest()]))
    points = [(2, m, "2x1") for m in MSGS] + [(2, m, "1x2") for m in MSGS] + [(4, m, "2x2") for m in MSGS]
    cluster = make_cluster(2)
    forced = {p: layout_fingerprints(cluster, "intelmpi", python, 2, points, env={"I_MPI_ADJUST_ALLREDUCE": p})
              for p in ("3", "8")}
    by_file = layout_fingerprints(cluster, "intelmpi", python, 2, points, env={"I_MPI_TUNING": str(path)})
    for point in points:
        ppn = 1 if point[2] == "2x1" else 2
        want, other = WINNER[ppn], WINNER[3 - ppn]
        assert forced[want][point] != forced[other][point], f"presets 3 and 8 look alike at {point}"
        assert by_file[point] == forced[want][point], f"{point}: Intel MPI did not run the ppn<={ppn} block's {want}"
