"""A progress bar with ETA for rank 0 (one redrawn line on a terminal, a line per 10 % otherwise)."""

import sys
import time


def _clock(seconds):
    seconds = int(max(0, seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


class Progress:
    def __init__(self, total, label, stream=None, enabled=True):
        self.total, self.label, self.done = total, label, 0
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.monotonic()
        self._last_decile = -1

    def advance(self, count, where=""):
        self.done += count
        if not self.enabled:
            return
        fraction = self.done / self.total
        elapsed = time.monotonic() - self.start
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        text = (f"{self.label} {self.done}/{self.total} points ({fraction:4.0%}) "
                f"elapsed {_clock(elapsed)} ETA {_clock(eta)} {where}")
        if self.tty:
            width = 24
            filled = int(round(width * fraction))
            self.stream.write("\r[" + "#" * filled + "." * (width - filled) + "] " + text + "\033[K")
        else:
            decile = int(fraction * 10)
            if decile == self._last_decile:
                return
            self._last_decile = decile
            self.stream.write(text.rstrip() + "\n")
        self.stream.flush()

    def close(self):
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()
