"""The decision map on query cells: what a tree is built on and answers for.

Every measured size is a cell of its axis. The paper's query rule (§3.2) maps a size between two measured
sizes to the lower one (`floor`): the measured cells then cover the whole axis. With the `between` rule
the open interval between two neighbouring measured sizes is a cell of its own (when it holds an
integer), whose penalty for a method combines that method's penalty at the neighbouring measured points
(`least-bad`: the method least bad at both neighbours wins the gap). Below the smallest measured size a
query takes the first cell, above the largest the last (§3.2's boundary expansion).

A cell answers for the sizes from its `lo` up to the next cell's `lo` - 1, so a cut between two cells is
one integer comparison `size >= lo` in every target.

An axis has a top: the largest size a query, a target and an MPI library can hold (communicator sizes: a C
int, COMM_TOP; message sizes: int64, MSG_TOP). Every `lo` is at most the top, so that the cuts are integers of
the axis' own type in the tree, the blob, the rules files and the C; when the largest measured size is the
top, no size lies above it and the axis has no "above" cell.
"""

import warnings
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..inputs import INT64_MAX, INT_MAX

BETWEEN_RULES = ("floor", "least-bad")
COMM_TOP = INT_MAX      # the largest communicator size (MPI's int)
MSG_TOP = INT64_MAX     # the largest message size (int64 in the decision map, the tree file and the blob)

REFUSED = 1e6          # %: what the builders charge a method where the library fails the call (refused_points)
PREFER_DEFAULT = 1e-3   # %: the default's penalty is this much lower for the builders, so that it wins every tie


@dataclass
class Axis:
    values: np.ndarray     # the measured sizes, strictly increasing
    lo: np.ndarray         # per cell: the smallest size it answers for (cell 0: 0, boundary expansion)
    left: np.ndarray       # per cell: the measured index at or below it
    right: np.ndarray      # per cell: the measured index at or above it (== left for a measured cell)
    below: int = 0         # outside=True: 1 when cell 0 holds the sizes below the smallest measured one
    outside: bool = False  # cells for the sizes outside the measured range (decision/library_default.py)
    above: int = 0         # outside=True: 1 when the last cell holds the sizes above the largest measured one

    @classmethod
    def of(cls, values, between="floor", outside=False, top=MSG_TOP, reach=(None, None)):
        """The cells of an axis. outside=True adds a cell for the sizes below the smallest measured size (when
        it is above 0) and one for those above the largest (when it is below `top`, the largest size the axis
        holds: COMM_TOP or MSG_TOP); their left/right index is -1: nothing measured. `reach`: (below, above)
        bounds that move those cells out (decision/reach.py): the below cell ends before `below`, at most the
        smallest measured size, and the above cell starts at `above`, past the largest and at most `top`; the
        measured cells at the ends answer up to them (extrapolated). None: at the measured range."""
        if outside:
            inner = cls.of(values, between)
            below = int(inner.values[0] > 0)
            above = int(int(inner.values[-1]) < top)
            low, high = reach
            if low is not None and not (below and 1 <= int(low) <= int(inner.values[0])):
                raise ValueError(f"a reach below {low} is not in 1..{int(inner.values[0])}, the smallest measured size")
            if high is not None and not (above and int(inner.values[-1]) < int(high) <= top):
                raise ValueError(f"a reach above {high} is not past {int(inner.values[-1])}, the largest measured "
                                 f"size, and at most {top}")
            first = int(inner.values[0]) if low is None else int(low)
            last = int(inner.values[-1]) + 1 if high is None else int(high)
            # Python ints, never a float: lo[-1] + 1 of the largest int64 must not be cast through a double.
            lo = [0] * below + [first if below else int(inner.lo[0])] + inner.lo[1:].tolist() + [last] * above
            none = [-1]
            left = none[:below] + inner.left.tolist() + [-1] * above
            right = none[:below] + inner.right.tolist() + [-2] * above
            as_array = lambda x: np.asarray(x, dtype=np.int64)  # noqa: E731
            return cls(inner.values, as_array(lo), as_array(left), as_array(right), below, True, above)
        if between not in BETWEEN_RULES:
            raise ValueError(f"unknown between rule {between!r} (choose from {', '.join(BETWEEN_RULES)})")
        values = np.asarray(values, dtype=np.int64)
        lo, left, right = [], [], []
        for i, v in enumerate(values.tolist()):
            lo.append(0 if i == 0 else v)
            left.append(i)
            right.append(i)
            if between != "floor" and i + 1 < len(values) and values[i + 1] - v >= 2:
                lo.append(v + 1)          # the open interval (v, next): its own cell
                left.append(i)
                right.append(i + 1)
        as_array = lambda x: np.asarray(x, dtype=np.int64)  # noqa: E731
        return cls(values, as_array(lo), as_array(left), as_array(right))

    def __len__(self):
        return len(self.lo)

    @property
    def is_measured(self):
        return (self.left == self.right) & (self.left >= 0)

    def measured_cells(self):
        """The cell of each measured size."""
        return np.flatnonzero(self.is_measured)

    def cells(self, sizes):
        """Cell index of every size (any integers; below the first cell's sizes: cell 0)."""
        sizes = np.asarray(sizes)
        if sizes.dtype.kind != "i":      # beyond int64 numpy turns to uint64, float or objects: clip exactly
            sizes = np.array([min(max(int(v), -(1 << 63)), (1 << 63) - 1) for v in sizes.ravel()],
                             dtype=np.int64).reshape(sizes.shape)
        return np.maximum(np.searchsorted(self.lo, sizes, side="right") - 1, 0)


def outside_leaves(comm_sizes, msg_sizes, between="floor", sides=None):
    """The leaves library_default.hand_back_outside adds to a tree over these axes (those of the sizes outside
    the measured range): 3 for the cells above, and 3 more (both axes have a below cell) or 1 (one has). A leaf budget
    bounds the deployed tree, these included: the tree inside the measured range gets the budget less these.
    `sides`: the sides handed back (library_default.SIDES; None: all); the others extrapolate and cost nothing."""
    comm, msg = Axis.of(comm_sizes, between, True, top=COMM_TOP), Axis.of(msg_sizes, between, True)
    keep = (lambda side: True) if sides is None else (lambda side: side in sides)  # noqa: E731
    below = int(bool(comm.below) and keep("comm_below")) + int(bool(msg.below) and keep("msg_below"))
    above = int(bool(comm.above) and keep("comm_above")) + int(bool(msg.above) and keep("msg_above"))
    return sum((0, 1, 3)[n] for n in (below, above))


@dataclass
class DecisionGrid:
    """Per cell: the penalty of every method (the tree builders' objective), its weight and the best method."""

    comm: Axis
    msg: Axis
    penalty: np.ndarray     # (R, C, K) % at the cell (0 where nothing is known: its weight is 0)
    weight: np.ndarray      # (R, C): 1 per measured point and per inferred cell, 0 where nothing is known
    best: np.ndarray        # (R, C) method index: least penalty (interpolated decision where nothing was measured)
    measured: Optional[np.ndarray] = None   # (R, C, K) the penalty before ties within the noise (None: no ci ties)

    @property
    def shape(self):
        return self.best.shape


# Builders only: a method not measured where another was costs this much (%) more than the penalty charged for
# it, so that it never ties with a measured one (at a point where one method alone was measured, the charge
# -- the worst measured penalty -- is 0).
UNMEASURED = 1e-3
# The weight of a gap cell (and a filled point) in the builders' objective, a measured point's being 1: 0.5 helps a
# fixed 16-leaf tree on the measured points, 1 holds out better (benchmarks/selection_rules.py --grid, issue 39).
GAP_WEIGHT = 1.0


def build_grid(dmap, between="floor", tolerance=0.0):
    """The DecisionGrid of a decision map under a between rule.

    A measured point weighs 1, and so does a cell whose penalty is inferred: a gap cell (the worst of its
    neighbouring points' penalties), or a point where no method was measured (its penalty comes from the
    message-axis interpolation of every method's time). `tolerance` (%): penalties up to it count as 0 for
    the builders (ties within the noise of the best); "ci": a method whose time is within two standard errors
    of the best's (measured repetitions) is a tie. A method not measured at a point costs what the penalty
    charges plus UNMEASURED; one with no value at an inferred cell costs the cell's worst plus UNMEASURED.
    With ties within the noise, `measured` keeps the cells' penalties before them: the ties shape a tree,
    these label its leaves (decision/leaf_labels.py). Every report still scores the real penalty.
    """
    from .decision_map import noise_ties, penalty_cube
    comm, msg = Axis.of(dmap.comm_sizes, between), Axis.of(dmap.msg_sizes, between)
    point = penalty_cube(dmap)                                   # (C, M, K), NaN at filled points
    with np.errstate(invalid="ignore", divide="ignore"):
        lowest = np.nanmin(np.where(np.isnan(dmap.cost_filled), np.inf, dmap.cost_filled), axis=2)
        inferred = (dmap.cost_filled - lowest[:, :, None]) / lowest[:, :, None] * 100.0
    point = np.where(dmap.filled[:, :, None], inferred, point)
    untied = None
    if tolerance == "ci":
        ties = noise_ties(dmap)
        if ties.any():                    # without ties (no spread in the data) the penalties are the measured ones
            untied = _marked(point, dmap)
            point = np.where(ties, 0.0, point)
    elif tolerance > 0:
        point = np.where(point <= tolerance, 0.0, point)
    penalty, known = _cells(_marked(point, dmap), comm, msg)
    weight = known.astype(float)
    if GAP_WEIGHT != 1.0:        # a measured point weighs 1, a gap cell or a filled point GAP_WEIGHT
        at_point = np.zeros(known.shape, dtype=bool)
        at_point[np.ix_(comm.is_measured, msg.is_measured)] = dmap.measured
        weight = np.where(at_point, weight, weight * GAP_WEIGHT)
    fallback = dmap.best[np.ix_(comm.left, msg.left)]           # the map's decision where nothing is known
    best = np.where(known, np.argmin(np.where(np.isnan(penalty), np.inf, penalty), axis=2), fallback)
    measured = None if untied is None else np.nan_to_num(_cells(untied, comm, msg)[0], nan=0.0)
    return DecisionGrid(comm, msg, np.where(np.isnan(penalty), 0.0, penalty), weight, best.astype(np.int64),
                        measured)


def _marked(point, dmap):
    """Point penalties as the builders see them: a method not measured where another was costs UNMEASURED more,
    and the library default wins every tie (PREFER_DEFAULT)."""
    from .decision_map import DEFAULT_METHOD
    point = np.where(np.isnan(dmap.cost) & dmap.measured[:, :, None], point + UNMEASURED, point)
    refused = refused_points(dmap)
    if refused is not None:
        point = np.where(refused, point + REFUSED, point)
    if DEFAULT_METHOD in dmap.methods:
        point[:, :, dmap.methods.index(DEFAULT_METHOD)] -= PREFER_DEFAULT
    return point


def refused_points(dmap):
    """(C, M, K) bool: the points where forcing the method fails the call (the measurement's `# replaced ... runs
    error` lines: Open MPI's two_proc algorithms at another size than 2, libraries/fallbacks.py's ERROR), or None.
    The builders charge them REFUSED: a leaf over such a point never takes the method -- its file would end the
    application's job there, and the follow check could not force it (issue 40: allgather's two_proc, fastest at
    1 x 2, was deployed over 2 x 2 as well)."""
    from ..libraries.fallbacks import ERROR
    errors = [p for p in dmap.replaced if p[5] == ERROR]
    if not errors:
        return None
    rows = {int(c): i for i, c in enumerate(dmap.comm_sizes)}
    cols = {int(m): j for j, m in enumerate(dmap.msg_sizes)}
    methods = {(str(m.algorithm), int(m.segsize)): k for k, m in enumerate(dmap.methods)}
    out = np.zeros(dmap.cost.shape, dtype=bool)
    for _, algorithm, segsize, comm, msg, _ in errors:
        i, j, k = rows.get(int(comm)), cols.get(int(msg)), methods.get((str(algorithm), int(segsize)))
        if i is not None and j is not None and k is not None:
            out[i, j, k] = True
    return out if out.any() else None


def _cells(point, comm, msg):
    """(cell penalties, known cells): a cell's penalty is the worst over the points around it (one point for a
    measured cell); a method with no value where others have one costs the cell's worst + UNMEASURED; NaN where
    nothing is known around the cell. (np.fmax: the larger of two, the other where one is NaN.)"""
    rows = _around(point, comm, 0)
    penalty = _around(rows, msg, 1)
    del rows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)       # all-NaN: nothing known around the cell
        worst = np.nanmax(penalty, axis=2, keepdims=True)
    known = ~np.isnan(worst[:, :, 0])
    return np.where(np.isnan(penalty) & known[:, :, None], worst + UNMEASURED, penalty), known


def _around(values, axis, along):
    """`values` on the cells of `axis` (along dimension `along`): a measured cell's own, a gap cell's the larger of
    its two neighbours' (np.fmax), gathered once."""
    out = np.take(values, axis.left, axis=along)
    gaps = np.flatnonzero(axis.left != axis.right)
    if gaps.size:
        index = [slice(None)] * values.ndim
        index[along] = gaps
        out[tuple(index)] = np.fmax(out[tuple(index)], np.take(values, axis.right[gaps], axis=along))
    return out
