"""The journal of unfinished rounds, `OUTPUT.rounds.jsonl` (docs/measure.md, "Output, crash safety and --resume";
docs/formats-input.md, "JSON inputs and their schemas").

With --rounds R > 1 a point's row is written in round R; the samples of its rounds 1..R-1 are kept here, one JSON
line per method, point and round, so that a killed run loses at most the point in flight. Its first line says
which output and run the journal belongs to:

    {"format": "quadsel-rounds", "version": 1, "output_id": "...", "collective": "bcast", "library": "openmpi",
     "datatype": "byte", "timing": "span", "sync": "barrier"}
    {"key": ["bcast", "6", 0, 4, 1024], "round": 1, "samples_us": [12.5, 12.1], "wall_s": 0.0031}

A resumed run reads it through quadsel/schemas.py (docs/schemas/rounds-journal.schema.json). Its samples are
pooled into new rows only when its first line names this output (the `output_id` its metadata records) and the
same collective, library, datatype, timing and sync: a journal left over from another run, an older quadsel's
or any other file is ignored whole, with a note, and replaced. An entry that fails its schema (a negative or
NaN time, a key outside the journal's collective) is ignored, with a note naming its line: that round is
measured again. A line torn by a kill (the last, without its newline) is cut off silently.
"""

import json
import os

from ..errors import InputError, one_line
from ..inputs import read_text, text_lines

FORMAT = "quadsel-rounds"
VERSION = 1
# What a sample's meaning depends on: a journal that differs in one of them is another run's.
IDENTITY = ("output_id", "collective", "library", "datatype", "timing", "sync")


def journal_path(path):
    """Samples of rounds that are done for a point whose row is not written yet (removed at the end);
    None for a stream output (the journal is kept in memory)."""
    from .. import output as atomic
    return None if atomic.is_stream(path) else os.fspath(path) + ".rounds.jsonl"


def header(output_id, collective, library, datatype, timing, sync):
    return {"format": FORMAT, "version": VERSION, "output_id": output_id, "collective": collective,
            "library": library, "datatype": datatype, "timing": timing, "sync": sync}


def drop_partial_line(path):
    """A kill during a write can leave half a line at the end (and a crash of the machine a tail of NUL bytes,
    which some file systems leave where the data never reached the disk): cut it off."""
    with open(path, "rb+") as handle:
        data = handle.read()
        end = len(data.rstrip(b"\0"))
        if end < len(data) or (data and not data.endswith(b"\n")):
            handle.truncate(data.rfind(b"\n", 0, end) + 1)


def append_whole(fd, data):
    """Append `data` (bytes) to the file open as `fd`, all of it or nothing: a failed write (a full disk) is cut
    off again, so that the file ends with whole lines; OSError is raised then."""
    end = os.lseek(fd, 0, os.SEEK_END)
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        try:
            os.ftruncate(fd, end)
        except OSError:
            pass   # drop_partial_line cuts it at the next resume
        raise


class Journal:
    """JSON lines {"key": [...], "round": r, "samples_us": [...], "wall_s": s}, one per finished round, after the
    header line. `head`: this run's header (header()); None (tests, the fuzzer) takes any journal's entries.
    `notes`: what was ignored on reading, one line each, for the runner to print."""

    def __init__(self, path, resume=True, head=None):
        self.path = None if path is None else os.fspath(path)   # None: in memory only (stream output)
        self.head = head
        self.rounds = {}   # key -> {round: (samples, wall)}
        self.notes = []
        self._fd = None
        self._replace = True    # the file is (re)started with the header line on the first record
        if self.path is not None and resume and os.path.exists(self.path):
            self._replace = not self._read()

    # -- reading ------------------------------------------------------------------------------------------
    def _read(self):
        """Take the entries of the journal at self.path; False when it is not this run's (then ignored)."""
        from ..schemas import check_json
        shown = one_line(self.path)
        try:
            text = read_text(self.path, what="rounds journal")
        except InputError as exc:
            self.notes.append(f"note: {one_line(exc)}: the journal is ignored (its rounds are measured again)")
            return False
        torn = bool(text) and not text.endswith("\n")
        lines = text_lines(text)
        if torn:
            lines.pop()    # the entry a kill cut: cut off below, its round measured again
        why = self._foreign(lines)
        if why:
            self.notes.append(f"note: {shown} {why}: ignored, and replaced by this run's (its rounds are measured "
                              "again)")
            return False
        collective = self.head["collective"] if self.head else None
        first, bad = None, 0
        for line, entry_text in enumerate(lines, 1):
            try:
                entry = check_json(entry_text, self.path, "rounds-journal", line=line)
                if "format" in entry:
                    if line == 1:
                        continue     # the header (checked by _foreign)
                    raise InputError(self.path, line, "a second header line")
                if len(entry["key"]) == 6:
                    raise InputError(self.path, line, "key: 6 items, 5 or 7 (with nodes, ppn) needed")
                if collective is not None and entry["key"][0] != collective:
                    raise InputError(self.path, line, f"key[0]: {one_line(entry['key'][0], 40)!r} is not this "
                                                      f"journal's collective {collective}")
            except InputError as exc:
                bad += 1
                first = first or one_line(exc)
                continue
            key = tuple(entry["key"])
            self.rounds.setdefault(key, {})[entry["round"]] = ([float(x) for x in entry["samples_us"]],
                                                               float(entry["wall_s"]))
        if bad:
            self.notes.append(f"note: {first}; {bad} damaged entr{'ies' if bad > 1 else 'y'} of the rounds journal "
                              "ignored (those rounds are measured again)")
        if torn:
            drop_partial_line(self.path)
        return True

    def _foreign(self, lines):
        """Why the journal is not this run's, or None."""
        if self.head is None:
            return None
        from ..schemas import check_doc, parse
        if not lines:
            return "is empty"
        try:
            first = parse(lines[0], self.path)
            if not isinstance(first, dict) or "format" not in first:
                return "has no header line (a journal of an older quadsel, or not a journal)"
            check_doc(first, self.path, "rounds-journal", line=1)
        except InputError as exc:
            return f"has no valid first line ({one_line(exc.message, 120)})"
        for name in IDENTITY:
            if first.get(name) != self.head.get(name):
                what = "output (its metadata's output_id)" if name == "output_id" else name
                return (f"belongs to another run: its {what} is {one_line(str(first.get(name)), 40)}, "
                        f"this run's {one_line(str(self.head.get(name)), 40)}")
        return None

    # -- use ------------------------------------------------------------------------------------------------
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
        if self.path is not None:
            line = json.dumps({"key": list(key), "round": round_, "samples_us": [round(x, 4) for x in samples],
                               "wall_s": wall}) + "\n"
            try:
                if self._fd is None:
                    self._open()
                append_whole(self._fd, line.encode("utf-8"))
            except OSError:
                # A full disk: the journal only saves rounds of unfinished points; the rows are what count, and
                # the next row's write reports the problem. The journal keeps whole lines (append_whole).
                self.path = None
        self.rounds.setdefault(key, {})[round_] = (list(samples), wall)

    def _open(self):
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        self._fd = os.open(self.path, flags | (os.O_TRUNC if self._replace else 0), 0o666)
        if self._replace and self.head is not None:
            append_whole(self._fd, (json.dumps(self.head) + "\n").encode("utf-8"))
        self._replace = False

    def close(self, remove=False):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if remove and self.path is not None and os.path.exists(self.path):
            os.unlink(self.path)
