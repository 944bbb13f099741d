"""Points where the library runs another algorithm than the forced one (quadsel/libraries/fallbacks.py).

`quadsel measure` never times them and writes `# replaced` lines instead. Every other reader's rows (OSU, IMB,
SKaMPI, OCC, detail.out, generic CSV) are measured by someone else: a row of a forced algorithm at a point
where its library replaces it holds the replacement's time, so `drop_replaced` takes it out of the table
before the decision map is built. Either way the decision map never credits the forced algorithm with
another's time, and `build` and `report` say where it happened.
"""

import os

import numpy as np

from ..libraries.base import DEFAULT_ALGORITHM, is_reduction

PREFIX = "# replaced "


def replaced_points(paths, collective=None):
    """[(collective, algorithm, segsize, comm_size, msg_size, runs)] of every `# replaced` line in `paths`
    (files that cannot be read as text are skipped: their reader reports them)."""
    out = []
    for path in paths:
        if not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                lines = [line for line in handle if line.startswith(PREFIX)]
        except OSError:
            continue
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


def replacement_of(library, row):
    """What runs instead of the row's forced algorithm at its point (None: the algorithm itself)."""
    from ..libraries import fallbacks
    if library is None or row.algorithm == DEFAULT_ALGORITHM or not fallbacks.known(library, row.collective):
        return None
    for size in TYPE_SIZES[is_reduction(row.collective)]:
        call = fallbacks.Call(row.comm_size, row.msg_size // size, size, segsize=row.segsize)
        runs = fallbacks.replacement(library, row.collective, row.algorithm, call)
        if runs is not None:
            return runs
    return None


def drop_replaced(rows, library, own_files=()):
    """(kept rows, [(collective, algorithm, segsize, comm, msg, runs)] dropped): rows of a forced algorithm at a
    point where `library` replaces it. Rows of `own_files` (measured by quadsel, whose `# replaced` lines
    already say where) are kept as they are."""
    from .identity import where
    kept, dropped = [], []
    for row in rows:
        runs = None if where(row.source)[0] in own_files else replacement_of(library, row)
        if runs is None:
            kept.append(row)
        else:
            dropped.append((row.collective, row.algorithm, row.segsize, row.comm_size, row.msg_size, runs))
    return kept, sorted(set(dropped), key=lambda p: (p[0], p[3], p[4], p[1], p[2]))


def drop_replaced_columns(cols, library, own_files=()):
    """drop_replaced on columns (ingest/column_table.py): each distinct (collective, algorithm, segsize, comm,
    msg) is looked up once."""
    from ..libraries import fallbacks
    from .table import Measurement
    if library is None or not len(cols) or not any(fallbacks.known(library, c) for c in cols.collectives):
        return cols, []
    own = np.array([path in own_files for path in cols.paths], dtype=bool)
    # only an algorithm some fallback names can be replaced (fallbacks.replacement's first step)
    named = {(c, f.algorithm) for c in cols.collectives for f in fallbacks.known(library, c)}
    pairs = [(i, j) for i, c in enumerate(cols.collectives) for j, a in enumerate(cols.labels) if (c, a) in named]
    ask = np.zeros(len(cols), dtype=bool)
    for i, j in pairs:
        ask |= (cols.collective == i) & (cols.algorithm == j)
    ask &= ~own[cols.file]
    if not ask.any():
        return cols, []
    keys = np.stack([cols.collective, cols.algorithm, cols.segsize, cols.comm_size, cols.msg_size], axis=1)[ask]
    distinct, inverse = np.unique(keys, axis=0, return_inverse=True)
    dropped, hit = [], np.zeros(len(distinct), dtype=bool)
    for i, (c, a, seg, n, m) in enumerate(distinct.tolist()):
        row = Measurement(cols.collectives[c], cols.labels[a], seg, n, m, 1.0)
        runs = replacement_of(library, row)
        if runs is not None:
            hit[i] = True
            dropped.append((row.collective, row.algorithm, seg, n, m, runs))
    mask = np.zeros(len(cols), dtype=bool)
    mask[ask] = hit[inverse.reshape(-1)]
    if not mask.any():
        return cols, []
    return cols.take(~mask), sorted(set(dropped), key=lambda p: (p[0], p[3], p[4], p[1], p[2]))


def replaced_note(paths, collective=None, show=6, extra=()):
    """One line for stderr / the report's notes, or None when no point was replaced. `extra`: points dropped
    from other benchmarks' rows (drop_replaced; DecisionMap.replaced)."""
    points = replaced_points(paths, collective) + [p for p in extra if collective is None or p[0] == collective]
    if not points:
        return None
    shown = "; ".join(f"{c} {a}{f'/seg{s}' if s else ''} at comm {n} msg {m} runs {r}"
                      for c, a, s, n, m, r in points[:show])
    more = f"; and {len(points) - show} more" if len(points) > show else ""
    return (f"{len(points)} point(s) where the library replaces the forced algorithm were not timed and are never "
            f"credited to it (docs/collectives.md): {shown}{more}")
