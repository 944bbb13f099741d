"""The tidy table as columns: how a sweep of a million rows is read in seconds and a few hundred MiB (issue 19).

A Measurement object per row costs about a microsecond and half a kilobyte; a plain CSV sweep (no quotes, the
same cells on every line, every value in the row reader's common form) is read instead into NumPy columns
(csvfile.read_columns), its identity resolved on the distinct labels (identity.resolve_columns) and its
repeats checked by one sort (`aggregate`). Whatever is not plain -- a cell the row reader would refuse or
read in a slower way, an id to refuse, repeats to pool -- goes the row way (ingest/__init__.py), so both ways
give the same table, notes and errors (tests/ingest/test_column_table.py).
"""

from dataclasses import dataclass, replace
from typing import List

import numpy as np

from .table import DEFAULT_ALGORITHM, Measurement


class RowsNeeded(Exception):
    """The columns cannot be taken on without a decision made row by row (ingest/__init__.py reads the rows)."""


@dataclass
class Columns:
    """Equally long columns, one entry per measurement, in the order of the files and their lines."""

    collectives: List[str]      # distinct collective names; `collective` indexes them
    labels: List[str]           # distinct algorithm labels; `algorithm` indexes them
    paths: List[str]            # the files; `file` indexes them
    collective: np.ndarray      # int
    algorithm: np.ndarray       # int
    segsize: np.ndarray         # int64
    comm_size: np.ndarray       # int64
    msg_size: np.ndarray        # int64
    time: np.ndarray            # float µs
    stddev: np.ndarray          # float µs, NaN: not measured
    reps: np.ndarray            # int64, 0: not recorded
    line: np.ndarray            # int64: the line of the file it was read from
    file: np.ndarray            # int

    ROWS = ("collective", "algorithm", "segsize", "comm_size", "msg_size", "time", "stddev", "reps", "line", "file")

    def __len__(self):
        return len(self.time)

    def take(self, index):
        """The rows at `index` (a mask or positions), same label tables; a mask of every row: this table (the
        columns are never changed in place)."""
        if isinstance(index, np.ndarray) and index.dtype == bool and index.all():
            return self
        return replace(self, **{name: getattr(self, name)[index] for name in self.ROWS})

    @classmethod
    def concat(cls, parts):
        """One table of several (their label tables merged)."""
        collectives = sorted({c for p in parts for c in p.collectives})
        labels = sorted({a for p in parts for a in p.labels})
        if len(parts) == 1 and parts[0].collectives == collectives and parts[0].labels == labels:
            return parts[0]
        paths = [path for p in parts for path in p.paths]
        out, offset = {name: [] for name in cls.ROWS}, 0
        for p in parts:
            for name in cls.ROWS:
                out[name].append(getattr(p, name))
            out["collective"][-1] = np.array([collectives.index(c) for c in p.collectives], dtype=np.int64)[p.collective]
            out["algorithm"][-1] = np.array([labels.index(a) for a in p.labels], dtype=np.int64)[p.algorithm]
            out["file"][-1] = p.file + offset
            offset += len(p.paths)
        return cls(collectives, labels, paths, **{name: np.concatenate(v) for name, v in out.items()})

    def is_default(self):
        return self.algorithm == (self.labels.index(DEFAULT_ALGORITHM) if DEFAULT_ALGORITHM in self.labels else -1)

    def rows(self):
        """The Measurements, as the row reader gives them."""
        stddev = [None if s != s else s for s in self.stddev.tolist()]
        reps = [r or None for r in self.reps.tolist()]
        return [Measurement(collective=self.collectives[c], algorithm=self.labels[a], segsize=s, comm_size=n,
                            msg_size=m, time=t, stddev=d, reps=r, source=f"{self.paths[f]}:{line}")
                for c, a, s, n, m, t, d, r, line, f in zip(
                    self.collective.tolist(), self.algorithm.tolist(), self.segsize.tolist(), self.comm_size.tolist(),
                    self.msg_size.tolist(), self.time.tolist(), stddev, reps, self.line.tolist(), self.file.tolist())]


class ColumnTable:
    """What read_measurements(..., columns=True) returns when the columns were read: the aggregated table with
    its notes and library, as Table has them; iterating it gives the Measurements."""

    aggregated = True
    layouts = False      # columns are read only from files without nodes/ppn (csvfile.read_columns)

    def __init__(self, columns, notes=(), library=None):
        self.columns = columns
        self.notes = list(notes)
        self.library = library

    def __len__(self):
        return len(self.columns)

    def __iter__(self):
        return iter(self.columns.rows())


def _algorithm_rank(label):
    # as ingest.aggregate orders them: numeric ids as numbers (2 before 10), names after them
    return (0, int(label), "") if label.isascii() and label.isdigit() else (1, 0, label)


def aggregate(cols, keep=None):
    """ingest.aggregate of columns without repeats: sorted by (collective, algorithm, segsize, comm_size,
    msg_size); RowsNeeded when some point was measured more than once (the rows pool them). keep: a mask of the
    rows to aggregate (the others left out), None: all."""
    coll_rank = np.argsort(np.argsort(np.array(cols.collectives, dtype=object)))
    order = sorted(range(len(cols.labels)), key=lambda i: _algorithm_rank(cols.labels[i]))
    alg_rank = np.empty(len(cols.labels), dtype=np.int64)
    previous = None
    for rank, i in enumerate(order):      # equal ranks for labels ingest.aggregate cannot tell apart ("010", "10")
        key = _algorithm_rank(cols.labels[i])
        alg_rank[i] = rank if key != previous else alg_rank[order[rank - 1]]
        previous = key
    keys = (cols.msg_size, cols.comm_size, cols.segsize, alg_rank[cols.algorithm], coll_rank[cols.collective])
    if keep is None or keep.all():
        index = np.lexsort(keys)       # stable, as sorted()
    else:
        kept = np.flatnonzero(keep)
        index = kept[np.lexsort(tuple(key[kept] for key in keys))]
    same = (np.diff(cols.collective[index]) == 0) & (np.diff(cols.algorithm[index]) == 0)
    for column in (cols.segsize, cols.comm_size, cols.msg_size):
        same &= np.diff(column[index]) == 0
    if same.any():
        raise RowsNeeded("repeated points")
    return cols.take(index)


def distinct(*columns):
    """(the distinct rows of equally long integer columns as an (n, columns) array, each row's index among them)."""
    key, values = np.zeros(len(columns[0]), dtype=np.int64), []
    for column in columns:
        found, inverse = unique_inverse(column)
        key = key * len(found) + inverse        # mixed radix: the product of the columns' distinct counts
        values.append(found)
    keys, inverse = unique_inverse(key)
    out = np.empty((len(keys), len(columns)), dtype=np.int64)
    for j in range(len(columns) - 1, -1, -1):
        keys, digit = np.divmod(keys, len(values[j]))
        out[:, j] = values[j][digit]
    return out, inverse


def unique_inverse(column):
    """np.unique(column, return_inverse=True) of integers, without sorting them where it can: small ones (codes,
    communicator sizes) are counted; a long column whose values all stand in a sample of it (message sizes of a
    sweep) is searched in the sample's."""
    if len(column) and 0 <= column.min() and column.max() < max(len(column), 1 << 16):
        present = np.zeros(int(column.max()) + 1, dtype=bool)
        present[column] = True
        return np.flatnonzero(present).astype(column.dtype), (np.cumsum(present) - 1)[column]
    if len(column) > 1 << 16:
        found = np.unique(column[::64])
        at = np.minimum(np.searchsorted(found, column), len(found) - 1)
        if (found[at] == column).all():
            return found, at
    found, inverse = np.unique(column, return_inverse=True)
    return found, inverse.ravel()


def method_matrix(cols):
    """(keys, times, sources) of the non-default methods for identity.indistinguishable: keys (collective,
    algorithm, segsize), times (point x key, NaN unmeasured), sources {key: files}."""
    rows = cols.take(~cols.is_default())
    if not len(rows):
        return [], np.zeros((0, 0)), {}
    found, k = distinct(rows.collective, rows.algorithm, rows.segsize)
    points, p = distinct(rows.collective, rows.comm_size, rows.msg_size)
    times = np.full((len(points), len(found)), np.nan)
    times[p, k] = rows.time
    in_file, at = distinct(k, rows.file)
    keys = [(cols.collectives[c], cols.labels[a], s) for c, a, s in found.tolist()]
    sources = {key: set() for key in keys}
    for j, f in in_file.tolist():
        sources[keys[j]].add(cols.paths[f])
    return keys, times, sources
