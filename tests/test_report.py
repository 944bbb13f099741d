import json

import numpy as np

from quadsel import report
from quadsel.decision_map import build_decision_map

from helpers import random_table, table_from_cube

KEYS = {"constraint", "depth_min", "depth_max", "depth_mean", "penalty_min", "penalty_max", "penalty_mean",
        "penalty_median", "leaves", "nodes"}


def test_table_has_depth_rows_exact_sweep_and_default():
    rng = np.random.default_rng(0)
    cost = rng.uniform(1, 10, size=(5, 11, 3))
    default = cost.min(axis=2) * 1.1
    dmap = build_decision_map(table_from_cube(cost, [2, 3, 4, 6, 8], [2 ** i for i in range(11)],
                                              [("1", 0), ("2", 0), ("3", 0)], default=default))
    rows = report.penalty_table(dmap, thresholds=(0.5, 1.0))
    names = [r["constraint"] for r in rows]
    assert names == ["max_depth=1", "max_depth=2", "max_depth=3", "max_depth=4", "exact", "threshold=0.5", "default"]
    by_name = {r["constraint"]: r for r in rows}
    assert by_name["exact"]["penalty_max"] == 0.0
    assert by_name["max_depth=1"]["leaves"] == 4 and by_name["max_depth=1"]["nodes"] == 5
    assert by_name["default"]["penalty_mean"] > 0
    for row in rows[:-1]:
        assert row["nodes"] == 1 + 4 * (row["nodes"] - row["leaves"])


def test_outputs_in_markdown_csv_and_json():
    rows, _, _ = random_table(np.random.default_rng(1), 4, 4, 3)
    table = report.penalty_table(build_decision_map(rows))
    payload = json.loads(report.to_json(table, {"collective": "bcast"}))
    assert all(KEYS <= set(row) for row in payload["rows"])
    md = report.to_markdown(table, "t")
    assert md.count("\n|") == len(table) + 2 and "| exact |" in md
    csv_text = report.to_csv(table)
    assert csv_text.splitlines()[0].startswith("constraint,depth_min,depth_max")
    assert len(csv_text.splitlines()) == len(table) + 1
