"""Held-out evaluation: build every selector on part of the measured points, score it on the rest.

The model-based paper (Nuriyev et al. 2022, §2.3) argues that quadtrees "perform poorly on unseen data";
this module measures it. A split leaves out

- `msg`         every other measured message size (odd positions among each communicator size's own measured
                sizes: on a full grid every other column; on a ragged grid, each communicator size measured at its
                own message sizes, never a whole communicator size),
- `comm`        every other measured communicator size (odd positions on the communicator axis),
- `msg-edge`    each communicator size's smallest and largest measured message size (rows of 3 sizes or more),
- `comm-edge`   the smallest and the largest measured communicator size (3 sizes or more),
- `msg-far`     each communicator size's two smallest and two largest measured message sizes (rows of FAR_SIZES sizes
                or more), `comm-far` the two smallest and the two largest communicator sizes (FAR_SIZES or more),
- `random:F`    a random fraction F of the measured points (`random:F:SEED`, seed 0 by default).

The edge splits ask the question of the sizes outside the measured range (issue 39): each held-out size lies
beyond the training map's range, where a tree hands the call back to the library or extrapolates its nearest
measured decision, so the report's rows of both outside rules say what each costs there. The far splits hold
out two sizes at each end, so the outer ones lie two measured steps past the training range: the report adds the
rule of `build --bound-extrapolation` there (decision/reach.py), which differs from extrapolating only that far.

The training decision map is built from the remaining measurements only, so its axes may shrink: a query
for a held-out size then falls to the floor neighbour (the query rule), which is the generalisation tested.
Scoring uses the full data's best method at the held-out points (penalty.py, unchanged).
"""

import re
from dataclasses import dataclass

import numpy as np

from ..decision.decision_map import training_map  # noqa: F401 (the training part of a split)
from ..errors import QuadselError

KINDS = ("msg", "comm", "msg-edge", "comm-edge", "msg-far", "comm-far", "random")
FAR_SIZES = 8       # a far split keeps at least 4 sizes to train on: what a bound's own two-step test needs
_RANDOM = re.compile(r"^random:(\d*\.?\d+)(?::(\d+))?$")


@dataclass(frozen=True)
class Holdout:
    kind: str
    fraction: float = 0.0
    seed: int = 0

    @property
    def name(self):
        if self.kind != "random":
            return self.kind
        return f"random:{self.fraction:g}" + (f":{self.seed}" if self.seed else "")

    def describe(self):
        return {"msg": "every other message size held out",
                "comm": "every other communicator size held out",
                "msg-edge": "each communicator size's smallest and largest message size held out",
                "comm-edge": "the smallest and the largest communicator size held out",
                "msg-far": "each communicator size's two smallest and two largest message sizes held out",
                "comm-far": "the two smallest and the two largest communicator sizes held out",
                "random": f"a random {self.fraction:g} of the measured points held out (seed {self.seed})"}[self.kind]


def parse_holdout(text):
    """'msg', 'comm', 'msg-edge', 'comm-edge', 'msg-far', 'comm-far', 'random:0.25' or 'random:0.25:7' -> Holdout."""
    spec = str(text).strip().lower()
    if spec in KINDS[:-1]:
        return Holdout(spec)
    match = _RANDOM.match(spec)
    if match:
        fraction = float(match.group(1))
        if not 0.0 < fraction < 1.0:
            raise QuadselError(f"--holdout random fraction must be between 0 and 1 (exclusive), got {fraction:g}")
        return Holdout("random", fraction, int(match.group(2) or 0))
    raise QuadselError(f"--holdout expects msg, comm, msg-edge, comm-edge, msg-far, comm-far or random:FRACTION[:SEED]; "
                       f"got {text!r}")


def split(dmap, holdout):
    """(C, M) bool mask of the held-out points (all measured); the training points are measured & ~mask."""
    test = np.zeros(dmap.shape, dtype=bool)
    if holdout.kind == "msg":       # each communicator size's own measured sizes (a ragged grid: not whole rows)
        for row in range(dmap.shape[0]):
            test[row, np.flatnonzero(dmap.measured[row])[1::2]] = True
    elif holdout.kind == "comm":
        test[1::2, :] = True
    elif holdout.kind == "msg-edge":
        for row in range(dmap.shape[0]):
            cols = np.flatnonzero(dmap.measured[row])
            if cols.size >= 3:
                test[row, [cols[0], cols[-1]]] = True
    elif holdout.kind == "comm-edge":
        rows = np.flatnonzero(dmap.measured.any(axis=1))
        if rows.size >= 3:
            test[[rows[0], rows[-1]], :] = True
    elif holdout.kind == "msg-far":
        for row in range(dmap.shape[0]):
            cols = np.flatnonzero(dmap.measured[row])
            if cols.size >= FAR_SIZES:
                test[row, [*cols[:2], *cols[-2:]]] = True
    elif holdout.kind == "comm-far":
        rows = np.flatnonzero(dmap.measured.any(axis=1))
        if rows.size >= FAR_SIZES:
            test[[*rows[:2], *rows[-2:]], :] = True
    else:
        points = np.flatnonzero(dmap.measured.ravel())
        count = min(max(1, round(holdout.fraction * points.size)), points.size - 1)
        chosen = np.random.default_rng(holdout.seed).choice(points, size=max(count, 0), replace=False)
        test.ravel()[chosen] = True
    test &= dmap.measured
    if not test.any():
        raise QuadselError(f"--holdout {holdout.name}: nothing to hold out on a {dmap.shape[0]}x{dmap.shape[1]} map")
    if not (dmap.measured & ~test).any():
        raise QuadselError(f"--holdout {holdout.name}: no measured point left to build on")
    return test
