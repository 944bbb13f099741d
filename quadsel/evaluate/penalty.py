"""§4.2: performance penalty of a decision against the best measured method.

penalty(point) = (T[chosen] - T[best]) / T[best] × 100 %, T[best] the best measured choice at the point -- the
library default's measured time included (DecisionMap.reference_cost) -- so a penalty is never negative (where
the default beats every forced method, the forced ones pay against it). Over measured points only: never padded copies
(a decision is read at each measured point's own cell) and never filled points (no method measured).
A choice at a point where that method was not measured is charged the worst penalty measured there
(`charged`): it cannot be known to be better, and no rule may gain by choosing methods where they were
not measured (decision_map.penalty_cube). `unscored` counts points that have no value at all (the
library default where it was not measured).
"""

from dataclasses import dataclass

import numpy as np

from ..decision.decision_map import penalty_cube


@dataclass
class PenaltySummary:
    min: float
    max: float
    mean: float
    median: float
    points: int       # measured points scored
    unscored: int     # measured points with no value (a default that was not measured there)
    over_5: int = 0   # scored points with penalty >= 5 % (not white in Fig. 3)
    charged: int = 0  # scored points whose chosen method was not measured there (charged the worst)

    def to_json(self):
        return {"penalty_min": self.min, "penalty_max": self.max, "penalty_mean": self.mean,
                "penalty_median": self.median, "points": self.points, "unscored": self.unscored,
                "points_over_5": self.over_5, "charged": self.charged}


LIBRARY_DEFAULT = -2     # a choice index: the library's own choice (a region handed back to it)


def penalty_grid(dmap, choice, cube=None):
    """(C, M) penalty in % of choosing method index `choice[c, m]` (-1: a method the map does not have, charged
    the worst measured there; LIBRARY_DEFAULT: the measured default's penalty, charged the worst where the
    default was not measured); NaN at filled points. `cube`: penalty_cube(dmap), when the caller has it."""
    cube = penalty_cube(dmap) if cube is None else cube
    choice = np.asarray(choice)
    chosen = np.take_along_axis(cube, np.maximum(choice, 0)[:, :, None], axis=2)[:, :, 0]
    worst = np.nanmax(np.where(np.isnan(cube), -np.inf, cube), axis=2)
    default = default_penalty_grid(dmap)
    default = worst if default is None else np.where(np.isnan(default), worst, default)
    return np.where(choice == LIBRARY_DEFAULT, default, np.where(choice < 0, worst, chosen))


def charged_grid(dmap, choice):
    """(C, M) True where the chosen method was not measured at a measured point (its penalty is charged)."""
    choice = np.asarray(choice)
    chosen = np.take_along_axis(dmap.cost, np.maximum(choice, 0)[:, :, None], axis=2)[:, :, 0]
    default = np.full(choice.shape, np.nan) if dmap.default_cost is None else dmap.default_cost
    chosen = np.where(choice == LIBRARY_DEFAULT, default, chosen)
    return (np.isnan(chosen) | ((choice < 0) & (choice != LIBRARY_DEFAULT))) & dmap.measured


def default_penalty_grid(dmap):
    """(C, M) penalty in % of the library default (rows named 'default'): 0 where it is the best measured choice."""
    if dmap.default_cost is None:
        return None
    return _relative(dmap.default_cost, dmap)


def _relative(chosen_cost, dmap):
    best = dmap.reference_cost()
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (chosen_cost - best) / best * 100.0
    out[dmap.filled] = np.nan
    return out


def pooled_summary(parts):
    """summarize over every measured point of several maps at once: [(penalty grid, dmap, charged grid)]."""
    values = np.concatenate([grid[dmap.measured] for grid, dmap, _ in parts])
    return _summary(values, sum(int(np.count_nonzero(c[d.measured])) for _, d, c in parts))


def summarize(grid, dmap, mask=None, charged=None):
    """Min/max/mean/median of a penalty grid over measured points (optionally only where `mask`)."""
    scope = dmap.measured if mask is None else (dmap.measured & mask)
    return _summary(grid[scope], 0 if charged is None else int(np.count_nonzero(charged[scope])))


def _summary(values, n_charged):
    known = values[~np.isnan(values)]
    if known.size == 0:
        return PenaltySummary(float("nan"), float("nan"), float("nan"), float("nan"), 0, int(values.size))
    return PenaltySummary(float(known.min()), float(known.max()), float(known.mean()), float(np.median(known)),
                          int(known.size), int(values.size - known.size), int(np.count_nonzero(known >= 5.0)),
                          n_charged)
