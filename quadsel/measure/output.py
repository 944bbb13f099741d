"""Crash-safe output: the generic CSV appended row by row (flushed), a journal of unfinished rounds,
and the metadata JSON beside the data. A `kill -9` loses at most the point in flight; a rerun with
the same arguments skips every row already written (`--resume`).
"""

import csv
import io
import json
import os

from .. import output as atomic
from ..errors import QuadselError
from ..ingest.table import GENERIC_COLUMNS

HEADER = ",".join(GENERIC_COLUMNS)
# Adaptive measurement records what it did not measure as comment lines (every reader skips `#` lines):
#   # skipped bcast,1,0,256,1048576 behind: 3.10x the best at 524288 B, trend 2.95x
# `*` stands for every value of a column (a whole communicator size left out).
SKIPPED = "# skipped "


def meta_path(path):
    """`out/ompi5-bcast.csv` -> `out/ompi5-bcast.meta.json`."""
    path = os.fspath(path)
    base = path[:-4] if path.lower().endswith(".csv") else path
    return base + ".meta.json"


def journal_path(path):
    """Samples of rounds that are done for a point whose row is not written yet (removed at the end)."""
    return os.fspath(path) + ".rounds.jsonl"


def _drop_partial_line(path):
    """A kill during a write can leave half a line at the end: cut it off."""
    with open(path, "rb+") as handle:
        data = handle.read()
        if data and not data.endswith(b"\n"):
            handle.truncate(data.rfind(b"\n") + 1)


class ResultFile:
    """The output CSV. `done` holds the keys (collective, algorithm, segsize, comm_size, msg_size) present."""

    def __init__(self, path, resume=True):
        self.path = os.fspath(path)
        self.done = set()
        self.values = {}     # key -> (time_us, stddev_us or None, reps or None), as written
        self.skipped = set()  # the key text of every `# skipped` line
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        if resume and os.path.exists(self.path) and os.path.getsize(self.path) > 0:
            _drop_partial_line(self.path)
            self._read_existing()
            self.handle = open(self.path, "a", newline="")
            if os.path.getsize(self.path) == 0:
                self._write(HEADER + "\n")
        else:
            self.handle = open(self.path, "w", newline="")
            self._write(HEADER + "\n")

    def _read_existing(self):
        with open(self.path, newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if header is None:
                return
            if tuple(h.strip() for h in header) != GENERIC_COLUMNS:
                raise QuadselError(f"{self.path}: not a quadsel measure CSV (header {','.join(header)!r}); "
                                   "use another --output or --no-resume")
            for line, row in enumerate(reader, start=2):
                if row and row[0].startswith("#"):
                    if row[0].startswith(SKIPPED):
                        self.skipped.add(_skip_key(",".join(row)))
                    continue
                try:
                    key = (row[0], row[1], int(row[2]), int(row[3]), int(row[4]))
                    self.values[key] = (float(row[5]), _optional(row[6], float), _optional(row[7], int))
                except (IndexError, ValueError):
                    raise QuadselError(f"{self.path}:{line}: malformed row; fix it or use --no-resume") from None
                self.done.add(key)

    def _write(self, text):
        self.handle.write(text)
        self.handle.flush()     # one row per write + flush: a killed run keeps every finished row

    def append(self, key, mean_us, stddev_us, reps):
        """Write one row; returns the values as written (rounded), which is what a resumed run reads."""
        collective, algorithm, segsize, comm_size, msg_size = key
        buf = io.StringIO()
        cells = [f"{mean_us:.3f}", "" if stddev_us is None else f"{stddev_us:.3f}", "" if reps is None else reps]
        csv.writer(buf, lineterminator="\n").writerow([collective, algorithm, segsize, comm_size, msg_size, *cells])
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

    def append_note(self, text):
        self._write(f"# {' '.join(str(text).split())}\n")

    def close(self):
        self.handle.close()


def _optional(cell, kind):
    return None if cell in ("", None) else kind(cell)


def _skip_key(line):
    return line[len(SKIPPED):].split(" ", 1)[0]


class Journal:
    """JSON lines {"key": [...], "round": r, "samples_us": [...], "wall_s": s}, one per finished round."""

    def __init__(self, path, resume=True):
        self.path = os.fspath(path)
        self.rounds = {}   # key -> {round: (samples, wall)}
        if resume and os.path.exists(self.path):
            _drop_partial_line(self.path)
            with open(self.path) as handle:
                for text in handle:
                    try:
                        entry = json.loads(text)
                        key = tuple(entry["key"])
                        self.rounds.setdefault(key, {})[int(entry["round"])] = (
                            [float(x) for x in entry["samples_us"]], float(entry["wall_s"]))
                    except (ValueError, KeyError, TypeError):
                        continue   # a damaged entry only means that round is measured again
        self.handle = None
        self._mode = "a" if resume else "w"

    def prior(self, key, before_round):
        """(samples, wall seconds) of rounds 1..before_round-1 of `key`, or None if one is missing."""
        done = self.rounds.get(key, {})
        if any(r not in done for r in range(1, before_round)):
            return None
        samples, wall = [], 0.0
        for r in range(1, before_round):
            samples.extend(done[r][0])
            wall += done[r][1]
        return samples, wall

    def has(self, key, round_):
        return round_ in self.rounds.get(key, {})

    def record(self, key, round_, samples, wall):
        if self.handle is None:
            self.handle = open(self.path, self._mode)
        self.handle.write(json.dumps({"key": list(key), "round": round_,
                                      "samples_us": [round(x, 4) for x in samples], "wall_s": wall}) + "\n")
        self.handle.flush()
        self.rounds.setdefault(key, {})[round_] = (list(samples), wall)

    def close(self, remove=False):
        if self.handle is not None:
            self.handle.close()
            self.handle = None
        if remove and os.path.exists(self.path):
            os.unlink(self.path)


def read_meta(path):
    try:
        with open(meta_path(path)) as handle:
            return json.load(handle)
    except FileNotFoundError:
        return None
    except ValueError:
        raise QuadselError(f"{meta_path(path)}: damaged metadata JSON; remove it or use --no-resume") from None


def write_meta(path, meta):
    atomic.write_text(meta_path(path), json.dumps(meta, indent=2, sort_keys=False) + "\n")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(meta_path(path), 0o666 & ~umask)   # the temp file of the atomic write was private
