"""Small grids: when the held-out folds cannot tell leaf budgets apart, the measured points decide.

A grid of a few sizes (3 communicator sizes x 5-8 message sizes, one communicator size x 21 message sizes) gives
the held-out folds training maps of one to three sizes an axis: their curve is flat or ragged, and the rule `min`
(the smaller budget of equal means) then throws the measured structure away -- a one-leaf tree 45 % worse than
the best at a measured point. On such a grid (fewer than SMALL_POINTS measured points) the budget the folds
chose is only a lower bound: among it and the larger budgets whose per-fold penalties are not worse by more than
FLOOR_SE standard errors of the paired differences (the folds cannot tell them apart), the smallest whose mean
penalty on the measured points is within FLOOR_POINTS of the least of theirs is built. On larger grids nothing
changes. Evidence and the variants measured: benchmarks/small_grids.py, docs/methodology.md ("Small grids").

`loss_warning` is the one line `quadsel build` prints when its tree loses more than WARN_PERCENT at a measured
point, whatever the grid.
"""

import numpy as np

SMALL_POINTS = 64       # a grid of fewer measured points is small (the largest held-out training map of
                        # selection.py's sweeps that the floor would move, mpich5-bcast's 7 x 10, has 70)
FLOOR_SE = 2.0          # "cannot tell apart": mean paired difference <= this many of its standard errors
FLOOR_POINTS = 2.0      # within this many points of the least measured penalty of those budgets
WARN_PERCENT = 25.0     # build warns when its tree loses more than this at one measured point


def is_small(dmap):
    return int(dmap.measured.sum()) < SMALL_POINTS


def leave_one_out(dmap):
    """(C, M) masks: each interior size of each axis of 3 or more sizes held out in turn (a rule measured on
    small grids, not the default: benchmarks/small_grids.py)."""
    out = []
    for axis, n in ((1, dmap.shape[1]), (0, dmap.shape[0])):
        for i in range(1, n - 1):
            mask = np.zeros(dmap.shape, dtype=bool)
            mask[(slice(None), i) if axis else (i, slice(None))] = True
            mask &= dmap.measured
            if mask.any() and (dmap.measured & ~mask).any():
                out.append(mask)
    return out


def untold(per_fold, chosen, se):
    """The budgets from `chosen` on (in the ladder's order) whose per-fold penalties the folds cannot tell from
    `chosen`'s: mean paired difference at most `se` standard errors of it (`se` None: exactly no worse)."""
    order = list(per_fold)
    base = np.asarray(per_fold[chosen], dtype=float)
    out = []
    for budget in order[order.index(chosen):]:
        diff = np.asarray(per_fold[budget], dtype=float) - base
        spread = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 and se is not None else 0.0
        if diff.mean() <= (se or 0.0) * spread + 1e-9:
            out.append(budget)
    return out


def floor_budget(candidates, measured, points):
    """The smallest of `candidates` whose penalty on the measured points ({budget: mean %}) is within `points`
    of the least of theirs."""
    least = min(measured[b] for b in candidates)
    return next(b for b in candidates if measured[b] <= least + points + 1e-9)


def loss_warning(dmap, fn, penalty, limit=WARN_PERCENT):
    """One line when the tree `fn` loses more than `limit` % at a measured point of `dmap` (`penalty`: its (C, M)
    penalty grid there; points a model predicted are not measured), else None. It names the fastest measured
    choice there -- the library default when it is (issue 39) -- and only advice that applies to this tree."""
    scored = np.where(np.isnan(penalty), -np.inf, penalty)
    if dmap.predicted is not None:
        scored = np.where(dmap.predicted, -np.inf, scored)
    c, m = np.unravel_index(int(np.argmax(scored)), scored.shape)
    if not scored[c, m] > limit:
        return None
    over = int(np.count_nonzero(scored > limit))
    comm, msg = int(dmap.comm_sizes[c]), int(dmap.msg_sizes[m])
    chosen, best = fn.query(comm, msg).label, fastest_label(dmap, c, m)
    others = f" (and {over - 1} more point{'s' if over > 2 else ''} above {limit:g} %)" if over > 1 else ""
    return (f"warning: the tree loses {scored[c, m]:.1f} % at {comm} ranks, {msg} B: it runs {chosen}, the fastest "
            f"measured is {best}{others}; {advice(dmap, fn, best)}")


def fastest_label(dmap, c, m):
    """The fastest measured choice at point (c, m): a method's label, or "default" (the library's own choice)."""
    with np.errstate(invalid="ignore"):
        times = np.where(np.isnan(dmap.cost[c, m]), np.inf, dmap.cost[c, m])
    default = np.inf if dmap.default_cost is None or np.isnan(dmap.default_cost[c, m]) else dmap.default_cost[c, m]
    return "default" if default < times.min() else dmap.methods[int(np.argmin(times))].label


def advice(dmap, fn, best):
    """What keeps more of the measured structure for this tree: the library default as a choice when the tree
    cannot choose it and it is the fastest; a larger tree when the tree is not exact; the tolerance of an exact
    tree built with one."""
    options = fn.options
    if best == "default" and not options.keep_default:
        from ..libraries import get as get_library
        library = get_library(dmap.library)
        if not library.names_its_default:
            return f"{library.title}'s files cannot name its default, so the tree cannot choose it"
        return ("the tree cannot choose the library default (built with --paper or --no-keep-default): without them "
                "it is one more method of the build")
    exact = options.max_leaves is None and options.max_depth is None and options.accuracy_threshold >= 1.0 \
        and options.size_rule == "fixed"
    if exact and options.tolerance not in ("ci", 0.0):
        return f"the exact tree keeps every point within --tolerance {options.tolerance:g}: a smaller tolerance keeps more"
    if exact:
        return "the tree is exact: the loss is where its method was not measured (charged the slowest measured there)"
    check = "check it on held-out sizes with quadsel report --holdout"
    limits = []     # what bounds this tree: each is what a larger tree needs loosened
    if options.max_depth is not None:
        limits.append(f"a --max-depth above {options.max_depth}")
    if options.accuracy_threshold < 1.0:
        limits.append(f"a --threshold above {options.accuracy_threshold:g}")
    if options.max_leaves is not None:
        limits.append("--max-leaves N or none")
    return f"a larger tree keeps more of the measured structure ({', or '.join(limits)}; {check})"
