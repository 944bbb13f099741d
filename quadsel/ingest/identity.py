"""Which MPI library and which method every measurement is (docs/formats-input.md, "Identity").

- A file's library is what its metadata says (`NAME.meta.json` beside it, or `# quadsel-meta:` lines in a
  streamed CSV), else what its algorithm labels show (ids are Open MPI's; a name only one library has).
- Measurements of two libraries are never merged into one decision map: that is an error.
- With the library known, every algorithm label becomes the one `quadsel measure` writes (Open MPI: the id;
  MPICH: the CVAR name), so an algorithm under its name and under its id is one method; ids the library does
  not have are errors at their line; names that cannot be resolved are kept, with a note saying so.
- The library default has no segment size: its rows under several segment-size labels are one baseline.
- Two methods whose times are within 5 % at nearly every point they share get a warning (a relabelled copy).
"""

import functools
import os
import re
from collections import defaultdict
from dataclasses import replace

from ..errors import InputError, QuadselError, one_line
from ..inputs import read_text
from ..libraries import canonical_label, get as get_library, label_evidence, library_name, title
from .metadata import load_meta, measured_by_quadsel, meta_path
from .table import DEFAULT_ALGORITHM, META_COMMENT

# Indistinguishable: within SAME_WITHIN of each other at >= SAME_SHARE of >= SAME_MIN_POINTS shared points.
# Distinct algorithms agree within 5 % at <= 17 % of their points in the ORFEO data, <= 83 % in examples/.
SAME_WITHIN, SAME_SHARE, SAME_MIN_POINTS = 0.05, 0.95, 8


def where(source):
    """A Measurement's source "file:line" (maybe with " (+N repeats)") -> (file, line or None)."""
    source = re.sub(r" \(\+[0-9]+ repeats\)$", "", source)
    path, _, line = source.rpartition(":")
    return (path, int(line)) if path and line.isdigit() else (source, None)


def _title(library):
    return title(library)


def file_library(path, lines, rows, notes, by_names=True):
    """(library or None, how it is known, labels its metadata lists) of one file. `by_names` False (--library said
    whose the file is): the algorithm names are not evidence, so names of two libraries are no error.

    The labels a `quadsel measure` run lists (grid.algorithms) are the library's own, read from MPI_T:
    they stand as they are even where quadsel's tables lack them (a newer library's algorithm)."""
    meta, how, source = None, None, path
    for text in lines:       # (the metadata lines only, for a file read as columns: their line is not known)
        if text.startswith(META_COMMENT):
            meta, how = _parse_meta(text[len(META_COMMENT):], path, notes, 0), "its # quadsel-meta line"
    beside = meta_path(path)
    if meta is None and os.path.exists(beside):
        try:
            meta, how, source = (_parse_meta(read_text(beside, what="metadata"), beside, notes),
                                 os.path.basename(beside), beside)
        except InputError as exc:
            notes.append(f"note: ignored {exc}")
    library = meta.get("library") if isinstance(meta, dict) else None
    recorded = meta.get("collective") if isinstance(meta, dict) else None
    found = {m.collective for m in rows}
    if isinstance(recorded, str) and found and recorded not in found:
        raise InputError(source, None, f"the metadata says {one_line(recorded, 40)!r} and {one_line(os.path.basename(path))} "
                                       f"holds {', '.join(sorted(map(repr, found))[:3])} rows: it is of another "
                                       "measurement (remove or fix it)")
    if isinstance(meta, dict) and meta.get("oversubscribed") is True:
        notes.append(oversubscribed_note(os.path.basename(path), meta))
    if isinstance(library, str) and library.strip() and library != "replay":
        try:
            library = library_name(library, where='"library"')
        except QuadselError as exc:
            raise InputError(source, None, str(exc)) from None
        grid = meta.get("grid")
        listed = grid.get("algorithms") if isinstance(grid, dict) else None
        return library, how, set(map(str, listed)) if isinstance(listed, (dict, list)) else set()
    evidence = defaultdict(set)
    for m in rows if by_names else ():
        if not m.is_default:
            for name in label_evidence(m.collective, m.algorithm):
                evidence[name].add(m.algorithm)
    if len(evidence) > 1:
        shown = " and ".join(f"{_title(lib)} ({', '.join(sorted(map(repr, labels))[:3])})"
                             for lib, labels in sorted(evidence.items()))
        raise InputError(path, None, f"its algorithm names are of {shown}: measurements of two MPI libraries "
                                     "are never merged (split the file, or say its library in a .meta.json)")
    for library, labels in evidence.items():
        return library, f"its algorithm names ({', '.join(sorted(map(repr, labels))[:3])})", set()
    return None, None, set()


def oversubscribed_note(what, meta):
    """The one line every command prints where figures of an oversubscribed run appear (measure, verify, report)."""
    per_host = meta.get("ranks_per_node")
    ranks = max((v for v in per_host.values() if isinstance(v, int)), default="?") if isinstance(per_host, dict) \
        else meta.get("np", "?")
    cpus = (meta.get("machine") or {}).get("cpus", "?") if isinstance(meta.get("machine"), dict) else "?"
    return (f"note: {one_line(what)}: {one_line(ranks)} ranks on a host of {one_line(cpus)} cores (oversubscribed): "
            f"times above {one_line(cpus)} ranks describe time sharing on that machine, not a cluster")


def _parse_meta(text, path, notes, line=None):
    """The metadata in `text` (checked: ingest/metadata.load_meta), or None with a note naming what is wrong: the
    algorithm labels then tell the library."""
    try:
        return load_meta(path, text, line)
    except InputError as exc:
        notes.append(f"note: ignored {exc}")
        return None


def _library(files, notes, library):
    """(the library of every file, [the labels each file's metadata lists]) of [(path, lines, rows)]."""
    known, listed = {}, []
    for path, lines, rows in files:
        found, how, labels = file_library(path, lines, rows, notes if library is None else [], library is None)
        if library is not None:
            if found and found != library:
                notes.append(f"note: {one_line(path)}: read as {_title(library)} (--library) although {how} "
                             f"says {_title(found)}")
            found, how, labels = library, "--library", set()
        listed.append(labels)
        if found:
            known.setdefault(found, (path, how))
    if len(known) > 1:
        (lib_a, (path_a, how_a)), (lib_b, (path_b, how_b)) = sorted(known.items())
        raise QuadselError(f"{one_line(path_a)} holds {_title(lib_a)} measurements ({how_a}) and {one_line(path_b)} "
                           f"{_title(lib_b)} ones ({how_b}): a decision map is one library's; build one per library")
    return next(iter(known), None), listed


def resolve(files, notes, library=None):
    """Rows of every file with one identity per method; `files` is [(path, lines, rows)].

    `library` (--library): the library of every file, over what metadata or labels say (a note where they
    differ). Returns (rows, library or None); appends notes (one line each) to `notes`.
    """
    library, listed = _library(files, notes, library)
    out, renamed, unresolved, default_segments = [], {}, set(), defaultdict(set)
    canonical = functools.lru_cache(maxsize=None)(canonical_label)     # one look-up per distinct label
    for (_, _, rows), labels in zip(files, listed):
        for m in rows:
            if m.algorithm in labels and not m.is_default:
                out.append(m)   # as the library itself named it (its metadata)
                continue
            if m.is_default:
                if m.segsize:
                    default_segments[where(m.source)[0]].add(m.segsize)
                out.append(replace(m, segsize=0) if m.segsize else m)
                continue
            label = canonical(library, m.collective, m.algorithm) if library else None
            if label is None:
                _check_unresolved(library, m)
                unresolved.add((m.collective, m.algorithm))
                out.append(m)
                continue
            if label != m.algorithm:
                renamed[(m.collective, m.algorithm)] = label
                m = replace(m, algorithm=label)
            out.append(m)
    _identity_notes(library, renamed, unresolved, default_segments, notes)
    return out, library


class _Label:
    """One distinct (collective, algorithm) of a file's columns, as file_library reads a row."""

    def __init__(self, collective, algorithm):
        self.collective, self.algorithm = collective, algorithm
        self.is_default = algorithm == DEFAULT_ALGORITHM


def resolve_columns(files, notes, library=None):
    """resolve() of files read as columns ([(path, lines, Columns)]), decided once per distinct label: (one
    Columns, library). column_table.RowsNeeded where a label is an error at its line (the rows raise it)."""
    import numpy as np
    from .column_table import Columns, RowsNeeded, distinct
    pairs = [distinct(cols.collective, cols.algorithm)[0].tolist() for _, _, cols in files]
    labelled = [(path, lines, [_Label(cols.collectives[c], cols.labels[a]) for c, a in found])
                for (path, lines, cols), found in zip(files, pairs)]
    library, listed = _library(labelled, notes, library)      # two libraries: its error, as the rows give it
    renamed, unresolved, default_segments, parts = {}, set(), defaultdict(set), []
    for (path, _, cols), labels, found in zip(files, listed, pairs):
        codes = np.arange(len(cols.labels))
        new_labels = list(cols.labels)
        for c, a in found:
            collective, algorithm = cols.collectives[c], cols.labels[a]
            if (algorithm in labels and algorithm != DEFAULT_ALGORITHM) or algorithm == DEFAULT_ALGORITHM:
                continue
            label = canonical_label(library, collective, algorithm) if library else None
            if label is None:
                if get_library(library).known and algorithm.isascii() and algorithm.isdigit():
                    raise RowsNeeded("an algorithm id the library does not have")
                unresolved.add((collective, algorithm))
            elif label != algorithm:
                if len(cols.collectives) > 1:
                    raise RowsNeeded("a label renamed in one collective of several")
                renamed[(collective, algorithm)] = label
                new_labels.append(label)
                codes[a] = len(new_labels) - 1
        default = cols.is_default() & (cols.segsize != 0)
        if default.any():
            default_segments[path].update(np.unique(cols.segsize[default]).tolist())
            cols = replace(cols, segsize=np.where(default, 0, cols.segsize))
        distinct = sorted(set(new_labels))
        remap = np.array([distinct.index(label) for label in new_labels], dtype=np.int64)
        parts.append(replace(cols, labels=distinct, algorithm=remap[codes[cols.algorithm]]))
    _identity_notes(library, renamed, unresolved, default_segments, notes)
    return Columns.concat(parts), library


def _check_unresolved(library, m):
    """An id the known library does not have is an error at its line (it would be forced as something else)."""
    if not get_library(library).known or not (m.algorithm.isascii() and m.algorithm.isdigit()):
        return   # a library quadsel has no tables for: its ids are its own
    path, line = where(m.source)
    own = get_library(library)
    raise InputError(path, line, f"algorithm id {m.algorithm} is not one of {own.title}'s {m.collective} algorithms "
                                 f"({own.known_ids(m.collective)})")


def _identity_notes(library, renamed, unresolved, default_segments, notes):
    if renamed:
        shown = ", ".join(f"{one_line(name)!r} -> {label}" for (_, name), label in sorted(renamed.items())[:6])
        notes.append(f"note: {_title(library)} algorithm names read as the ids `quadsel measure` writes: {shown}"
                     + (" ..." if len(renamed) > 6 else ""))
    names = sorted(one_line(alg) for _, alg in unresolved if not (alg.isascii() and alg.isdigit()))
    if names and library is None:
        notes.append(f"note: the MPI library of these measurements is unknown (no .meta.json; names such as "
                     f"{names[0]!r} belong to both libraries or neither): algorithm names are kept as written, so one "
                     "algorithm under two names or a name and an id would be two methods")
    elif names:
        notes.append(f"note: {', '.join(map(repr, names[:6]))}{' ...' if len(names) > 6 else ''}: not "
                     f"{_title(library)} algorithms quadsel knows; kept as methods of their own")
    for path, segments in sorted(default_segments.items()):
        notes.append(f"note: {one_line(path)}: the library default is measured under segment sizes "
                     f"{', '.join(map(str, sorted(segments | {0})))[:80]}; it has none, so these rows are pooled "
                     "as one baseline (the median per point)")


def indistinguishable(rows):
    """Warnings about pairs of methods (not merely two segment sizes of one algorithm) that agree within
    SAME_WITHIN at >= SAME_SHARE of >= SAME_MIN_POINTS shared points: one file may be a relabelled copy.
    (One matrix of times per collective, point x method; each pair compared as two columns.)"""
    import numpy as np
    index, points, sources, cells = {}, {}, defaultdict(set), []
    for m in rows:
        if not m.is_default:
            key = (m.collective, m.algorithm, m.segsize)
            k = index.setdefault(key, len(index))
            p = points.setdefault((m.collective, m.comm_size, m.msg_size), len(points))
            cells.append((p, k, m.time))
            sources[key].add(m.source.split(" (+")[0].rpartition(":")[0] or m.source)
    if not index:
        return []
    times = np.full((len(points), len(index)), np.nan)
    p, k, t = zip(*cells)
    times[list(p), list(k)] = t
    return alike_methods(index, times, sources)


def alike_methods(index, times, sources):
    """indistinguishable's warnings from {key (collective, algorithm, segsize): column of `times`}, the times
    (point x column, NaN where unmeasured) and {key: the files it was read from}."""
    import numpy as np
    keys = sorted(index, key=str)
    warnings = []
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            if a[0] != b[0] or a[1] == b[1]:
                continue
            ta, tb = times[:, index[a]], times[:, index[b]]
            shared = ~np.isnan(ta) & ~np.isnan(tb)
            n_shared = int(shared.sum())
            if n_shared < SAME_MIN_POINTS:
                continue
            ta, tb = ta[shared], tb[shared]
            same = int(np.count_nonzero(np.abs(ta - tb) <= SAME_WITHIN * np.minimum(ta, tb)))
            if same >= SAME_SHARE * n_shared:
                label = lambda k: one_line(k[1] if not k[2] else f"{k[1]}/seg{k[2]}")
                paths = sources[a] | sources[b]
                files = ", ".join(sorted(one_line(os.path.basename(s)) for s in paths))[:200]
                alike = (f"{a[0]} methods {label(a)} and {label(b)} are within {SAME_WITHIN:.0%} of each other at "
                         f"{same} of their {n_shared} shared points")
                if len(paths) == 1 and measured_by_quadsel(next(iter(paths))):
                    # one `quadsel measure` run forced each algorithm itself: no copy, two algorithms alike here
                    warnings.append(f"note: {alike} of one quadsel measure run ({files}): they time alike on this "
                                    "machine (often the same code at these sizes); the builders treat such methods "
                                    "as ties within the noise")
                else:
                    warnings.append(f"warning: {alike}: is one a relabelled copy or re-run of the other? ({files})")
    return warnings
