"""Tables 1–2: statistics and penalty of every restricted quadtree against the exact one (§4.2)."""

import csv
import io
import json
import math

import numpy as np

from .decision_function import build_decision_function
from .padding import padded_size
from .penalty import default_penalty_grid, penalty_grid, summarize

ROW_KEYS = ("constraint", "depth_min", "depth_max", "depth_mean", "penalty_min", "penalty_max",
            "penalty_mean", "penalty_median", "leaves", "nodes")
DEFAULT_THRESHOLDS = tuple(round(0.1 * i, 1) for i in range(1, 11))


def tree_row(fn, dmap):
    row = {"constraint": fn.constraint, "method": "quadtree"}
    row.update(fn.tree.stats())
    row.update(summarize(penalty_grid(dmap, fn.choice_grid()), dmap).to_json())
    row["size"] = row["leaves"]
    return row


def default_row(dmap):
    grid = default_penalty_grid(dmap)
    if grid is None:
        return None
    row = {"constraint": "default", "method": "default", "depth_min": None, "depth_max": None, "depth_mean": None,
           "leaves": None, "nodes": None, "size": None}
    row.update(summarize(grid, dmap).to_json())
    return row


def penalty_table(dmap, pad_mode="spread", thresholds=DEFAULT_THRESHOLDS):
    """Rows for max depth 1..k (k = log2 of the padded side), the exact tree, a threshold sweep, the default."""
    k = int(math.log2(padded_size(*dmap.shape)))
    rows = [tree_row(build_decision_function(dmap, max_depth=d, pad_mode=pad_mode), dmap) for d in range(1, k + 1)]
    rows.append(tree_row(build_decision_function(dmap, pad_mode=pad_mode), dmap))
    rows += [tree_row(build_decision_function(dmap, accuracy_threshold=t, pad_mode=pad_mode), dmap)
             for t in thresholds if t < 1.0]
    baseline = default_row(dmap)
    if baseline is not None:
        rows.append(baseline)
    return rows


def _cell(value, digits=2):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def to_markdown(rows, title=None):
    header = ["Constraint", "Depth max", "Depth min", "Depth mean", "Penalty min %", "Penalty max %",
              "Penalty mean %", "Penalty median %", "Leaves", "Nodes"]
    keys = ["constraint", "depth_max", "depth_min", "depth_mean", "penalty_min", "penalty_max", "penalty_mean",
            "penalty_median", "leaves", "nodes"]
    lines = [f"### {title}", ""] if title else []
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
    for row in rows:
        lines.append("| " + " | ".join(_cell(row.get(k)) for k in keys) + " |")
    return "\n".join(lines) + "\n"


def _json_value(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return None if math.isnan(value) else float(value)
    return value


def to_json(rows, meta=None):
    payload = {"rows": [{k: _json_value(v) for k, v in row.items()} for row in rows]}
    if meta:
        payload.update(meta)
    return json.dumps(payload, indent=1) + "\n"


def to_csv(rows):
    keys = list(ROW_KEYS) + [k for k in rows[0] if k not in ROW_KEYS] if rows else list(ROW_KEYS)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=keys, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if _json_value(row.get(k)) is None else _json_value(row.get(k)) for k in keys})
    return buffer.getvalue()
