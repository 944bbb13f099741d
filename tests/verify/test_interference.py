"""The interference sampler (verify/interference.py): other runnable tasks beside a job's own ranks."""

import subprocess
import sys
import time

import pytest

from quadsel.verify import interference


@pytest.mark.skipif(interference.runnable() is None, reason="no /proc/loadavg (not Linux)")
def test_busy_loops_beside_the_job_are_counted_and_the_jobs_own_ranks_are_not():
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3)]
    try:
        time.sleep(0.3)
        with interference.Sampler(own=0) as none_own:
            time.sleep(1.0)
        with interference.Sampler(own=3) as three_own:      # the three loops as the job's own ranks
            time.sleep(1.0)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    busy, own = none_own.summary(), three_own.summary()
    assert busy["samples"] >= 5 and busy["extra_mean"] >= 2.5 and interference.busier_than_the_job(busy)
    assert own["extra_mean"] <= busy["extra_mean"] - 2.5       # the job's own ranks are not interference
    assert "other runnable tasks on average beside the job's 0 ranks" in interference.describe(busy)


def test_summaries_merge_weighted_by_their_samples():
    a = {"own_ranks": 2, "samples": 10, "extra_mean": 1.0, "extra_max": 3, "seconds": 1.0}
    b = {"own_ranks": 2, "samples": 30, "extra_mean": 0.2, "extra_max": 1, "seconds": 3.0}
    got = interference.merged([a, None, b])
    assert got == {"own_ranks": 2, "samples": 40, "extra_mean": 0.4, "extra_max": 3, "seconds": 4.0}
    assert interference.merged([None, {"samples": 0}]) is None and not interference.busier_than_the_job(None)
