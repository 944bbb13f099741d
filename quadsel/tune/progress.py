"""One progress display for the whole of `quadsel tune` (docs/tune.md, "Progress").

On a terminal (stderr a tty, neither --quiet nor --verbose): one line rewritten in place, every second and at
every measured point —

    tune 2/5 bcast: measuring 34/120 points | 1:23 elapsed, ETA 4:10

Elsewhere (a pipe, a file, a CI log) and with --verbose: the plain lines of each step, one per step, with no
control character at all (log-friendly). --quiet: no progress at all. Messages (notes, prune, verify) go
through `message`: on a terminal the live line is cleared, the message printed, the line drawn again below it.

The ETA adds up the plan that is left: the current measurement's remaining share at its own rate (the points
`quadsel measure` reports, measure/progress.py's QUADSEL_PROGRESS_REPORT lines), the collectives not measured
yet at the rate per method measured so far, and both verify runs (before the first ran, VERIFY_SHARE of the
measuring time; the second verifies only the collectives pruning changed: between none and all of the first's
time until pruning says how many, then the first's time per collective times their number). It is a range, not one number (Plan.eta_range): collectives
differ in rate (an adaptive run measures more where the decision changes), and the display says so.
"""

import shutil
import threading
import time

from ..errors import one_line

VERIFY_SHARE = 1.0    # each verify run against the whole measuring time, until one ran (docs/tune.md)
REDRAW = 1.0          # seconds between redraws of the live line while nothing reports


def clock(seconds):
    seconds = int(round(max(0.0, seconds)))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60}:{seconds % 60:02d}"


class Plan:
    """What the run has to do, and how long each part took: the ETA's arithmetic (no output)."""

    def __init__(self, weights, now=time.monotonic):
        self.weights = dict(weights)          # {collective: methods to measure} in order, left to measure
        self.now = now
        self.started = now()
        self.measure_seconds, self.measure_weight = 0.0, 0
        self.rates = []                       # seconds per method of each collective measured
        self.current = None                   # (collective, its start, fraction done)
        self.verify_seconds = []              # each finished verify run
        self.verify_left = 2
        self.verify_started = None
        self.verify_share = None              # the second verify's share of the first's collectives, once known

    def elapsed(self):
        return self.now() - self.started

    def start_measure(self, collective):
        self.current = (collective, self.now(), 0.0)

    def measured(self, fraction):
        if self.current is not None:
            self.current = (self.current[0], self.current[1], min(1.0, max(0.0, fraction)))

    def end_measure(self, collective, measured=True):
        """`measured`: it ran (its time counts for the rate); False: done before, or left out."""
        weight = self.weights.pop(collective, 0)
        if measured and self.current is not None and self.current[0] == collective:
            self.measure_seconds += self.now() - self.current[1]
            self.measure_weight += weight
            if weight:
                self.rates.append((self.now() - self.current[1]) / weight)
        self.current = None

    def start_verify(self):
        self.verify_started = self.now()

    def end_verify(self, ran=True):
        if ran and self.verify_started is not None:
            self.verify_seconds.append(self.now() - self.verify_started)
        self.verify_left = max(0, self.verify_left - 1)
        self.verify_started = None

    def eta(self):
        """Seconds left (the middle of eta_range), or None while no rate is known yet."""
        span = self.eta_range()
        return None if span is None else (span[0] + span[1]) / 2

    def eta_range(self):
        """(fewest, most) seconds left, or None while no rate is known yet (issue 41: one number, "4:12" at 2:07 of a
        run that ended at 9:41, promised what the plan cannot know). The bounds take the slowest and the fastest
        rate per method of the collectives measured so far, the current measurement both by its own reported share
        and by those rates, and a verify run not yet timed at half to twice VERIFY_SHARE of the measuring time."""
        rates = sorted(self.rates)
        low = self._left(rates[0] if rates else None, 0.5)
        high = self._left(rates[-1] if rates else None, 2.0)
        if low is None or high is None:
            return None
        return min(low, high), max(low, high)

    def _left(self, rate, verify_factor):
        left = 0.0
        if self.current is not None:
            name, began, fraction = self.current
            spent = self.now() - began
            guesses = [spent / fraction * (1 - fraction)] if fraction > 0 else []
            if rate is not None:
                guesses.append(max(0.0, rate * self.weights.get(name, 0) - spent))
            if not guesses:
                return None
            left += min(guesses) if verify_factor < 1 else max(guesses)
        waiting = sum(w for c, w in self.weights.items() if self.current is None or c != self.current[0])
        if waiting:
            if rate is None:
                return None
            left += rate * waiting
        if self.verify_left:
            if self.verify_seconds:      # only the second is left: it verifies what pruning changed
                share = self.verify_share if self.verify_share is not None else (0.0 if verify_factor < 1 else 1.0)
                one = self.verify_seconds[-1] * share
            elif rate is not None or self.measure_weight:
                one = verify_factor * VERIFY_SHARE * (self.measure_seconds + (rate or 0) * sum(self.weights.values()))
            else:
                return None
            running = self.now() - self.verify_started if self.verify_started is not None else 0.0
            left += max(0.0, one - running) + one * (self.verify_left - 1)
        return left


def eta_text(span):
    """`ETA 4:10` when the bounds agree within a quarter, `ETA 4:10 to 9:40` when they do not, and that it is not
    known yet while no collective has been measured and the current one has reported nothing."""
    if span is None:
        return "ETA not known yet"
    low, high = span
    if high <= 1.25 * low + 5:
        return f"ETA {clock((low + high) / 2)}"
    return f"ETA {clock(low)} to {clock(high)}"


class Display:
    """The display on `stream` (mode "live", "lines" or "quiet"; see the module's docstring)."""

    def __init__(self, stream, plan, total, mode=None, verbose=False, quiet=False):
        self.stream, self.plan, self.total = stream, plan, total
        if mode is None:
            tty = hasattr(stream, "isatty") and stream.isatty()
            mode = "quiet" if quiet else "live" if tty and not verbose else "lines"
        self.mode = mode
        self.step_text, self.index, self.collective = "", 0, ""
        self.points = None                    # (done, total) of the current measurement
        self._lock = threading.Lock()
        self._drawn = False
        self._stop = threading.Event()
        self._ticker = None
        if self.mode == "live":
            self._ticker = threading.Thread(target=self._tick, name="quadsel-tune-display", daemon=True)
            self._ticker.start()

    # what the run says
    def step(self, index, collective, what):
        """Step `what` of collective number `index` (0-based; None: the whole deployment)."""
        with self._lock:
            self.index, self.collective, self.step_text, self.points = index, collective, what, None
            if self.mode == "lines":
                self._write(self._line(plain=True) + "\n")
            elif self.mode == "live":
                self._draw()

    def points_done(self, done, total, fraction):
        with self._lock:
            self.points = (done, total)
            self.plan.measured(fraction)
            if self.mode == "live":
                self._draw()

    def message(self, text):
        """A line that stays (notes, prune, verify): above the live line on a terminal."""
        with self._lock:
            if self.mode == "live" and self._drawn:
                self._write("\r\033[K")
                self._drawn = False
            self._write(one_line(text, 1000) + "\n")
            if self.mode == "live" and self.step_text:
                self._draw()

    def close(self):
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=2)
        with self._lock:
            if self._drawn:
                self._write("\r\033[K")
                self._drawn = False

    # drawing
    def _line(self, plain=False):
        head = f"tune [{self.index + 1}/{self.total} {self.collective}]" if plain and self.collective else \
            f"tune {self.index + 1}/{self.total} {self.collective}:" if self.collective else "tune:"
        what = self.step_text
        if self.points is not None and not plain:
            what += f" {self.points[0]}/{self.points[1]} points"
        times = f"{clock(self.plan.elapsed())} elapsed, {eta_text(self.plan.eta_range())}"
        text = f"{head} {what} ({times})" if plain else f"{head} {what} | {times}"
        return one_line(text, 1000)

    def _draw(self):
        width = max(20, shutil.get_terminal_size((100, 24)).columns - 1)
        text = self._line()
        if len(text) > width:       # a wrapped line could not be rewritten in place
            text = text[:width - 3] + "..."
        self._write("\r" + text + "\033[K")
        self._drawn = True

    def _tick(self):
        while not self._stop.wait(REDRAW):
            with self._lock:
                if self.step_text:
                    self._draw()

    def _write(self, text):
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):    # the terminal or pipe is gone: the run goes on
            pass
