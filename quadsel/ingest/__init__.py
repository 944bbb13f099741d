"""Readers of benchmark output files. Every reader returns the tidy table (list of Measurement).

One module per format; docs/formats-input.md describes each format and where every field comes from.
"""

import os
import stat

from ..errors import QuadselError, one_line
from . import detail, imb, metadata, occ, osu, skampi
from .aggregate import aggregate
from .columns import FIELDS
from .common import Context, Extent, OtherCollective, read_content
from .detect import detect_format
from .names import COLLECTIVES, normalise_collective
from .table import DEFAULT_ALGORITHM, GENERIC_COLUMNS, META_COMMENT, Measurement, Table  # noqa: F401

# The modules with NumPy (csvfile, column_table, identity, replaced) are imported where they are used: importing
# quadsel.ingest (every command's options do) stays light, and `quadsel --version` with it (docs/architecture.md).
FORMATS = ("auto", "csv", "skampi", "osu", "imb", "detail", "occ")
READERS = {"skampi": skampi.read, "osu": osu.read, "imb": imb.read, "detail": detail.read, "occ": occ.read}

__all__ = ["FORMATS", "Measurement", "DEFAULT_ALGORITHM", "GENERIC_COLUMNS", "Table",
           "read_measurements", "detect_format", "aggregate"]


def read_measurements(paths, fmt="auto", collective=None, comm_size=None, column_map=None, library=None,
                      columns=False, layout=None):
    """Read one or more files into one aggregated, sorted Table of Measurement (with .notes and .library).

    collective: used when a file does not name it, and keeps only that collective's rows otherwise; a file
    whose content or name names another collective is left out with a note (an error if nothing is left).
    comm_size: for files that do not record it (OSU). column_map: {field: column name} for CSV headers
    (--map). fmt "auto" detects each file by content. library: the MPI library of every file (--library; any
    name, see libraries.library_name), over metadata and labels. Identity rules (library, method names): identity.py.
    columns=True: a column_table.ColumnTable when every file was read as columns (a plain CSV sweep, no repeats),
    the same table without a Measurement object per row. layout: (nodes, ppn) of every row whose file has no
    layout columns (--layout NODESxPPN; docs/formats-input.md, The layout).
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = list(paths)
    if not paths:
        raise QuadselError("no input files")
    if fmt not in FORMATS:
        raise QuadselError(f"unknown input format {fmt!r}; choose one of {', '.join(FORMATS)}")
    wanted = _collective_option(collective)
    for field in column_map or {}:
        if field not in FIELDS:
            raise QuadselError(f"--map field {field!r} is not one of {', '.join(FIELDS)}")
    files, left_out, notes, extent = [], [], [], Extent()
    paths, twice = _each_once(paths)
    if twice:     # its rows would count as repeats of themselves: the same points, a smaller spread
        shown = one_line(", ".join(os.fspath(p) for p in twice[:8]) + (" ..." if len(twice) > 8 else ""))
        notes.append(f"note: read once, given more than once: {shown}")
    for path in paths:
        try:
            files.append((path, *_read_file(path, fmt, wanted, comm_size, column_map, extent, layout)))
        except OtherCollective as exc:
            left_out.append(exc)
    if left_out:
        if not files and len(left_out) == 1:
            raise left_out[0]
        shown = ", ".join(f"{os.path.basename(exc.path)} ({', '.join(exc.found)})" for exc in left_out[:8])
        shown = one_line(shown + (" ..." if len(left_out) > 8 else ""))
        if not files:
            raise QuadselError(f"no {wanted} measurements in any input file: {shown}")
        notes.append(f"note: left out {len(left_out)} file{'s' if len(left_out) > 1 else ''} of other collectives "
                     f"(--collective {wanted} selects files, it never relabels them): {shown}")
    from . import identity
    from .column_table import Columns, RowsNeeded
    from .replaced import drop_replaced
    if all(isinstance(rows, Columns) for _, _, rows in files):
        try:
            return _columns_table(files, list(notes), library, columns)
        except RowsNeeded:
            pass
    files = [(path, lines, rows.rows() if isinstance(rows, Columns) else rows) for path, lines, rows in files]
    rows, library = identity.resolve(files, notes, library)
    rows, replaced = drop_replaced(rows, library, _own_files(files))
    rows = aggregate(rows)
    table = Table(rows, notes + identity.indistinguishable(rows), library, aggregated=True)
    table.replaced = _with_measured(replaced, files, wanted)
    return table


def _each_once(paths):
    """(paths with each file once, the later names of a file given again): the same file (device and inode, so also
    through another name or a link) read twice would pool its rows as repeats of themselves -- the same times, a
    standard error sqrt(2) smaller, and another tree. Paths that cannot be stat'ed are kept, for their reader's error."""
    seen, out, again = set(), [], []
    for path in paths:
        try:
            info = os.stat(path)
        except (OSError, TypeError, ValueError):
            out.append(path)
            continue
        key = (info.st_dev, info.st_ino)
        if key in seen and stat.S_ISREG(info.st_mode):
            again.append(path)
            continue
        seen.add(key)
        out.append(path)
    return out, again


def _columns_table(files, notes, library, as_columns):
    """read_measurements' last steps on columns (column_table.py): RowsNeeded where the rows must decide."""
    from . import column_table, identity
    from .column_table import ColumnTable
    from .replaced import replaced_rows
    cols, library = identity.resolve_columns(files, notes, library)
    dropped, replaced = replaced_rows(cols, library, _own_files(files))
    cols = column_table.aggregate(cols, ~dropped)
    notes += identity.alike_methods(*_matrix(cols))
    table = ColumnTable(cols, notes, library) if as_columns else Table(cols.rows(), notes, library, aggregated=True)
    table.replaced = _with_measured(replaced, files, None)
    return table


def _with_measured(dropped, files, collective):
    """The points dropped from other benchmarks' rows and those `quadsel measure` wrote as `# replaced` lines (never
    timed): the builders must know both -- where the forced algorithm fails the call (`runs error`), a tree may not
    choose it (decision/grid.py refused_points)."""
    from .replaced import replaced_points
    seen = set(dropped)
    return list(dropped) + [p for p in replaced_points([path for path, _, _ in files], collective) if p not in seen]


def _own_files(files):
    """The files quadsel measure wrote (their `# replaced` lines say where the library replaced an algorithm), as
    the rows' sources name them."""
    return {os.fspath(path) for path, _, _ in files if metadata.measured_by_quadsel(path)}


def _matrix(cols):
    from . import column_table
    keys, times, sources = column_table.method_matrix(cols)
    return {key: j for j, key in enumerate(keys)}, times, sources


def _collective_option(collective):
    if collective is None or not str(collective).strip():
        return None
    name = normalise_collective(collective)
    if name is None:
        raise QuadselError(f"unknown collective {collective!r}; known: {', '.join(sorted(COLLECTIVES))}")
    return name


def _read_file(path, fmt, collective, comm_size, column_map, extent=None, layout=None):
    text = read_content(path)      # split into lines only when a reader asks for them (not a plain sweep)
    if fmt == "auto":
        fmt = detect_format(path, text=text)
    ctx = Context(path, None, collective=collective, comm_size=comm_size, column_map=column_map, extent=extent,
                  text=text, layout=layout)
    reader = READERS.get(fmt)
    if fmt == "csv":
        from . import csvfile
        reader = csvfile.read
        cols = csvfile.read_columns(ctx)
        seen = None if cols is None else ctx.extent.of_columns(cols)
        if cols is not None and ctx.extent.admits(seen):
            return _columns_of(ctx, cols, seen, collective)
    rows = reader(ctx)
    if not rows:
        raise ctx.error(None, f"no data rows (read as {fmt})")
    if collective:
        found = sorted({m.collective for m in rows})
        rows = [m for m in rows if m.collective == collective]
        if not rows:
            raise OtherCollective(path, f"no {collective} measurements (the file has {', '.join(found)})", found)
    ctx.extent.update(path, None, rows)
    return ctx.lines, rows


def _columns_of(ctx, cols, seen, collective):
    """_read_file's end for a file read as columns: its collective kept, its extent counted as the rows would
    count it (every CHECK_EVERY rows while reading, then the kept rows); its metadata lines for identity."""
    if collective and cols.collectives != [collective]:
        from . import csvfile
        read = len(cols) - len(cols) % csvfile.CHECK_EVERY
        ctx.extent.add(ctx.extent.of_columns(cols.take(slice(0, read))))
        if collective not in cols.collectives:
            raise OtherCollective(ctx.path, f"no {collective} measurements (the file has "
                                            f"{', '.join(cols.collectives)})", cols.collectives)
        cols = cols.take(cols.collective == cols.collectives.index(collective))
        seen = ctx.extent.of_columns(cols)
    ctx.extent.add(seen)
    if ctx.text is not None and META_COMMENT not in ctx.text:
        return [], cols
    return [text for text in ctx.lines if text.startswith(META_COMMENT)], cols
