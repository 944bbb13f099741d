"""Extrapolating up to a bound: how far past the measured range a side's extrapolation holds (issue 39).

The folds that decide each side of the measured range (library_default.best_hand_back) hold out every other
size, so every point they score beyond a fold tree's range lies one step past it: in the ratio of the two end
sizes of that axis. That is all they say of a side they extrapolate. Each such side is therefore tried two steps
out: a tree of the chosen budget is trained without the two end sizes of the axis at that side (each
communicator size's own two end message sizes on the message axis) and scored at the outer one, against the
library default there, as the folds score a side.

- It still wins there (a positive mean gain over the default, and above the largest communicator size at more
  than MAJORITY of those points, as the folds ask there): the side is extrapolated without a bound.
- It does not: the side is extrapolated one step -- as far as the folds looked -- and handed back beyond
  (`BuildOptions.outside_reach`): above the largest size L past L times the step the folds took there, below the
  smallest S under S divided by it (`bound`); the step is the largest ratio of the two end sizes of one line of the
  axis (`end_step`: L / P on a full grid; on a ragged grid each communicator size's own message sizes, whose union
  can hold end sizes much closer together). The axis' outside cell then starts at the bound (decision/grid.py).
- No evidence (fewer than REACH_SIZES sizes on the axis, or no point where the default was measured): the side
  stays extrapolated, as the folds chose.

Asked for with `quadsel build --bound-extrapolation` (builder's bound_outside) only: on the 14 data sets of the
benchmarks the bounded sides lost held out two steps out (9.56 against 8.62 %, benchmarks/selection_outside.py
--reach), so the default build does not bound. docs/methodology.md, "Extrapolating up to a bound", records the
rule, the rules tried beside it and the figures.
"""

import numpy as np

from .options import SIDES

REACH_SIZES = 4      # an axis needs this many sizes: two held out at the side, two left to train on


def _side_masks(dmap, side):
    """(held-out mask, outer mask) of a side's two-step test: the two end sizes of the axis at `side` (on the
    message axis each communicator size's own, rows with fewer than REACH_SIZES left alone), and the outermost of
    them; None without enough sizes."""
    measured = dmap.measured
    held, outer = np.zeros(dmap.shape, dtype=bool), np.zeros(dmap.shape, dtype=bool)
    end = slice(-2, None) if side.endswith("above") else slice(0, 2)
    tip = -1 if side.endswith("above") else 0
    if side.startswith("comm"):
        rows = np.flatnonzero(measured.any(axis=1))
        if rows.size < REACH_SIZES:
            return None
        held[rows[end]] = True
        outer[rows[tip]] = True
    else:
        for row in range(dmap.shape[0]):
            cols = np.flatnonzero(measured[row])
            if cols.size >= REACH_SIZES:
                held[row, cols[end]] = True
                outer[row, cols[tip]] = True
    held &= measured
    outer &= measured
    if not outer.any() or not (measured & ~held).any():
        return None
    return held, outer


def two_steps(dmap, trees, budget, side, cube):
    """{gain, se, points, wins, losses, one_step_gain} of a tree of `budget` trained without the two end sizes at
    `side`, at the outer one: the library default's mean penalty less the tree's there and its standard error, how
    many points were scored, won and lost, and the same gain at the inner held-out size (one step out); None
    without evidence. `trees(train_map, budgets)`: the decision functions of those budgets (builder's
    budget_stream, extrapolating); `cube`: size.scoring_cube of dmap."""
    from .decision_map import training_map
    from .library_default import fold_points
    masks = _side_masks(dmap, side)
    if masks is None:
        return None
    held, outer = masks
    fn = next(iter(trees(training_map(dmap, held), [budget])))
    tree, default, _ = fold_points(dmap, fn, outer, cube)
    if not tree.size:
        return None
    diff = default - tree
    inner_tree, inner_default, _ = fold_points(dmap, fn, held & ~outer, cube)
    return {"gain": round(float(diff.mean()), 4),
            "se": round(float(diff.std(ddof=1) / np.sqrt(diff.size)), 4) if diff.size > 1 else None,
            "points": int(tree.size), "wins": int(np.count_nonzero(tree < default - 1e-9)),
            "losses": int(np.count_nonzero(tree > default + 1e-9)),
            "one_step_gain": round(float(np.mean(inner_default - inner_tree)), 4) if inner_tree.size else None}


def holds(record, side):
    """The extrapolation holds two steps out (`record`: two_steps'): its gain over the default there is positive,
    and above the largest communicator size it wins at more than MAJORITY of those points (as the folds ask)."""
    from .library_default import MAJORITY, MAJORITY_SIDES
    return record["gain"] > 1e-9 and (side not in MAJORITY_SIDES or record["wins"] > MAJORITY * record["points"])


def end_step(dmap, side):
    """The largest ratio between the two end sizes at `side` of one line of the axis: the communicator sizes, or each
    communicator size's own message sizes (on a ragged grid the union's end sizes can lie much closer together than
    any row's: bytes per rank differ by size)."""
    measured = dmap.measured
    if side.startswith("comm"):
        lines = [dmap.comm_sizes[measured.any(axis=1)]]
    else:
        lines = [dmap.msg_sizes[measured[row]] for row in range(dmap.shape[0])]
    steps = [(int(v[-1]) / int(v[-2]) if side.endswith("above") else int(v[1]) / int(v[0]))
             for v in lines if len(v) >= 2 and int(v[-2 if side.endswith("above") else 0]) > 0]
    return max(steps) if steps else None


def bound(values, side, least=1, step=None):
    """The bound one step past the measured range at `side` (values: the axis' measured sizes, increasing): the
    sizes up to L * L / P above it and down to S * S / S' below it are extrapolated -- the folds looked that far,
    one measured step in the ratio of the two end sizes -- and the sizes past them handed back: from
    floor(L * L / P) + 1 on, below ceil(S * S / S'). `step` (end_step): that ratio, L / P or S' / S, from the axis'
    lines instead. None when that leaves no size to hand back below (a bound under `least`: 2 communicator sizes,
    1 message size)."""
    values = [int(v) for v in values]
    if side.endswith("above"):
        last, prev = values[-1], values[-2]
        if step is not None:
            return int(last * step) + 1
        return last * last // prev + 1 if prev > 0 else None
    first, nxt = values[0], values[1]
    low = -(-first * first // nxt) if step is None else int(-(-first // step))
    return low if least <= low < first else None


def reach_of(dmap, trees, budget, sides):
    """({side: bound} for the `sides` (those the folds extrapolate) whose extrapolation does not hold two steps
    out, {side: two_steps record} of every side tried). A bound past the axis' largest size (grid.COMM_TOP,
    MSG_TOP) is no bound."""
    from .decision_map import penalty_cube
    from .grid import COMM_TOP, MSG_TOP
    from .size import scoring_cube
    if dmap.default_cost is None or not sides:
        return {}, {}
    cube = scoring_cube(penalty_cube(dmap), dmap)
    bounds, records = {}, {}
    for side in (s for s in SIDES if s in sides):
        record = two_steps(dmap, trees, budget, side, cube)
        if record is None:
            continue
        records[side] = record
        if holds(record, side):
            continue
        axis = side.split("_")[0]
        size = bound(dmap.comm_sizes if axis == "comm" else dmap.msg_sizes, side, 2 if axis == "comm" else 1,
                     end_step(dmap, side))
        if size is not None and (side.endswith("below") or size <= (COMM_TOP if axis == "comm" else MSG_TOP)):
            bounds[side] = int(size)
    return bounds, records
