"""Crash-safe output: the generic CSV appended row by row (flushed), a journal of unfinished rounds,
and the metadata JSON beside the data. A `kill -9` loses at most the point in flight; a rerun with
the same arguments skips every row already written (`--resume`).

A stream output (`-o -`, a FIFO, a device: quadsel.output.is_stream) cannot be read back or have files
beside it: the metadata goes into the stream as `# quadsel-meta: {...}` comment lines (which every
reader skips and ingest reads the library from), the journal stays in memory and nothing is resumed.
"""

import csv
import io
import json
import os

from .. import output as atomic
from ..errors import QuadselError, one_line
from ..ingest.metadata import meta_path, read_meta
from ..ingest.table import GENERIC_COLUMNS, META_COMMENT
from ..inputs import read_text, text_lines
from . import resume
from .journal import Journal, append_whole, drop_partial_line, journal_path  # noqa: F401 (Journal: the runner's)

HEADER = ",".join(GENERIC_COLUMNS)
# A multi-host run's rows carry their layout (docs/formats-input.md, *The layout*); keys then end in (nodes, ppn)
LAYOUT_COLUMNS = GENERIC_COLUMNS[:3] + ("nodes", "ppn") + GENERIC_COLUMNS[3:]
LAYOUT_HEADER = ",".join(LAYOUT_COLUMNS)
# Adaptive measurement records what it did not measure as comment lines (every reader skips `#` lines):
#   # skipped bcast,1,0,256,1048576 behind: 3.10x the best at 524288 B, trend 2.95x
# `*` stands for every value of a column (a whole communicator size left out).
SKIPPED = "# skipped "
# Points where the library replaces the forced algorithm by another (libraries/fallbacks.py) are not timed:
#   # replaced allgather,3,0,3,1024 runs 2: comm size not a power of two (ompi/.../coll_base_allgather.c ...)
REPLACED = "# replaced "


# Set by the self-launcher for the second and later launches of its one-launch-per-method fallback:
# they continue one stream, so they must not repeat the header.
CONTINUED = "QUADSEL_MEASURE_CONTINUED"


class ResultFile:
    """The output CSV. `done` holds the keys (collective, algorithm, segsize, comm_size, msg_size) present;
    layouts=True (a multi-host run): the CSV has nodes and ppn columns and the keys end in (nodes, ppn)."""

    def __init__(self, path, resume=True, layouts=False):
        self.path = os.fspath(path)
        self.layouts = layouts
        self.header = LAYOUT_HEADER if layouts else HEADER
        self.done = set()
        self.values = {}     # key -> (time_us, stddev_us or None, reps or None), as written
        self.skipped = set()  # the key text of every `# skipped` line
        self.replaced = set()  # ... and of every `# replaced` line
        self.fatal = None     # called with the message when a write fails (the runner aborts the job)
        resume = resume or bool(os.environ.get(CONTINUED))   # a later launch never truncates the first's rows
        kind, target = atomic.check(self.path)     # no folder is created; a stream is written in place
        self.stream = kind in ("stdout", "fd", "special")
        if self.stream:
            self.handle = (open(target, "w", newline="") if kind == "special"
                           else os.fdopen(os.dup(target), "w", newline=""))
            if not os.environ.get(CONTINUED):
                try:
                    self._write(self.header + "\n")
                except QuadselError:
                    self.close()
                    raise
        else:
            # Opened for appending (never truncated before the lock is ours), then locked: a second run on the
            # same file, or one started while the ranks of a killed run still write, is refused.
            self.handle = open(self.path, "a", newline="")
            lock(self.handle, self.path)
            if resume and os.path.getsize(self.path) > 0:
                drop_partial_line(self.path)
                self._read_existing()
            else:
                self.handle.truncate(0)
            if os.path.getsize(self.path) == 0:
                self._write(self.header + "\n")

    def _read_existing(self):
        lines = text_lines(read_text(self.path, what="measure output"))
        self.skipped.update(_skip_key(text) for text in lines if text.startswith(SKIPPED))
        self.replaced.update(_skip_key(text) for text in lines if text.startswith(REPLACED))
        numbered = [(n, text) for n, text in enumerate(lines, 1) if not text.startswith("#")]
        if not numbered:
            return
        line, text = numbered[0]
        try:
            header = next(csv.reader([text]))
            header = tuple(h.strip() for h in header)
            if header not in (GENERIC_COLUMNS, LAYOUT_COLUMNS):
                raise QuadselError(f"{one_line(self.path)}: not a quadsel measure CSV (header "
                                   f"{one_line(','.join(header))[:200]!r}); use another --output or --no-resume")
            if (header == LAYOUT_COLUMNS) != self.layouts:
                raise QuadselError(f"{one_line(self.path)} holds rows {'with' if not self.layouts else 'without'} "
                                   f"nodes/ppn columns and this run is {'a multi-host' if self.layouts else 'a one-host'} "
                                   "run: use another --output or --no-resume")
            for line, text in numbered[1:]:
                row = next(csv.reader([text]))
                if self.layouts:   # collective,algorithm,segsize,nodes,ppn,comm_size,msg_size,...
                    row = row[:3] + row[5:7] + row[7:] + row[3:5]
                key = (row[0], row[1], int(row[2]), int(row[3]), int(row[4]))
                if self.layouts:
                    key += (int(row[8]), int(row[9]))
                self.values[key] = (float(row[5]), _optional(row[6], float), _optional(row[7], int))
                self.done.add(key)
        except (csv.Error, IndexError, ValueError, StopIteration):
            raise QuadselError(f"{one_line(self.path)}:{line}: malformed row; fix it or use --no-resume") from None

    def _write(self, text):
        """One row per write + flush: a killed run keeps every finished row. A failed write (a full disk) is cut
        off again, so the file ends with whole rows and resumes; then `fatal` (the job's abort) or an error."""
        try:
            if self.stream:
                self.handle.write(text)
                self.handle.flush()
                return
            self.handle.flush()
            append_whole(self.handle.fileno(), text.encode("utf-8"))
        except OSError as exc:
            if self.stream:   # a full disk behind the pipe, a reader gone: nothing to resume
                message = (f"cannot write {'stdout' if self.path == '-' else one_line(self.path)}: "
                           f"{exc.strerror or exc}; the {len(self.done)} rows streamed so far went there")
            else:
                message = (f"cannot write {one_line(self.path)}: {exc.strerror or exc}; the {len(self.done)} rows "
                           "written so far are kept: make room and run the same command again to resume")
            if self.fatal is not None:
                self.fatal(message)
            raise QuadselError(message) from None

    def append(self, key, mean_us, stddev_us, reps):
        """Write one row; returns the values as written (rounded), which is what a resumed run reads."""
        collective, algorithm, segsize, comm_size, msg_size = key[:5]
        layout = list(key[5:7])       # [nodes, ppn] of a multi-host run's key, else none
        buf = io.StringIO()
        cells = [f"{mean_us:.3f}", "" if stddev_us is None else f"{stddev_us:.3f}", "" if reps is None else reps]
        csv.writer(buf, lineterminator="\n").writerow([collective, algorithm, segsize, *layout, comm_size, msg_size,
                                                       *cells])
        self._write(buf.getvalue())
        self.done.add(key)
        self.values[key] = (float(cells[0]), _optional(cells[1], float), _optional(cells[2], int))
        return self.values[key]

    def append_skipped(self, key, reason):
        """A `# skipped` line for `key` (a 5-tuple; `*` for every value), once per key."""
        text = ",".join(str(v) for v in key)
        if text in self.skipped:
            return
        self._write(f"{SKIPPED}{text} {' '.join(str(reason).split())}\n")
        self.skipped.add(text)

    def append_replaced(self, key, runs, reason):
        """A `# replaced` line: at `key` the library runs `runs` instead of the forced algorithm; once per key."""
        text = ",".join(str(v) for v in key)
        if text in self.replaced:
            return
        self._write(f"{REPLACED}{text} runs {runs}: {' '.join(str(reason).split())}\n")
        self.replaced.add(text)

    def append_note(self, text):
        self._write(f"# {' '.join(str(text).split())}\n")

    def write_meta(self, meta):
        """The metadata beside the CSV, or (stream) as a comment line in it."""
        if self.stream:
            self._write(f"{META_COMMENT} {json.dumps(meta, sort_keys=False)}\n")
        else:
            write_meta(self.path, meta)

    def close(self):
        try:
            self.handle.close()
        except OSError:
            pass   # a stream whose last flush failed: that write reported it


LOCKED = "is being written by another quadsel measure"


def lock(handle, path):
    """An exclusive lock on the open output for as long as it is open (quadsel.output.lock_exclusive)."""
    if not atomic.lock_exclusive(handle):
        handle.close()
        raise QuadselError(f"{one_line(path)} {LOCKED} (still running, or the MPI ranks of one that was killed): "
                           "wait for it to end, or use another -o")


def check_unlocked(path):
    """Refuse (QuadselError) at once when a live run holds `path`: before any MPI job is started."""
    if atomic.is_stream(path) or not os.path.isfile(path):
        return
    try:
        handle = open(path, "a")
    except OSError:
        return   # output.check reports what is wrong with the path
    with handle:
        lock(handle, path)


def check_resume(path, collective, library, grid):
    """A resumed output holds this collective, library and datatype, or it is refused in one line (never appended
    to or its metadata replaced). Another grid is resumed (measure/resume.py): the note that says so is returned
    (None: the same grid, or nothing to resume). `grid`: {"comm_sizes", "msg_sizes", "methods", "datatype"} of
    the new run, any of them None when not known yet."""
    if atomic.is_stream(path) or not os.path.isfile(path) or os.path.getsize(path) == 0:
        return None
    shown = one_line(path)
    found = set()
    content = read_text(path, what="measure output")
    lines = text_lines(content)
    if lines and not content.endswith("\n"):
        lines.pop()   # a row torn by a kill: cut off when the file is resumed
    for line, text in enumerate(lines, 1):
        if line > 1 and text and not text.startswith("#"):
            found.add(text.split(",", 1)[0])
    if found - {collective}:
        raise QuadselError(f"{shown} holds {', '.join(sorted(map(one_line, found)))[:80]} measurements, not "
                           f"{collective}: use another -o (--no-resume would replace them)")
    old = read_meta(path)
    if not old:
        return None
    if old.get("collective", collective) != collective:
        raise QuadselError(f"{shown} is a {one_line(old.get('collective'))} run (its metadata), not {collective}: "
                           "use another -o")
    if library is not None and old.get("library") not in (None, library):
        raise QuadselError(f"{shown} holds {one_line(old.get('library'))} data and this is {library}; use another -o "
                           "or --no-resume")
    recorded = old.get("grid") if isinstance(old.get("grid"), dict) else {}
    for key, what in (("datatype", "datatype"), ("layouts", "layouts")):   # what a time means, where it ran
        new, had = grid.get(key), recorded.get(key)
        if new is not None and had is not None and new != had:
            raise QuadselError(f"{shown} was measured with other {what} ({_short(had)}; this run: {_short(new)}): "
                               f"use the same --{what}, another -o or --no-resume")
    return resume.note(path, recorded, grid)


def _short(value):
    text = ",".join(map(str, value)) if isinstance(value, list) else str(value)
    return one_line(text, 60)


def _optional(cell, kind):
    return None if cell in ("", None) else kind(cell)


def _skip_key(line):
    """The key text of a `# skipped` or `# replaced` line."""
    return line.split(" ", 3)[2]


def write_meta(path, meta):
    atomic.write_text(meta_path(path), json.dumps(meta, indent=2, sort_keys=False) + "\n")


def interrupted_note(path):
    """The one line a Ctrl-C prints: what was kept and how to go on."""
    shown = one_line(path)
    if atomic.is_stream(path):
        return (f"quadsel measure: interrupted; the rows measured so far went to {'stdout' if path == '-' else shown}, "
                "which cannot be resumed: run the command again (with -o FILE a rerun resumes)")
    try:
        lines = text_lines(read_text(path, what="measure output"))
    except QuadselError:
        return f"quadsel measure: interrupted before any row was written to {shown}; run the command again"
    rows = sum(1 for text in lines[1:] if text.strip() and not text.startswith("#"))
    journal = journal_path(path)
    rounds = ""
    if journal and os.path.exists(journal):
        rounds = f" (and finished rounds of unfinished points in {one_line(journal)})"
    return (f"quadsel measure: interrupted; {rows} row{'s' if rows != 1 else ''} kept in {shown}{rounds}; "
            "run the same command again to resume")
