"""Choosing the tree size from the data (`max_leaves="auto"`): the leaf budget that holds up on unseen sizes.

A tree that reproduces every measured point also reproduces its noise, and a tree that is too small misses
real changes of the best method. The budget is chosen the way it will be used -- for sizes the tree has
not seen: four folds each hold out every other message size (odd, then even positions) or every other
communicator size, trees of the candidate budgets (1, 2, 4, ... and the exact tree) are built on the rest,
budget by budget until the mean over the folds stops falling, and each is scored by its mean penalty at the
held-out points. The budget with the least mean over the folds is chosen, the smaller one of equal means
(decision/budget_rule.py has the other rules). docs/methodology.md records the evidence.
"""

import warnings

import numpy as np

from .budget_rule import DEFAULT_RULE, choose, rescaled, rule_of


def folds(dmap, stride=2):
    """(C, M) masks of the held-out points of each fold: every `stride`-th size of an axis, each offset in turn
    (stride 2: odd, then even positions); only axes with 3 or more sizes are cut, and an axis with fewer than
    2 * stride sizes is halved. On the message axis each communicator size's own measured sizes are counted (a
    ragged grid, each communicator size measured at its own message sizes, loses every other size of every row,
    not whole rows); on a full grid that is every other column."""
    out = []
    measured = dmap.measured
    for axis, n in ((1, dmap.shape[1]), (0, dmap.shape[0])):
        if n < 3:
            continue
        step = stride if n >= 2 * stride else 2
        for start in ((1, 0) if step == 2 else range(step)):
            mask = np.zeros(dmap.shape, dtype=bool)
            if axis == 1:
                for row in range(dmap.shape[0]):
                    mask[row, np.flatnonzero(measured[row])[start::step]] = True
            else:
                mask[np.flatnonzero(measured.any(axis=1))[start::step]] = True
            mask &= measured
            if mask.any() and (measured & ~mask).any():
                out.append(mask)
    return out


def held_out_penalty(dmap, fn, test, cube):
    """Mean penalty (%) of a tree built on part of `dmap` at the held-out points `test` (`cube`: dmap's
    decision_map.penalty_cube with the library default, `scoring_cube`)."""
    from .decision_map import DEFAULT_METHOD
    rows, cols = np.nonzero(test)
    index = {m: k for k, m in enumerate(dmap.methods)}
    index[DEFAULT_METHOD] = len(dmap.methods)     # the library default: its own penalty, the worst where unmeasured
    to_full = np.array([index[m] for m in fn.methods], dtype=np.int64)
    chosen = fn.choices(dmap.comm_sizes[rows], dmap.msg_sizes[cols])
    values = cube[rows, cols, to_full[chosen]]
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else 0.0


def scoring_cube(cube, dmap):
    """The penalty cube with the library default as one more method (the worst where it was not measured), and
    a method not measured at a measured point where it was measured elsewhere in its row (a pair an adaptive
    measurement skipped, docs/measure.md) charged by `skipped_estimate`: between two of its measured message sizes
    its time interpolated there instead of the worst measured there, beyond them the larger of the worst measured
    there and its time extrapolated from its nearest measured size. The held-out score of a tree that chooses it
    is then neither the slowest method's nor its own luck (docs/methodology.md, "Pairs a measurement skipped")."""
    worst = np.nanmax(np.where(np.isnan(cube), -np.inf, cube), axis=2)
    if dmap.default_cost is None:
        default = worst
    else:
        best = dmap.reference_cost()
        with np.errstate(invalid="ignore", divide="ignore"):
            default = (dmap.default_cost - best) / best * 100.0
        default = np.where(np.isnan(default), worst, default)
    out = np.concatenate([cube, default[:, :, None]], axis=2)
    between, beyond = skipped_estimate(dmap)
    out = np.where(np.isnan(between), out, between)
    return np.where(np.isnan(beyond), out, np.fmax(out, beyond))


def skipped_estimate(dmap):
    """(between, beyond): (C, M, K + 1) penalty % of every method (and the library default, last) at a measured
    point where it was not measured, NaN elsewhere (measured, filled, or never measured in that communicator size's
    row). `between`: where it was measured at a smaller and a larger message size of the row, its time
    interpolated log-log along the message axis (as decision_map.interpolate_message_axis fills a point) against
    the point's best measured choice. `beyond`: above its largest (below its smallest) measured size s of the row
    -- an adaptive run prunes a method from the size where it falls far behind, often to the row's end -- its time
    at s grown to this size as it grows in the nearest rows that have it at both sizes (`row_growth`), or its ratio
    to the best at s held, whichever is lower (the adaptive plan skips a pair only when each of its predictions puts
    it far behind: the lower one is what the plan itself expected). scoring_cube never charges `beyond` less
    than the worst measured at the point: beyond its sizes nothing says the method runs as it did, but where a run
    measured only the winner and one method beside it the worst measured is ~0, and a tree that chose a pruned
    method there would win by it."""
    from .decision_map import interpolate_message_axis
    default = dmap.default_cost if dmap.default_cost is not None else np.full(dmap.shape, np.nan)
    cost = np.concatenate([dmap.cost, default[:, :, None]], axis=2)
    known = ~np.isnan(cost)
    n = cost.shape[1]
    index = np.arange(n)[None, :, None]
    below = np.maximum.accumulate(np.where(known, index, -1), axis=1)       # its measured size at or below
    above = np.flip(np.minimum.accumulate(np.flip(np.where(known, index, n), axis=1), axis=1), axis=1)
    skipped = ~known & dmap.measured[:, :, None]
    inside = skipped & (below >= 0) & (above < n)
    outside = skipped & ((below >= 0) != (above < n))
    nothing = np.full(cost.shape, np.nan)
    if not skipped.any():
        return nothing, nothing
    best = dmap.reference_cost()[:, :, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        time = np.where(known | inside, interpolate_message_axis(cost, dmap.msg_sizes), np.nan)
        between = np.where(inside, np.maximum((time / best - 1.0) * 100.0, 0.0), np.nan)
        nearest = np.clip(np.where(below >= 0, below, above), 0, n - 1)
        at_nearest = np.take_along_axis(time, nearest, axis=1)
        growth = row_growth(np.log(time), nearest, outside)
        best_there = np.take_along_axis(np.broadcast_to(best, time.shape), nearest, axis=1)
        held = np.fmin(at_nearest / best_there, at_nearest * np.exp(growth) / best)
    return between, np.where(outside, np.maximum((held - 1.0) * 100.0, 0.0), np.nan)


def row_growth(log_time, nearest, wanted):
    """(C, M, K) how much a method's log time grows from message size index `nearest` to each size in the nearest
    communicator sizes (rows) that have it at both (`log_time`: measured or interpolated within the row's measured
    sizes; the mean of the two rows at equal distance): the adaptive plan's "its growth at comm size" prediction.
    NaN where no row has both; computed where `wanted`."""
    growth = np.full(log_time.shape, np.nan)
    methods = np.flatnonzero(wanted.any(axis=(0, 1)))    # only the methods some point wants: a few of dozens
    if methods.size == 0:
        return growth
    growth[:, :, methods] = _row_growth(log_time[:, :, methods], nearest[:, :, methods], wanted[:, :, methods])
    return growth


def _row_growth(log_time, nearest, wanted):
    rows = log_time.shape[0]
    growth = np.full(log_time.shape, np.nan)
    for distance in range(1, rows):
        if not np.isnan(growth[wanted]).any():
            break
        found = []
        for shift in (distance, -distance):
            other = np.full(log_time.shape, np.nan)
            if shift > 0:
                other[:-shift] = log_time[shift:]
            else:
                other[-shift:] = log_time[:shift]
            found.append(other - np.take_along_axis(other, nearest, axis=1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)     # neither row has both sizes
            step = np.nanmean(np.stack(found), axis=0)
        growth = np.where(np.isnan(growth) & wanted, step, growth)
    return growth


class Ladder:
    """The candidate budgets: 1, 2, 4, ... below the exact tree's leaf count, then the exact tree (None), each
    made when first asked for (`more_than(n)`: the exact tree has more than n leaves -- split.ExactLeaves
    walks that tree only as far as the ladder climbs). Iterable any number of times."""

    def __init__(self, more_than):
        self._more_than, self._made = more_than, []

    def __iter__(self):
        i = 0
        while True:
            if i == len(self._made):
                self._made.append(1 << i if self._more_than(1 << i) else None)
            yield self._made[i]
            if self._made[i] is None:
                return
            i += 1


PATIENCE = 2       # budgets in a row that do not lower the best mean by more than LOWER of it...
LOWER = 0.01
PATIENT_FROM = 64  # ...from this budget on: the larger ones are not grown


def fold_scores(dmap, trees, budgets, stride=2, tests=None, sides=None, handed=None, cube=None):
    """{budget: [held-out mean penalty of each fold]}: `trees(train_map, budgets)` gives the decision
    function of each budget of one training map in turn (decision_function.budget_stream). The folds go
    together, budget by budget (1, 2, 4, ...); once PATIENCE budgets in a row have not lowered the best mean
    over the folds by more than LOWER (1 %) of it (early stopping's "min delta"), the curve has turned and
    the larger budgets are not grown, nor the exact tree (None) scored; the choice is still the best of the
    budgets scored -- growing the folds' trees to thousands of leaves was most of the build's time on large sweeps
    (docs/methodology.md, "The leaf budget"). `sides` (library_default.SIDES): the sides of the measured range
    the outside rule decides; each budget is then scored with the best of handing them back or extrapolating
    there (library_default.best_hand_back), and `handed` ({budget: sides handed back}) records which. `cube`: dmap's
    scoring_cube when the caller has it."""
    from .decision_map import penalty_cube
    from .fold_pool import fold_runner
    from .library_default import best_hand_back, fold_points
    cube = scoring_cube(penalty_cube(dmap), dmap) if cube is None else cube
    tests = folds(dmap, stride) if tests is None else tests
    if sides is None:
        score = lambda fn, test: held_out_penalty(dmap, fn, test, cube)     # noqa: E731
    else:
        score = lambda fn, test: fold_points(dmap, fn, test, cube)          # noqa: E731
    runner = fold_runner(dmap, trees, tests, score, budgets)     # the folds side by side on several cores
    scores, best, stale = {}, float("inf"), 0
    try:
        for budget in budgets:
            if sides is None:
                scores[budget] = runner.records(budget)
            else:
                handed[budget], scores[budget] = best_hand_back(runner.records(budget), sides)
            mean = float(np.mean(scores[budget]))
            stale = 0 if mean < best * (1 - LOWER) - 1e-9 else stale + 1
            best = min(best, mean)
            if stale >= PATIENCE and budget is not None and budget >= PATIENT_FROM:
                break
    finally:
        runner.close()
    return scores


def default_alone(dmap, tests, cube, tree):
    """The default alone held against the folds' tree: {held_out_penalty: the library default's mean penalty over the
    folds `tests` (`cube`: dmap's scoring_cube, the default last) -- what tuning nothing scores there --, tree: the
    tree's mean (`tree`: its penalty per fold), chosen: the folds tell the default's lower beyond the noise -- the
    mean paired difference more than measured_floor.FLOOR_SE standard errors of it, as the measured floor tells
    budgets apart}, or None without a measured default."""
    if dmap.default_cost is None or not tests or not tree:
        return None
    from .measured_floor import FLOOR_SE
    default = np.array([cube[:, :, -1][test].mean() for test in tests])
    diff = np.asarray(tree, dtype=float) - default
    spread = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else np.inf
    return {"held_out_penalty": round(float(default.mean()), 4), "tree": round(float(np.mean(tree)), 4),
            "chosen": bool(diff.mean() > FLOOR_SE * spread + 1e-9)}


def choose_budget(dmap, trees, more_than, rule=DEFAULT_RULE, sides=None):
    """(budget or None for the exact tree, {budget: mean held-out penalty}, floor record or None, sides handed back,
    the default alone against the chosen tree over the same folds (default_alone) or None) for `trees(dmap, budgets)` (the decision functions of every budget of one map, from one growth); `more_than(n)`:
    the exact tree of the map has more than n leaves (Ladder); `rule` cuts the folds and picks the budget from
    their curve (decision/budget_rule.py); on a small grid its measured floor may take a larger budget the folds
    cannot tell from it (decision/measured_floor.py; the record says which and why). `sides`: the sides of the
    measured range whose outside rule the folds decide with the budget (fold_scores); None: not asked."""
    from . import measured_floor
    spec = rule_of(rule)
    small = measured_floor.is_small(dmap) or not spec.small_only
    tests = (spec.loo and small and measured_floor.leave_one_out(dmap)) or folds(dmap, spec.stride)
    if not tests:
        return None, {}, None, sides, None  # (a one-leaf exact tree is still scored: the keep-default variants compare)
    from .decision_map import penalty_cube
    handed, cube = {}, scoring_cube(penalty_cube(dmap), dmap)
    per_fold = fold_scores(dmap, trees, Ladder(more_than), spec.stride, tests, sides, handed, cube)
    budget, means = choose(per_fold, rule)
    if spec.rescale:
        training = np.mean([(dmap.measured & ~test).sum() for test in tests])
        budget = rescaled(budget, dmap.measured.sum() / training, more_than)
    record = None
    if spec.floor is not None and small and budget in per_fold:
        candidates = measured_floor.untold(per_fold, budget, spec.floor_se)
        if len(candidates) > 1:
            measured = {b: held_out_penalty(dmap, fn, dmap.measured, cube)
                        for b, fn in zip(candidates, trees(dmap, candidates))}
            floored = measured_floor.floor_budget(candidates, measured, spec.floor)
            record = {"folds_chose": budget, "built": floored,
                      "measured_penalty": [[b, round(v, 4)] for b, v in measured.items()]}
            budget = floored
    return budget, means, record, handed.get(budget, sides), default_alone(dmap, tests, cube, per_fold.get(budget))


def edge_sides(dmap, trees, budget, sides):
    """The sides to hand back for a tree of a fixed `budget` (None: exact; its options in `trees`): the folds of
    the leaf budget with that one budget, scored as fold_scores scores a side (library_default.best_hand_back)."""
    tests = folds(dmap)
    if not tests or not sides:
        return sides
    handed = {}
    fold_scores(dmap, trees, [budget], tests=tests, sides=sides, handed=handed)
    return handed[budget]
