"""The folder `quadsel tune -o DIR` writes, and its journal.

DIR/measurements/COLL.csv (+ .meta.json)   what `quadsel measure` measured (later builds can reuse them)
DIR/trees/COLL.qt.json                     the default build of each collective
DIR/<the library's file>                   what the library reads (deploy.py), only the collectives worth it
DIR/tuned.env                              the variables to set before mpiexec (`. DIR/tuned.env`)
DIR/verify/first.json, DIR/verify/pruned.json   verify's results on the deployed file, before and after pruning
DIR/report.md, DIR/figures/                the report and the decision maps
DIR/tune.json                              the journal: the run's settings and every finished step
DIR/.tune.lock                             locked (flock) while a tune runs there: a second one is refused

Every file is written whole (quadsel.output: atomic replace); the journal after each finished step, so that a
rerun after Ctrl-C, kill -9 or a job's time limit continues where the last run stopped: `quadsel measure`
resumes its CSV point by point, and a finished step is not run again while its inputs are unchanged (their
SHA-256 is recorded with it).

The folder is tune's own (issue 41): a folder that holds files and no journal is refused before anything is
written, and the journal's `written` records every file tune wrote with its SHA-256 (a measurement by its name:
measure appends to it), so that tune replaces or removes only a file it wrote and nobody changed since. A run that
fails before it finished any step leaves nothing of its own behind (`abandon`).
"""

import hashlib
import json
import os

from ..errors import QuadselError, one_line
from ..inputs import own_folder
from ..output import lock_exclusive, make_folder, write_text

JOURNAL = "tune.json"
LOCK = ".tune.lock"
VERSION = 1
# The settings a rerun must share with the run it continues (anything else is a different tuning).
SETTINGS = ("library", "library_version", "np", "comm_sizes", "msg_sizes", "strategy",
            "mpiexec_args", "layouts", "sync")      # the last three: None on one host


MEASUREMENT = "measurement"     # `written` value of a file measure appends to (no digest: it grows)


class Folder:
    def __init__(self, path):
        self.path = path
        self._lock = None
        self.journal = None          # set by the Journal: its `written` ledger
        self._created = []           # what make() created, removed again by abandon()
        own_folder(path)     # tune replaces what it wrote there on a rerun: its own outputs, not inputs

    def __call__(self, *parts):
        return os.path.join(self.path, *parts)

    def measurement(self, collective):
        return self("measurements", f"{collective}.csv")

    def tree(self, collective):
        return self("trees", f"{collective}.qt.json")

    def check_ours(self):
        """A folder that holds files and no tune journal is someone else's: refused in one line, before anything."""
        try:
            entries = [e for e in os.listdir(self.path) if e != LOCK]
        except FileNotFoundError:
            return
        except OSError as exc:
            raise QuadselError(f"cannot read {one_line(self.path)}: {exc.strerror or exc}") from None
        if entries and JOURNAL not in entries:
            raise QuadselError(f"{one_line(self.path)} holds files and no tune journal ({JOURNAL}): tune writes into a "
                               "new or empty folder, or one a tune made; give another -o folder")

    def make(self):
        """The folder and its subfolders (the folder's parent must exist, as for every quadsel output), locked for
        this process's life: a second tune on the same folder is refused in one line. The lock dies with the
        process (kill -9 included), so a rerun takes it at once; what still holds a measurement's CSV then is the
        ranks of the killed run, which end on their own (steps.py waits for them)."""
        self.check_ours()
        made = [path for path in (self.path, self(LOCK)) if not os.path.exists(path)]
        make_folder(self.path)
        self._lock = _lock(self(LOCK), self.path)
        for sub in ("measurements", "trees", "verify"):
            if not os.path.isdir(self(sub)):
                made.append(self(sub))
            make_folder(self(sub))
        self._created = made

    def abandon(self):
        """A run that failed before it wrote anything but its journal: what this run created goes again (the
        journal, the lock, its empty subfolders, the folder when it made it), so that the same command, corrected,
        starts anew. Anything else there keeps the journal too: the rerun continues from it."""
        if self.journal is None or self.journal.existed or self.journal.data["steps"] or self.journal.written:
            return
        subs = [p for p in self._created if os.path.isdir(p) and p != self.path]
        if any(os.listdir(p) for p in subs):
            return
        self.release()
        for path in [self(JOURNAL)] + self._created[::-1]:
            try:
                os.rmdir(path) if os.path.isdir(path) else os.unlink(path)
            except OSError:
                pass     # not empty, or already gone: it stays

    # -- tune's own files: written, replaced and removed only through here ---------------------------------
    def _owned(self, path, action):
        """QuadselError unless tune may `action` the existing file at `path`: it wrote it, and it is unchanged."""
        if not os.path.lexists(path):
            return
        rel = os.path.relpath(path, self.path)
        recorded = self.journal.written.get(rel) if self.journal is not None else None
        if recorded is None:
            raise QuadselError(f"{one_line(path)} was not written by quadsel tune: it is not {action} (move it away, "
                               "or give another -o folder)")
        if recorded != MEASUREMENT and _digests([path])[os.path.basename(path)] != recorded:
            raise QuadselError(f"{one_line(path)} was changed since quadsel tune wrote it: it is not {action} (move "
                               "it away, or give another -o folder)")

    def write(self, path, text):
        """Write one of tune's files (replacing only what it wrote), and record its digest."""
        self._owned(path, "replaced")
        write_text(path, text)
        self.record(path)

    def record(self, path, kind=None):
        """Note a file tune wrote (kind MEASUREMENT: a measurement, recorded by name)."""
        self.journal.written[os.path.relpath(path, self.path)] = kind or _digests([path])[os.path.basename(path)]
        self.journal.save()

    def claim(self, path, kind=None):
        """Before tune writes `path` by other means (a figure, a measurement): it must be tune's, or not there."""
        if kind == MEASUREMENT and self.journal.written.get(os.path.relpath(path, self.path)) == MEASUREMENT:
            return
        self._owned(path, "replaced")

    def remove(self, path):
        """Remove one of tune's files (a deployment not deployed again)."""
        self._owned(path, "removed")
        if os.path.lexists(path):
            os.unlink(path)
        self.journal.written.pop(os.path.relpath(path, self.path), None)
        self.journal.save()

    def release(self):
        """The folder's lock released (the end of the run)."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None


class Journal:
    """tune.json: {"version", "settings", "steps": {name: {"inputs": {path: sha256}, ...result}}}."""

    def __init__(self, folder, settings):
        self.folder, self.path = folder, folder(JOURNAL)
        self.data = {"format": "quadsel-tune", "version": VERSION, "settings": settings, "steps": {}, "written": {}}
        folder.journal = self
        self.existed = os.path.exists(self.path)
        if self.existed:
            old = _read(self.path)
            differ = [k for k in SETTINGS if old["settings"].get(k) != settings.get(k)]
            if differ and (old["steps"] or _measured_anything(folder)):
                raise QuadselError(f"{one_line(folder.path)} holds a tuning with other settings ("
                                   + ", ".join(f"{k} {old['settings'].get(k)!r} there, {settings.get(k)!r} now"
                                               for k in differ)
                                   + "): give another -o folder, or the same settings to continue it")
            self.data["steps"], self.data["written"] = old["steps"], old.get("written", {})
            for rel in sorted(self.written):      # before any work: tune would neither reuse nor replace them
                folder._owned(folder(rel), "reused or replaced")
            self.resumed = not differ      # other settings over a run that measured nothing: a new run
            if differ:
                self.save()
        else:       # written at once: a run killed in its first measurement is continued (and its settings kept)
            self.resumed = False
            self.save()

    @property
    def written(self):
        return self.data["written"]

    def done(self, name, inputs=()):
        """The recorded result of step `name` when it finished with these same input files, else None."""
        step = self.data["steps"].get(name)
        if step is None or step.get("inputs") != _digests(inputs):
            return None
        return step

    def finish(self, name, inputs=(), **result):
        self.data["steps"][name] = dict(result, inputs=_digests(inputs))
        self.save()

    def forget(self, prefix):
        for name in [n for n in self.data["steps"] if n.startswith(prefix)]:
            del self.data["steps"][name]

    def save(self):
        write_text(self.path, json.dumps(_finite(self.data), indent=1, sort_keys=True) + "\n")


def _finite(value):
    """The journal's values with every infinite or NaN number as null: strict JSON, which its reader demands."""
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _measured_anything(folder):
    """Does the folder hold a measurement with at least one byte (a run that failed before measuring has none)?"""
    try:
        names = os.listdir(folder("measurements"))
    except OSError:
        return False
    return any(n.endswith(".csv") and os.path.getsize(folder("measurements", n)) > 0 for n in names)


def _lock(path, folder):
    """The open, flock-ed lock file (kept open by the caller); QuadselError when another process holds it."""
    try:
        handle = open(path, "a")
    except OSError as exc:
        raise QuadselError(f"cannot write in {one_line(folder)}: {exc.strerror or exc}") from None
    if not lock_exclusive(handle):
        handle.close()
        raise QuadselError(f"{one_line(folder)} is being tuned by another quadsel tune (still running): wait for it "
                           "to end, or give another -o folder")
    return handle


def input_identity(path, meta):
    """A measurement file as a tree's provenance names it: its name, SHA-256 and metadata file."""
    return {"path": os.path.basename(path), "sha256": _digests([path])[os.path.basename(path)],
            "metadata": os.path.basename(meta)}


def _digests(paths):
    out = {}
    for path in paths:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        out[os.path.basename(path)] = digest.hexdigest()
    return out


def _read(path):
    """The journal, through the one schema-checked path (docs/schemas/tune-journal.schema.json); a fault is one line
    that also says how to start again."""
    from ..errors import InputError
    from ..schemas import load_json
    try:
        return load_json(path, "tune-journal")
    except InputError as exc:
        raise QuadselError(f"{one_line(str(exc), 300)} -- not a quadsel tune journal (version {VERSION}); remove "
                           "it to start the tuning again") from None
