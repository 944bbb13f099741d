"""The one estimator of a speed-up over the library default (quadsel/speedup.py), as report and verify use it."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from quadsel import speedup


@given(st.lists(st.floats(0.2, 5.0), min_size=1, max_size=60), st.floats(50.0, 1e4))
def test_one_wild_point_among_ten_or_more_does_not_carry_it(values, wild):
    plain = speedup.geomean(values)
    with_wild = speedup.geomean(values + [wild])
    if len(values) + 1 >= speedup.MIN_TRIMMED:
        assert with_wild <= max(values) + 1e-9          # the wild point is trimmed away
    assert min(values) - 1e-9 <= plain <= max(values) + 1e-9


def test_below_ten_points_it_is_the_plain_geometric_mean():
    values = [1.1, 1.2, 0.9, 3.0]
    assert speedup.geomean(values) == pytest.approx(math.exp(np.mean(np.log(values))))
    assert speedup.geomean([]) is None and speedup.log_mean([]) == 0.0


def test_report_and_verify_both_use_it():
    """The report's paragraph (evaluate/reconcile.py) and verify's per-collective figure (verify/statistics.py)
    agree on the same per-point speed-ups: the issue's gather read 2.28x in one and 1.075x in the other."""
    from quadsel.evaluate.reconcile import speedup_over_default
    from quadsel.verify.statistics import collective_statistics
    rng = np.random.default_rng(4)
    gains = list(1.05 + 0.02 * rng.standard_normal(19)) + [20.0]      # one default timed in a noisy moment
    cost = np.ones((1, len(gains), 1))
    dmap = type("Map", (), {"default_cost": np.array([gains]), "cost": cost,
                            "measured": np.ones((1, len(gains)), bool)})()
    report = speedup_over_default(dmap, np.zeros((1, len(gains)), int), np.zeros((1, len(gains))))
    points = [{"default": ["default", 0], "quadsel": ["6", 0],
               "times": {"default": {"mean_us": g, "rounds_us": [g, g]}, "6/0": {"mean_us": 1.0, "rounds_us": [1.0, 1.0]}}}
              for g in gains]
    verify = collective_statistics(points, key=lambda m: "default" if m[0] == "default" else "6/0")
    assert report["geomean"] == pytest.approx(verify["geomean_speedup"]) == pytest.approx(speedup.geomean(gains))
    assert report["geomean"] < 1.2 < math.exp(np.mean(np.log(gains)))     # the plain mean: the wild point's
