"""How `report`'s penalty of the library default relates to `verify`'s speed-up over it (docs/report.md).

The report's `default` row is the mean over points of (T_default - T_best) / T_best, against the best *measured*
choice at each point (the default included, so it is 0 where the default is the fastest) -- an arithmetic mean of
percentages, relative to a best that no rule reaches exactly.
`quadsel verify` measures something else: the geometric mean over points of T_default / T_selected, the
selected method being the tree's. This module computes that figure from the measurements, so the two can be
compared: it is what verify would report if the machine behaved as when it was measured.
"""

import numpy as np

from .. import speedup


def speedup_over_default(dmap, choice, penalty_of_default):
    """{points, geomean, lowest, highest, faster, default_penalty_mean} of a rule's choice against the measured
    default, or None when the data has no default. `choice`: (C, M) indices into dmap.methods (-2: the default
    itself, speed-up 1; -1 or unmeasured: left out)."""
    if dmap.default_cost is None:
        return None
    k = np.maximum(np.asarray(choice), 0)
    chosen = np.take_along_axis(dmap.cost, k[:, :, None], axis=2)[:, :, 0]
    chosen = np.where(np.asarray(choice) == -2, dmap.default_cost, np.where(np.asarray(choice) < 0, np.nan, chosen))
    ok = dmap.measured & ~np.isnan(chosen) & ~np.isnan(dmap.default_cost)
    if not ok.any():
        return None
    changed = ok & (np.asarray(choice) != -2)     # the points where the tree is not the default itself
    ratio = dmap.default_cost[changed] / chosen[changed]
    pen = penalty_of_default[dmap.measured & ~np.isnan(penalty_of_default)]
    if not ratio.size:
        return {"points": 0, "all_points": int(ok.sum()), "geomean": 1.0, "lowest": 1.0, "highest": 1.0,
                "faster": 0, "default_penalty_mean": float(pen.mean()) if pen.size else None}
    return {"points": int(ratio.size), "all_points": int(ok.sum()), "geomean": speedup.geomean(ratio.tolist()),
            "lowest": float(ratio.min()), "highest": float(ratio.max()), "faster": int((ratio > 1).sum()),
            "default_penalty_mean": float(pen.mean()) if pen.size else None}


def lines(name, figures):
    """The report's paragraph on the default build against the library default."""
    if figures is None:
        return []
    f = figures
    return ["", f"Against the library default (what `quadsel verify` measures): on the {f['points']} of the "
            f"{f['all_points']} measured points where the default was measured that {name} changes, it is "
            f"{f['geomean']:.2f}x as fast as the default (quadsel's one estimator, as verify and tune print it: the "
            f"geometric mean of T_default / T_tree, trimmed; per point {f['lowest']:.2f}x to {f['highest']:.2f}x; "
            f"faster at {f['faster']}). "
            f"The `default` row's {f['default_penalty_mean']:.2f} % is another quantity: the arithmetic mean of "
            "(T_default - T_best) / T_best against the best measured choice at each point, which a few points where "
            "the default is several times slower dominate, and whose best -- the fastest of many methods each "
            "timed once -- is biased low (the winner's curse). verify re-times the tree's method and the default "
            "interleaved, on the real MPI, at its own points, and reports the geometric mean with its interval: "
            "expect about the figure above on a machine that behaves as when it was measured, less where the "
            "measurement's winners were noise (docs/report.md)."]
