"""The decision map (§3): axes, methods, cost cube T[comm, msg, method] and the best method per point.

A *method* is an (algorithm, segment size) pair — the paper's "method index". Rows of the map are
communicator sizes (north = small), columns are message sizes (west = small).
"""

import math
from dataclasses import dataclass, replace
from typing import List, Optional

import numpy as np

from ..errors import QuadselError
from ..ingest.aggregate import aggregate
from ..ingest.names import normalise_collective


def method_label(algorithm, segsize):
    """The one method notation of every human-facing output: "6", "3/seg8192"."""
    return str(algorithm) if not segsize else f"{algorithm}/seg{int(segsize)}"


@dataclass(frozen=True, order=True)
class Method:
    algorithm: str
    segsize: int = 0

    @property
    def label(self):
        return method_label(self.algorithm, self.segsize)

    def to_json(self):
        return {"algorithm": self.algorithm, "segsize": int(self.segsize)}


# The library's own choice as a method of a tree: Open MPI's algorithm 0, MPICH's auto, the C's 0 (no decision)
DEFAULT_METHOD = Method("default", 0)


def _method_sort_key(method):
    # numeric Open MPI ids sort numerically, names alphabetically after them
    alg = method.algorithm
    return (0, int(alg), "", method.segsize) if alg.isascii() and alg.isdigit() else (1, 0, alg.lower(), method.segsize)


@dataclass
class DecisionMap:
    collective: str
    comm_sizes: np.ndarray          # sorted, int64, shape (C,)
    msg_sizes: np.ndarray           # sorted, int64, shape (M,)
    methods: List[Method]           # K methods
    cost: np.ndarray                # (C, M, K) µs, NaN where the method was not measured
    cost_filled: np.ndarray         # (C, M, K) cost with gaps interpolated along the message axis
    filled: np.ndarray              # (C, M) bool: no method measured here, decision from interpolation
    best: np.ndarray                # (C, M) int: index of the fastest method
    default_cost: Optional[np.ndarray] = None   # (C, M) the library default's time, NaN where absent
    sources: tuple = ()
    cost_se: Optional[np.ndarray] = None         # (C, M, K) standard error of each time (stddev/sqrt(reps)), NaN unknown
    library: Optional[str] = None                # "openmpi", "mpich" or None: whose algorithms the methods are
    predicted: Optional[np.ndarray] = None       # (C, M) bool: time of every method from a fitted model (models/)
    default_se: Optional[np.ndarray] = None      # (C, M) standard error of the default's time, NaN unknown
    replaced: tuple = ()                         # points whose rows were dropped: another algorithm ran there

    @property
    def shape(self):
        return self.best.shape

    @property
    def measured(self):
        """Points where at least one method was measured (the only points a penalty is computed on)."""
        return ~self.filled

    def best_cost(self):
        """(C, M) time of the fastest forced method (interpolated where nothing was measured)."""
        return np.take_along_axis(self.cost_filled, self.best[:, :, None], axis=2)[:, :, 0]

    def reference_cost(self):
        """(C, M) the time every penalty is measured against: the best measured choice, the library default
        included (where it was measured) -- so no choice, the default neither, has a negative penalty. NaN at
        filled points (nothing measured: never scored)."""
        with np.errstate(invalid="ignore"):
            best = np.nanmin(np.where(np.isnan(self.cost), np.inf, self.cost), axis=2)
        if self.default_cost is not None:
            best = np.fmin(best, self.default_cost)
        return np.where(self.filled | ~np.isfinite(best), np.nan, best)


def pool_identical(rows, collective, library=None):
    """One method for configurations that are provably the same algorithm: an Open MPI algorithm that never
    reads the segment size (libraries/openmpi.py UNSEGMENTED), measured under several segment labels, is
    that algorithm at segment size 0, its times at a point pooled by their median (ingest/aggregate.py)."""
    from ..libraries import ids_of
    unsegmented = ids_of(library).unsegmented(collective)
    if not unsegmented or not rows or not all(m.algorithm.strip().isdigit() for m in rows):
        return rows                                          # no ids that ignore the segment size
    relabel = [m for m in rows if m.segsize and int(m.algorithm) in unsegmented]
    if not relabel:
        return rows
    return aggregate([replace(m, segsize=0) if m.segsize and int(m.algorithm) in unsegmented else m for m in rows])


def build_decision_map(measurements, collective=None):
    """Build the decision map of one collective from the tidy table (list of Measurement; an ingest Table also
    says its MPI library)."""
    library = getattr(measurements, "library", None)
    if getattr(measurements, "columns", None) is not None:       # ingest.ColumnTable: a sweep read as columns
        dmap = _map_of_columns(measurements.columns, collective, library)
        if dmap is not None:
            dmap.replaced = tuple(p for p in getattr(measurements, "replaced", ()) if p[0] == dmap.collective)
            return dmap
    rows = list(measurements)
    collectives = sorted({m.collective for m in rows})
    if collective is None:
        if len(collectives) != 1:
            raise QuadselError(f"the input holds several collectives ({', '.join(collectives)}): choose one with --collective")
        collective = collectives[0]
    collective = normalise_collective(collective) or collective.strip().lower()
    rows = [m for m in rows if m.collective == collective]
    if not rows:
        found = ", ".join(collectives) or "none"
        raise QuadselError(f"no measurements of collective '{collective}' in the input (found: {found})")
    _one_ppn(rows)
    # several rows of one method and point (rows not from ingest): their median (aggregate), never the last one
    method_rows = [m for m in rows if not m.is_default]
    if not getattr(measurements, "aggregated", False):     # an ingest Table is pooled already
        method_rows = aggregate(method_rows)
    method_rows = pool_identical(method_rows, collective, library)
    if not method_rows:
        raise QuadselError(f"no algorithm measurements for '{collective}' (only 'default' rows)")

    comm_sizes = np.array(sorted({m.comm_size for m in method_rows}), dtype=np.int64)
    msg_sizes = np.array(sorted({m.msg_size for m in method_rows}), dtype=np.int64)
    methods = sorted({Method(m.algorithm, m.segsize) for m in method_rows}, key=_method_sort_key)
    ci = {v: i for i, v in enumerate(comm_sizes.tolist())}
    mi = {v: i for i, v in enumerate(msg_sizes.tolist())}
    ki = {(v.algorithm, v.segsize): i for i, v in enumerate(methods)}

    cost = np.full((len(comm_sizes), len(msg_sizes), len(methods)), np.nan)
    cost_se = np.full(cost.shape, np.nan)
    at = (np.fromiter((ci[m.comm_size] for m in method_rows), np.int64, len(method_rows)),
          np.fromiter((mi[m.msg_size] for m in method_rows), np.int64, len(method_rows)),
          np.fromiter((ki[m.algorithm, m.segsize] for m in method_rows), np.int64, len(method_rows)))
    cost[at] = np.fromiter((m.time for m in method_rows), float, len(method_rows))
    se = [(i, m.stddev / math.sqrt(m.reps)) for i, m in enumerate(method_rows) if m.stddev is not None and m.reps]
    if se:
        which = np.array([i for i, _ in se], dtype=np.int64)
        cost_se[tuple(a[which] for a in at)] = [v for _, v in se]

    default_cost = default_se = None
    default_rows = [m for m in rows if m.is_default and m.comm_size in ci and m.msg_size in mi]
    if default_rows:   # the default under several segment-size labels is one baseline: pooled, not the last row
        default_cost, default_se = _pooled((len(comm_sizes), len(msg_sizes)),
                                           (((ci[m.comm_size], mi[m.msg_size]), m.time, m.stddev, m.reps)
                                            for m in default_rows))

    sources = tuple(sorted({m.source.rsplit(":", 1)[0] for m in rows if m.source}))
    dmap = map_from_cube(collective, comm_sizes, msg_sizes, methods, cost, cost_se, default_cost, sources, library,
                         default_se)
    dmap.replaced = tuple(p for p in getattr(measurements, "replaced", ()) if p[0] == collective)
    return dmap


def _one_ppn(rows):
    """One map is one ranks-per-node: rows of several layouts are never pooled (decision/layouts.py)."""
    ppns = {m.ppn for m in rows}
    if len(ppns) > 1:
        from ..ingest.layout import layout_groups
        layout_groups(rows)                        # rows with and without a layout: its one-line refusal
        shown = ", ".join(map(str, sorted(ppns)))
        raise QuadselError(f"the measurements hold {len(ppns)} layouts (ppn {shown}): a decision map is one ranks-per-"
                           "node, and layouts are never pooled; `quadsel build` builds a layout forest, other commands "
                           "take the files of one ppn")


def _map_of_columns(cols, collective, library):
    """build_decision_map of an aggregated ingest column table, the same map without a Measurement per row; None
    where the rows must decide (an error to raise, methods to pool: pool_identical)."""
    if collective is None and len(set(cols.collective.tolist())) != 1:
        return None
    name = cols.collectives[int(cols.collective[0])] if collective is None else \
        normalise_collective(collective) or collective.strip().lower()
    if name not in cols.collectives:
        return None
    cols = cols.take(cols.collective == cols.collectives.index(name))
    default = cols.is_default()
    methods_rows = cols.take(~default)
    from ..ingest.column_table import distinct, unique_inverse
    found, inverse = distinct(methods_rows.algorithm, methods_rows.segsize)
    found = [(cols.labels[a], s) for a, s in found.tolist()]
    if not found or (all(a.strip().isdigit() for a, _ in found) and
                     any(s and int(a) in _unsegmented(library, name) for a, s in found)):
        return None                               # pool_identical's relabelling: the rows pool them
    comm_sizes, ci = unique_inverse(methods_rows.comm_size)
    msg_sizes, mi = unique_inverse(methods_rows.msg_size)
    pairs = sorted({Method(a, s) for a, s in found}, key=_method_sort_key)
    ki = {(m.algorithm, m.segsize): i for i, m in enumerate(pairs)}
    code = np.array([ki[key] for key in found], dtype=np.int64)[inverse]
    cost = np.full((len(comm_sizes), len(msg_sizes), len(pairs)), np.nan)
    cost[ci.ravel(), mi.ravel(), code] = methods_rows.time
    cost_se = np.full(cost.shape, np.nan)
    known = ~np.isnan(methods_rows.stddev) & (methods_rows.reps > 0)
    cost_se[ci.ravel()[known], mi.ravel()[known], code[known]] = \
        methods_rows.stddev[known] / np.sqrt(methods_rows.reps[known].astype(float))
    default_cost = default_se = None
    base = cols.take(default & np.isin(cols.comm_size, comm_sizes) & np.isin(cols.msg_size, msg_sizes))
    if len(base):
        at = list(zip(np.searchsorted(comm_sizes, base.comm_size).tolist(), np.searchsorted(msg_sizes, base.msg_size).tolist()))
        stddev = [None if s != s else s for s in base.stddev.tolist()]
        reps = [r if r > 0 else None for r in base.reps.tolist()]
        default_cost, default_se = _pooled((len(comm_sizes), len(msg_sizes)),
                                           zip(at, base.time.tolist(), stddev, reps))
    sources = tuple(sorted({cols.paths[f] for f in np.unique(cols.file).tolist()}))
    return map_from_cube(name, comm_sizes.astype(np.int64), msg_sizes.astype(np.int64), pairs, cost, cost_se,
                         default_cost, sources, library, default_se)


def _unsegmented(library, collective):
    from ..libraries import ids_of
    return ids_of(library).unsegmented(collective)


def map_from_cube(collective, comm_sizes, msg_sizes, methods, cost, cost_se=None, default_cost=None, sources=(),
                  library=None, default_se=None):
    """The DecisionMap of a cost cube (NaN = not measured): points where nothing was measured filled along
    the message axis, the best method per point (a method not measured at a measured point never wins)."""
    filled = np.all(np.isnan(cost), axis=2)
    cost_filled = interpolate_message_axis(cost, msg_sizes)
    ranking = np.where(filled[:, :, None], cost_filled, cost)
    ranking = np.where(np.isnan(ranking), np.inf, ranking)
    best = np.argmin(ranking, axis=2)
    if cost_se is not None and np.all(np.isnan(cost_se)):
        cost_se = None
    if default_se is not None and np.all(np.isnan(default_se)):
        default_se = None
    return DecisionMap(collective, comm_sizes, msg_sizes, list(methods), cost, cost_filled, filled, best,
                       default_cost, tuple(sources), cost_se, library, default_se=default_se)


def training_map(dmap, test):
    """The decision map of the measurements outside `test` ((C, M) bool), rebuilt from them: axes, fill and
    best anew (a held-out size is then absent from the axes, so its queries fall between training sizes).
    The standard errors travel with the times (the training map's ties are the full map's), and so does the
    library default (decision/library_default.py)."""
    cost = np.where(test[:, :, None], np.nan, dmap.cost)
    known = ~np.isnan(cost)
    rows, cols, ks = known.any(axis=(1, 2)), known.any(axis=(0, 2)), known.any(axis=(0, 1))
    if not ks.any():
        raise QuadselError(f"no algorithm measurements for '{dmap.collective}' (only 'default' rows)")
    pick = np.ix_(rows, cols, ks)
    cost_se = None
    if dmap.cost_se is not None:
        cost_se = np.where(known, dmap.cost_se, np.nan)[pick]
    methods = [m for m, keep in zip(dmap.methods, ks.tolist()) if keep]
    plane = np.ix_(rows, cols)
    default_cost = default_se = None
    if dmap.default_cost is not None:
        default_cost = np.where(test, np.nan, dmap.default_cost)[plane]
        if np.all(np.isnan(default_cost)):
            default_cost = None
        elif dmap.default_se is not None:
            default_se = np.where(test | np.isnan(dmap.default_cost), np.nan, dmap.default_se)[plane]
    return map_from_cube(dmap.collective, dmap.comm_sizes[rows], dmap.msg_sizes[cols], methods, cost[pick], cost_se,
                         default_cost, dmap.sources, dmap.library, default_se)


def penalty_cube(dmap):
    """(C, M, K) penalty in % of every method at every point: (T[k] - T[best]) / T[best] x 100 (§4.2), T[best]
    the best measured choice, the library default included (DecisionMap.reference_cost): never negative.

    A method not measured at a measured point is charged the worst penalty measured there (it cannot be
    known to be better, and a rule must not win by choosing methods where they were not measured). At a
    point where no method was measured (its decision is interpolated) everything is NaN: never scored.
    """
    best = dmap.reference_cost()
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (dmap.cost - best[:, :, None]) / best[:, :, None] * 100.0
    worst = np.max(np.where(np.isnan(out), -np.inf, out), axis=2)
    out = np.where(np.isnan(out), worst[:, :, None], out)
    out[dmap.filled] = np.nan
    return out


def noise_ties(dmap, z=1.96):
    """(C, M, K) True where a method's time is within the noise of the point's best: the difference is at most
    z standard errors of the difference (both times' standard errors known; False elsewhere)."""
    if dmap.cost_se is None:
        return np.zeros(dmap.cost.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        k_best = np.argmin(np.where(np.isnan(dmap.cost), np.inf, dmap.cost), axis=2)[:, :, None]
        t_best = np.take_along_axis(dmap.cost, k_best, axis=2)
        se_best = np.take_along_axis(dmap.cost_se, k_best, axis=2)
        tie = dmap.cost - t_best <= z * np.sqrt(dmap.cost_se ** 2 + se_best ** 2)
    return tie & ~np.isnan(dmap.cost_se) & ~np.isnan(se_best)


def _pooled(shape, cells):
    """(times, standard errors): arrays of `shape` from (index, time, stddev, reps) cells, NaN elsewhere (and
    where the standard error is unknown); several cells of one index are pooled by the rule ingest.aggregate
    applies to repeats (their median time, never the last one; ingest/aggregate.py, pooled_spread)."""
    from ..ingest.aggregate import pooled_spread
    found = {}
    for index, *values in cells:
        found.setdefault(index, []).append(values)
    times, errors = np.full(shape, np.nan), np.full(shape, np.nan)
    for index, values in found.items():
        time, stddev, reps = ([v[0] for v in values], [v[1] for v in values], [v[2] for v in values])
        times[index] = float(np.median(time))
        stddev, reps = (stddev[0], reps[0]) if len(values) == 1 else pooled_spread(time, stddev, reps)
        if stddev is not None and reps:
            errors[index] = stddev / math.sqrt(reps)
    return times, errors


def interpolate_message_axis(cost, msg_sizes):
    """Fill NaN costs by linear interpolation of log(time) over log(msg size) within each (comm, method) row.

    Beyond the first/last measured message size the nearest measured value is used (no extrapolation).
    A row with no measurement at all stays NaN.
    """
    out = cost.copy()
    x = np.log2(np.maximum(msg_sizes.astype(float), 0.5))   # 0-byte messages sit just left of 1 byte
    C, M, K = cost.shape
    for c in range(C):
        for k in range(K):
            y = cost[c, :, k]
            known = ~np.isnan(y)
            if known.all() or not known.any():
                continue
            out[c, ~known, k] = np.exp(np.interp(x[~known], x[known], np.log(y[known])))
    return out
