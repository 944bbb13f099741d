"""Points where the library runs another algorithm than the forced one (quadsel/libraries/fallbacks.py).

`quadsel measure` never times them and writes `# replaced` lines instead. Every other reader's rows (OSU, IMB,
SKaMPI, OCC, detail.out, generic CSV) are measured by someone else: a row of a forced algorithm at a point
where its library replaces it holds the replacement's time, so `drop_replaced` takes it out of the table
before the decision map is built. Either way the decision map never credits the forced algorithm with
another's time, and `build` and `report` say where it happened.
"""

import io
import operator
import os

import numpy as np

from ..libraries.base import DEFAULT_ALGORITHM, is_reduction

PREFIX = "# replaced "
_POINT_ORDER = operator.itemgetter(0, 3, 4, 1, 2)     # dropped points by collective, comm, msg, algorithm, segsize


def replaced_points(paths, collective=None):
    """[(collective, algorithm, segsize, comm_size, msg_size, runs)] of every `# replaced` line in `paths`
    (files that cannot be read as text are skipped: their reader reports them)."""
    out = []
    for path in paths:
        if not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        if PREFIX.encode() not in data:      # most files: no such line (a search of the bytes, not a parse)
            continue
        text = io.StringIO(data.decode("utf-8", errors="replace"), newline=None)   # lines as a text file's
        lines = [line for line in text if line.startswith(PREFIX)]
        for line in lines:
            parts = line[len(PREFIX):].split(" ", 2)
            key = parts[0].split(",")
            if len(key) != 5 or len(parts) < 2 or parts[1] != "runs" or not all(k.isdigit() for k in key[2:]):
                continue
            runs = line[len(PREFIX):].split(" ", 3)[2].rstrip(":") if len(parts) > 2 else "?"
            if collective is None or key[0] == collective:
                out.append((key[0], key[1], int(key[2]), int(key[3]), int(key[4]), runs))
    return out


# The datatype of a row another benchmark measured is not in its file. OSU and IMB-MPI1 time reductions on
# 4-byte floats (MPI_FLOAT) and the data movers on bytes; a count condition (count < comm size, ...) is
# therefore checked for reductions with 4-byte and with 1-byte elements, and a row replaced under either is
# dropped: a row too many dropped loses a measurement, one too few would credit another algorithm's time.
TYPE_SIZES = {True: (4, 1), False: (1,)}


def replacements_at(library, collective, algorithm, points):
    """replacement_of a forced algorithm at each (segsize, comm_size, msg_size) of `points` (rows of an array
    or tuples), as an object array."""
    from ..libraries import fallbacks
    try:
        points = np.asarray(points, dtype=np.int64).reshape(-1, 3)
    except OverflowError:                                  # sizes past int64 (a reader lets them through)
        points = np.asarray(points, dtype=object).reshape(-1, 3)
    out, todo = np.full(len(points), None, dtype=object), np.arange(len(points))
    for size in TYPE_SIZES[is_reduction(collective)]:      # the first type size under which it is replaced
        seg, comm, msg = points[todo].T
        columns = {"comm_size": comm, "count": msg // size, "type_size": np.full(todo.size, size), "segsize": seg}
        out[todo] = fallbacks.replacements_of_columns(library, collective, algorithm, columns, todo.size)
        todo = todo[np.equal(out[todo], None)]
    return out


def drop_replaced(rows, library, own_files=()):
    """(kept rows, [(collective, algorithm, segsize, comm, msg, runs)] dropped): rows of a forced algorithm at a
    point where `library` replaces it. Rows of `own_files` (measured by quadsel, whose `# replaced` lines
    already say where) are kept as they are. The rows of each forced (collective, algorithm) are asked at once
    (replacements_at), as replaced_rows asks a column table's."""
    from ..libraries import fallbacks
    from .identity import where
    runs, asked = [None] * len(rows), {}
    for i, row in enumerate(rows):
        if library is not None and row.algorithm != DEFAULT_ALGORITHM and where(row.source)[0] not in own_files \
                and fallbacks.known(library, row.collective):
            asked.setdefault((row.collective, row.algorithm), []).append(i)
    for (collective, algorithm), at in asked.items():
        points = [(rows[i].segsize, rows[i].comm_size, rows[i].msg_size) for i in at]
        for i, found in zip(at, replacements_at(library, collective, algorithm, points).tolist()):
            runs[i] = found
    kept = [row for row, found in zip(rows, runs) if found is None]
    dropped = {(row.collective, row.algorithm, row.segsize, row.comm_size, row.msg_size, found)
               for row, found in zip(rows, runs) if found is not None}
    return kept, sorted(dropped, key=_POINT_ORDER)


def replaced_rows(cols, library, own_files=()):
    """drop_replaced on columns (ingest/column_table.py): (a mask of the rows to drop, the points dropped). Each
    forced (collective, algorithm) some fallback names is looked up once per distinct (segsize, comm, msg)."""
    from ..libraries import fallbacks
    from .column_table import distinct
    mask = np.zeros(len(cols), dtype=bool)
    if library is None or not len(cols) or not any(fallbacks.known(library, c) for c in cols.collectives):
        return mask, []
    own = np.array([path in own_files for path in cols.paths], dtype=bool)[cols.file]
    # only an algorithm some fallback names can be replaced (fallbacks.replacement's first step)
    named = {(c, f.algorithm) for c in cols.collectives for f in fallbacks.known(library, c)}
    dropped = []
    for i, collective in enumerate(cols.collectives):
        for j, algorithm in enumerate(cols.labels):
            if (collective, algorithm) not in named or algorithm == DEFAULT_ALGORITHM:
                continue
            rows = np.flatnonzero((cols.collective == i) & (cols.algorithm == j) & ~own)
            if not len(rows):
                continue
            points, at = distinct(cols.segsize[rows], cols.comm_size[rows], cols.msg_size[rows])
            runs = replacements_at(library, collective, algorithm, points)
            hit = np.not_equal(runs, None)
            mask[rows[hit[at]]] = True
            dropped += [(collective, algorithm, *p, r) for p, r in zip(points[hit].tolist(), runs[hit].tolist())]
    return mask, sorted(dropped, key=_POINT_ORDER)      # distinct already: one per (collective, algorithm, point)


def replaced_note(paths, collective=None, show=6, extra=()):
    """One line for stderr / the report's notes, or None when no point was replaced. `extra`: points dropped
    from other benchmarks' rows (drop_replaced; DecisionMap.replaced)."""
    points = replaced_points(paths, collective)
    points += [p for p in extra if (collective is None or p[0] == collective) and p not in set(points)]
    if not points:
        return None
    shown = "; ".join(f"{c} {a}{f'/seg{s}' if s else ''} at comm {n} msg {m} runs {r}"
                      for c, a, s, n, m, r in points[:show])
    more = f"; and {len(points) - show} more" if len(points) > show else ""
    return (f"{len(points)} point(s) where the library replaces the forced algorithm were not timed and are never "
            f"credited to it (docs/collectives.md): {shown}{more}")
