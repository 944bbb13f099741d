"""The example sweeps in examples/ are complete grids with their metadata (no MPI needed)."""

import csv
import json
from pathlib import Path

import pytest

from quadsel.ingest.table import GENERIC_COLUMNS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SWEEPS = ["ompi5-bcast", "ompi5-reduce", "mpich5-bcast"]


@pytest.mark.parametrize("name", SWEEPS)
def test_example_is_a_complete_grid_with_metadata(name):
    meta = json.loads((EXAMPLES / f"{name}.meta.json").read_text())
    with open(EXAMPLES / f"{name}.csv", newline="") as handle:
        reader = csv.reader(handle)
        assert tuple(next(reader)) == GENERIC_COLUMNS
        rows = list(reader)
    keys = [tuple(r[:5]) for r in rows]
    assert len(keys) == len(set(keys)) == meta["grid"]["points"]      # every point exactly once
    grid = meta["grid"]
    expected = {(meta["collective"], *m.rsplit(":", 1), str(n), str(s))
                for m in grid["methods"] for n in grid["comm_sizes"] for s in grid["msg_sizes"]}
    assert set(keys) == expected
    assert all(float(r[5]) > 0 and int(r[7]) >= 2 for r in rows)
    assert meta["complete"] and meta["forcing"] == "mpit" and meta["thread_level"] == "multiple"
    assert meta["library"] == ("mpich" if name.startswith("mpich") else "openmpi")
    assert meta["hostnames"] and meta["ranks_per_node"] and "quadsel.measure" in meta["command"]
    # one host: --timing auto chose the span on the shared clock (local timing was fooled by barrier skew)
    assert meta["methodology"]["timing"] == "span" and meta["methodology"]["timing_requested"] == "auto"
    assert len(meta["hostnames"]) == 1
