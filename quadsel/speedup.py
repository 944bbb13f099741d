"""The one estimator of "how much faster than the library default" (issue 41: gather read 2.28x in `quadsel
report`, 1.129x in tune and 1.075x in verify, the first driven by one default time of 20848 us +- 22423 at 1 MiB).

Everywhere quadsel prints a speed-up over the default -- report's paragraph on the default build, verify's
per-collective and overall figures, tune's -- it is the trimmed geometric mean of the per-point speed-ups
(T_default / T_selected) over the points where the selection differs from the default: the points that keep the
default are left out (they would pull the mean towards 1), and the most extreme TRIM of the log speed-ups at each
end are left out too (none below MIN_TRIMMED points), so that one point timed in a noisy moment does not carry it.
"""

import math

TRIM = 0.1            # the share left out at each end
MIN_TRIMMED = 10      # fewer points: nothing trimmed (a tenth of them is less than one point)


def trimmed(values):
    """The values left once TRIM of each end is cut (sorted), all of them below MIN_TRIMMED."""
    values = sorted(values)
    cut = int(len(values) * TRIM) if len(values) >= MIN_TRIMMED else 0
    return values[cut:len(values) - cut] if cut else values


def log_mean(log_speedups):
    """The trimmed mean of per-point log speed-ups (0.0 for none: nothing changed, speed-up 1)."""
    kept = trimmed(log_speedups)
    return sum(kept) / len(kept) if kept else 0.0


def geomean(speedups):
    """The trimmed geometric mean of per-point speed-ups (None for none)."""
    speedups = [s for s in speedups if s and s > 0 and math.isfinite(s)]
    if not speedups:
        return None
    return math.exp(log_mean([math.log(s) for s in speedups]))
