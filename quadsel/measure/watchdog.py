"""Abort the whole job when no batch of timed calls has finished for a long time: a forced
algorithm that deadlocks (or a rank that died without taking the job down) would otherwise hang
a long sweep silently. Rows written so far stay; rerun without the offending algorithm."""

import sys
import threading
import time


class Watchdog:
    def __init__(self, timeout, abort, stream=None, clock=time.monotonic):
        self.timeout, self.abort, self.clock = timeout, abort, clock
        self.stream = stream or sys.stderr
        self.where = "start"
        self.last = clock()
        self._stop = threading.Event()
        self._thread = None

    def beat(self, where=None):
        self.last = self.clock()
        if where is not None:
            self.where = where

    def check(self):
        """True (and abort) when the last beat is older than the timeout."""
        idle = self.clock() - self.last
        if idle <= self.timeout:
            return False
        self.stream.write(f"quadsel measure: no timed call finished for {idle:.0f} s at {self.where}; "
                          "aborting the job (rows so far are kept; rerun without that algorithm)\n")
        self.stream.flush()
        self.abort()
        return True

    def start(self):
        if self.timeout and self.timeout > 0:
            self._thread = threading.Thread(target=self._run, name="quadsel-watchdog", daemon=True)
            self._thread.start()
        return self

    def _run(self):
        while not self._stop.wait(min(1.0, self.timeout / 4)):
            if self.check():
                return

    def stop(self):
        self._stop.set()
