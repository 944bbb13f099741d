"""The interference a timing job met: the work on this host beyond the job's own ranks, sampled while it runs.

A verify or measure job's ranks busy-poll, so each is a runnable task the whole time; anything else runnable
competes with them for the cores (issue 41: one `quadsel tune --np 2` under a load of 6 to 8 deployed gather at
1.129x, the same command elsewhere nothing, and verify of that deployment minutes later said 1.075x). The sampler
reads the kernel's count of runnable tasks (/proc/loadavg, fourth field, "running/total") ten times a second in
the launching process and subtracts the job's own ranks on this host and itself: `extra` is the mean number of
other runnable tasks, in cores' worth of work. A load average says the same an hour late; this says it for the
seconds the job ran.
"""

import threading
import time

PERIOD = 0.1           # seconds between samples
BUSY = 0.5             # other runnable tasks, on average, from which the host was busier than the job itself


def runnable():
    """The kernel's count of runnable tasks now, or None where it cannot be read (not Linux)."""
    try:
        with open("/proc/loadavg", encoding="ascii") as handle:
            return int(handle.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


class Sampler:
    """`with Sampler(own) as s:` around a job; then s.summary(). own: the job's ranks on this host."""

    def __init__(self, own, period=PERIOD):
        self.own, self.period = int(own), period
        self.samples, self._stop = [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.wait(self.period):
            count = runnable()
            if count is not None:
                self.samples.append(count)

    def __enter__(self):
        self.started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=2)
        self.seconds = time.monotonic() - self.started
        return False

    def summary(self):
        """{"own_ranks", "samples", "extra_mean", "extra_max", "seconds"}: the other runnable tasks beyond the job's
        ranks and the sampler itself (None without samples: not Linux, or a job shorter than one period)."""
        extra = [max(0, n - self.own - 1) for n in self.samples]
        return {"own_ranks": self.own, "samples": len(extra),
                "extra_mean": round(sum(extra) / len(extra), 2) if extra else None,
                "extra_max": max(extra) if extra else None, "seconds": round(getattr(self, "seconds", 0.0), 1)}


def merged(summaries):
    """One summary of several jobs' (their samples weighted alike)."""
    found = [s for s in summaries if s and s.get("samples")]
    if not found:
        return None
    samples = sum(s["samples"] for s in found)
    return {"own_ranks": max(s["own_ranks"] for s in found), "samples": samples,
            "extra_mean": round(sum(s["extra_mean"] * s["samples"] for s in found) / samples, 2),
            "extra_max": max(s["extra_max"] for s in found), "seconds": round(sum(s["seconds"] for s in found), 1)}


def busier_than_the_job(summary):
    """Was the host busier than the job itself (BUSY other runnable tasks or more, on average)?"""
    return bool(summary) and summary.get("extra_mean") is not None and summary["extra_mean"] >= BUSY


def describe(summary):
    """`0.1 other runnable tasks on average beside the job's 2 ranks (at most 3)`, or None without samples."""
    if not summary or summary.get("extra_mean") is None:
        return None
    return (f"{summary['extra_mean']:g} other runnable tasks on average beside the job's {summary['own_ranks']} "
            f"ranks (at most {summary['extra_max']}, {summary['samples']} samples)")
