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


class Folder:
    def __init__(self, path):
        self.path = path
        self._lock = None
        own_folder(path)     # tune replaces what it wrote there on a rerun: its own outputs, not inputs

    def __call__(self, *parts):
        return os.path.join(self.path, *parts)

    def measurement(self, collective):
        return self("measurements", f"{collective}.csv")

    def tree(self, collective):
        return self("trees", f"{collective}.qt.json")

    def make(self):
        """The folder and its subfolders (the folder's parent must exist, as for every quadsel output), locked for
        this process's life: a second tune on the same folder is refused in one line. The lock dies with the
        process (kill -9 included), so a rerun takes it at once; what still holds a measurement's CSV then is the
        ranks of the killed run, which end on their own (steps.py waits for them)."""
        make_folder(self.path)
        self._lock = _lock(self(LOCK), self.path)
        for sub in ("measurements", "trees", "verify"):
            make_folder(self(sub))

    def release(self):
        """The folder's lock released (the end of the run)."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None


class Journal:
    """tune.json: {"version", "settings", "steps": {name: {"inputs": {path: sha256}, ...result}}}."""

    def __init__(self, folder, settings):
        self.folder, self.path = folder, folder(JOURNAL)
        self.data = {"format": "quadsel-tune", "version": VERSION, "settings": settings, "steps": {}}
        if os.path.exists(self.path):
            old = _read(self.path)
            differ = [k for k in SETTINGS if old["settings"].get(k) != settings.get(k)]
            if differ and (old["steps"] or _measured_anything(folder)):
                raise QuadselError(f"{one_line(folder.path)} holds a tuning with other settings ("
                                   + ", ".join(f"{k} {old['settings'].get(k)!r} there, {settings.get(k)!r} now"
                                               for k in differ)
                                   + "): give another -o folder, or the same settings to continue it")
            self.data["steps"] = old["steps"]
            self.resumed = not differ      # other settings over a run that measured nothing: a new run
            if differ:
                self.save()
        else:       # written at once: a run killed in its first measurement is continued (and its settings kept)
            self.resumed = False
            self.save()

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
        write_text(self.path, json.dumps(self.data, indent=1, sort_keys=True) + "\n")


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
