"""§4.2: performance penalty of a decision against the best measured method.

penalty(point) = (T[chosen] - T[best]) / T[best] × 100 %, over measured points only: never padded copies
(a decision is read at each measured point's own cell) and never filled points (no method measured).
T[chosen] at a point where the chosen method itself was not measured is the message-axis interpolation
of that method's own measurements; where even that is impossible the point is counted as unscored.
"""

from dataclasses import dataclass

import numpy as np


@dataclass
class PenaltySummary:
    min: float
    max: float
    mean: float
    median: float
    points: int       # measured points scored
    unscored: int     # measured points where the chosen method has no cost at all
    over_5: int = 0   # scored points with penalty >= 5 % (not white in Fig. 3)

    def to_json(self):
        return {"penalty_min": self.min, "penalty_max": self.max, "penalty_mean": self.mean,
                "penalty_median": self.median, "points": self.points, "unscored": self.unscored,
                "points_over_5": self.over_5}


def penalty_grid(dmap, choice):
    """(C, M) penalty in % of choosing method index `choice[c, m]`; NaN at filled or unscorable points."""
    chosen = np.take_along_axis(dmap.cost_filled, np.asarray(choice)[:, :, None], axis=2)[:, :, 0]
    return _relative(chosen, dmap)


def default_penalty_grid(dmap):
    """(C, M) penalty in % of the library default (rows named 'default'); may be negative."""
    if dmap.default_cost is None:
        return None
    return _relative(dmap.default_cost, dmap)


def _relative(chosen_cost, dmap):
    out = (chosen_cost - dmap.best_cost()) / dmap.best_cost() * 100.0
    out[dmap.filled] = np.nan
    return out


def summarize(grid, dmap, mask=None):
    """Min/max/mean/median of a penalty grid over measured points (optionally only where `mask`)."""
    scope = dmap.measured if mask is None else (dmap.measured & mask)
    values = grid[scope]
    known = values[~np.isnan(values)]
    if known.size == 0:
        return PenaltySummary(float("nan"), float("nan"), float("nan"), float("nan"), 0, int(values.size))
    return PenaltySummary(float(known.min()), float(known.max()), float(known.mean()), float(np.median(known)),
                          int(known.size), int(values.size - known.size), int(np.count_nonzero(known >= 5.0)))
