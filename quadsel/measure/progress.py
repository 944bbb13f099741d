"""A progress bar with ETA for rank 0: one redrawn line on a terminal; otherwise a line per 10 %
and at least every 30 s. Under mpiexec the rank's stderr is a pipe to the launcher, so the
self-launcher passes QUADSEL_MEASURE_TTY=1 when its own stderr is a terminal (set it yourself under
your own launcher if you like the bar).

One display across launches: when a measurement is one launch per method (Intel MPI), the self-launcher sets
QUADSEL_PROGRESS_LAUNCH="i/L" and QUADSEL_PROGRESS_START (its wall-clock start) in each launch: the bar then
shows the share of the whole measurement (launch i of L, and this launch's share of its own points), the elapsed
time since the first launch and an ETA from the whole run's rate, and only the last launch ends the line.

For a program that shows its own display (`quadsel tune`, tune/progress.py): QUADSEL_PROGRESS_REPORT=1 replaces
the bar and the lines by one machine line per visited point, `quadsel-progress DONE TOTAL FRACTION` (FRACTION of
the whole measurement, launches included), on stderr."""

import os
import sys
import time

LINE_EVERY = 30.0   # seconds between progress lines when not on a terminal
LAUNCH_ENV, START_ENV = "QUADSEL_PROGRESS_LAUNCH", "QUADSEL_PROGRESS_START"
REPORT_ENV, REPORT_PREFIX = "QUADSEL_PROGRESS_REPORT", "quadsel-progress "


def launch_part(environ=None):
    """(i, L, wall-clock start) of a launch that is part i of L of one measurement, else None."""
    environ = os.environ if environ is None else environ
    try:
        i, total = (int(x) for x in environ.get(LAUNCH_ENV, "").split("/"))
        start = float(environ.get(START_ENV, ""))
    except ValueError:
        return None
    return (i, total, start) if 1 <= i <= total else None


def parse_report(line):
    """(done, total, fraction) of a QUADSEL_PROGRESS_REPORT line, else None."""
    if not line.startswith(REPORT_PREFIX):
        return None
    try:
        done, total, fraction = line[len(REPORT_PREFIX):].split()
        return int(done), int(total), float(fraction)
    except ValueError:
        return None


def _clock(seconds):
    seconds = int(max(0, seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


class Progress:
    """`total` units (points by default); `total_weight` (default: one per unit) is the expected cost used for
    the ETA."""

    def __init__(self, total, label, stream=None, enabled=True, total_weight=None, unit="points", clock=time.monotonic):
        self.total, self.label, self.done, self.unit = total, label, 0, unit
        self.total_weight = total_weight if total_weight else total
        self.weight_done = 0.0
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = (hasattr(self.stream, "isatty") and self.stream.isatty()) or \
            os.environ.get("QUADSEL_MEASURE_TTY") == "1"
        self.clock = clock
        self.start = clock()
        self._first = None    # (time, weight done) after the first visit
        self._last_decile = -1
        self._last_line = self.start
        self.part = launch_part()            # (i, L, wall start): one display over L launches
        self.report = os.environ.get(REPORT_ENV) == "1"
        if self.part is not None:
            self._wall_offset = time.time() - self.part[2]    # elapsed before this launch started

    def advance(self, count, where="", weight=None):
        self.done += count
        self.weight_done += count if weight is None else weight
        if not self.enabled:
            return
        fraction = self.done / self.total
        if self.report:
            if self.part is not None:
                fraction = (self.part[0] - 1 + fraction) / self.part[1]
            self.stream.write(f"{REPORT_PREFIX}{self.done} {self.total} {fraction:.4f}\n")
            self.stream.flush()
            return
        now = self.clock()
        elapsed = now - self.start
        if self._first is None:
            # The first visit carries the start-up (communicators, warm-up, forcing): the rate is measured after it.
            self._first = (now, self.weight_done)
        left = max(0.0, self.total_weight - self.weight_done)
        since, weight_since = now - self._first[0], self.weight_done - self._first[1]
        eta = _clock(since / weight_since * left) if weight_since > 0 and since > 0 else "--"
        count = f"{self.done}/{self.total} {self.unit}"
        if self.part is not None:        # the whole measurement: launch i of L, and its rate so far
            i, launches, _ = self.part
            fraction = (i - 1 + self.done / self.total) / launches
            elapsed += self._wall_offset
            eta = _clock(elapsed / fraction * (1 - fraction)) if i > 1 or self.done > 1 else "--"
            count = f"launch {i}/{launches}, {count}"
        text = (f"{self.label} {count} ({fraction:4.0%}) "
                f"elapsed {_clock(elapsed)} ETA {eta} {where}")
        if self.tty:
            width = 24
            filled = int(round(width * fraction))
            self.stream.write("\r[" + "#" * filled + "." * (width - filled) + "] " + text + "\033[K")
        else:
            decile = int(fraction * 10)
            if decile == self._last_decile and now - self._last_line < LINE_EVERY:
                return
            self._last_decile, self._last_line = decile, now
            self.stream.write(text.rstrip() + "\n")
        self.stream.flush()

    def close(self):
        if self.part is not None and self.part[0] < self.part[1]:
            return                       # a later launch goes on drawing the same line
        if self.enabled and self.tty and not self.report:
            self.stream.write("\n")
            self.stream.flush()
