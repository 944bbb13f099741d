"""The readings docs/trace.md makes of the recorded traces in examples/traces/ (4 ranks on the 2-core VM)."""

import pytest

from helpers import REPO
from quadsel.trace.breakdown_report import analyses
from quadsel.trace.trace_file import load_trace

TRACES = REPO / "examples" / "traces"


def breakdown(name, select):
    return analyses([(str(TRACES / name), load_trace(str(TRACES / name)))], select)


def test_binomial_bcast_waits_along_the_tree():
    (b,) = breakdown("bcast.json", ["2"])          # 6 (binomial) at 64 KiB
    assert b.config.shape.parents == [-1, 0, 0, 1]
    rows = {r.rank: r for r in b.rows}
    assert rows[1].gate == 3 and rows[1].means["receiver_wait"] == pytest.approx(19.1, abs=0.05)
    assert rows[1].last_departure > 0.95 and rows[1].on_critical_path == 1.0
    assert rows[2].means["sender_wait"] == 0.0            # the root's leaf never waits for its parent
    assert b.critical["paths"][0]["ranks"] == [3, 1]
    assert max(b.rows, key=lambda r: r.means["exit_after_start"]).rank == 1


def test_every_recorded_trace_reads_and_compares():
    for path in sorted(TRACES.glob("*.json")):
        results = analyses([(str(path), load_trace(str(path)))])
        assert results and all(b.span_us > 0 for b in results)
    (ring,) = breakdown("allreduce.json", ["4"])       # ring at 64 KiB: no tree, all ranks alike
    assert ring.config.shape is None and ring.clusters == [[0, 1, 2, 3]]
