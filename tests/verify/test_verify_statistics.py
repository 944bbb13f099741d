"""verify's statistics (quadsel/verify/statistics.py): per-point intervals and verdicts, geometric means, the
deployment line, and --fail-on-regression on the real MPI."""

import json
import math
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from quadsel.cli import main
from quadsel.verify import statistics
from quadsel.verify.speed import _key, round_medians

from helpers import mpi_library as _library, mpiexec_beside as _mpiexec, tree_choosing

needs_openmpi = pytest.mark.skipif(not _mpiexec(sys.executable) or _library(sys.executable) != "openmpi",
                                   reason="needs Open MPI's mpiexec and mpi4py on Open MPI")


def _point(default_rounds, chosen_rounds, chosen=("6", 0), comm=2, msg=1):
    times = {"default": {"mean_us": float(np.mean(default_rounds)), "rounds_us": list(default_rounds)}}
    times[_key(list(chosen))] = {"mean_us": float(np.mean(chosen_rounds)), "rounds_us": list(chosen_rounds)}
    return {"collective": "bcast", "comm": comm, "msg": msg, "default": ["default", 0], "quadsel": list(chosen),
            "candidates": None, "times": times}


def test_round_medians_split_the_samples_at_the_round_ends():
    assert round_medians([1, 2, 3, 10, 20, 30, 40], [3, 7]) == [2.0, 25.0]


def test_point_verdicts():
    faster = statistics.point_statistics(_point([20, 21, 19, 20], [10, 10.5, 9.8, 10]), _key)
    assert faster["verdict"] == "faster" and faster["speedup_low"] > 1 and faster["speedup"] == pytest.approx(2, rel=0.05)
    slower = statistics.point_statistics(_point([10, 10.5, 9.8, 10], [20, 21, 19, 20]), _key)
    assert slower["verdict"] == "slower" and slower["speedup_high"] < 1
    noisy = statistics.point_statistics(_point([10, 12, 9, 11], [11, 9, 12, 10]), _key)
    assert noisy["verdict"] == "indistinguishable" and noisy["speedup_low"] < 1 < noisy["speedup_high"]
    same = statistics.point_statistics(_point([10, 12], [10, 12], chosen=("default", 0)), _key)
    assert same == {"speedup": 1.0, "speedup_low": 1.0, "speedup_high": 1.0, "verdict": "default", "rounds": 0}
    one_round = statistics.point_statistics(_point([20], [10]), _key)
    assert one_round["verdict"] == "indistinguishable" and one_round["speedup_low"] is None


def test_the_interval_is_the_paired_t_interval_of_the_log_ratios():
    d, q = [20, 22, 19, 25, 21], [10, 12, 11, 10, 13]
    logs = np.log(d) - np.log(q)
    from scipy import stats
    half = stats.t.ppf(0.975, 4) * logs.std(ddof=1) / math.sqrt(5)
    got = statistics.point_statistics(_point(d, q), _key)
    assert got["speedup"] == pytest.approx(math.exp(logs.mean()))
    assert got["speedup_low"] == pytest.approx(math.exp(logs.mean() - half))
    assert got["speedup_high"] == pytest.approx(math.exp(logs.mean() + half))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(1, 1e4), st.floats(1, 1e4)), min_size=2, max_size=8),
       st.floats(0.5, 0.99))
def test_interval_contains_the_estimate_and_widens_with_confidence(pairs, confidence):
    d, q = zip(*pairs)
    narrow = statistics.point_statistics(_point(d, q), _key, confidence)
    wide = statistics.point_statistics(_point(d, q), _key, min(0.999, confidence + 0.009))
    assert narrow["speedup_low"] <= narrow["speedup"] * (1 + 1e-9) and narrow["speedup"] <= narrow["speedup_high"] * (1 + 1e-9)
    assert wide["speedup_low"] <= narrow["speedup_low"] * (1 + 1e-9)
    assert narrow["verdict"] == statistics.verdict(math.log(narrow["speedup_low"]), math.log(narrow["speedup_high"]))


def test_collective_geomean_counts_default_points_as_one_and_pairs_by_round():
    points = [_point([20, 22, 21], [10, 11, 10.5]), _point([10, 11, 12], [10, 11, 12], chosen=("default", 0))]
    s = statistics.collective_statistics(points, _key)
    assert s["geomean_speedup"] == pytest.approx(math.sqrt(2), rel=1e-6)
    assert s["geomean_low"] == pytest.approx(s["geomean_high"], rel=1e-6)   # the same 2x in every round
    every_default = statistics.collective_statistics(points[1:], _key)
    assert every_default["geomean_speedup"] == 1.0 and every_default["geomean_low"] == 1.0


def test_overall_weights_collectives_by_points_and_decides():
    a = {"log_mean": math.log(1.2), "log_se": 0.01, "dof": 4, "points": 3}
    b = {"log_mean": math.log(1.0), "log_se": 0.02, "dof": 4, "points": 1}
    o = statistics.overall_statistics({"bcast": a, "reduce": b})
    assert o["geomean_speedup"] == pytest.approx(math.exp(0.75 * math.log(1.2)))
    assert o["geomean_low"] > 1
    rows = [{"verdict": "faster", "collective": "bcast", "comm_size": 2, "msg_size": 1}]
    assert statistics.decide(rows, o)[0] == "deploy"
    rows.append({"verdict": "slower", "collective": "reduce", "comm_size": 4, "msg_size": 8})
    decision, reason = statistics.decide(rows, o)
    assert decision == "do not deploy" and "reduce comm 4 msg 8" in reason
    flat = statistics.overall_statistics({"bcast": dict(a, log_mean=0.001, log_se=0.05)})
    assert statistics.decide(rows[:1], flat)[0] == "do not deploy"


def test_oversubscription():
    assert statistics.oversubscription(8, 2) == 4.0 and statistics.oversubscription(2, 2) is None


@pytest.fixture
def _mpi(mpi_env):
    """Launches MPI workers (conftest.mpi_env)."""


@needs_openmpi
def test_verify_reports_the_slower_point_and_fails_on_regression(tmp_path, _mpi):
    # pipeline bcast in 1 KiB segments at 1 MiB on 2 ranks: about 80x slower than the default on the dev VM
    tree = tree_choosing("bcast", [2], [4096, 1 << 20], [[("6", 0), ("3", 1024)]])
    path = tmp_path / "slow.qt.json"
    tree.save(path)
    out = tmp_path / "verify.json"
    result = CliRunner().invoke(main, ["verify", str(path), "--np", "2", "--rounds", "6", "--max-reps", "30",
                                       "--max-time", "0.3", "--no-check-rules", "--json", "-o", str(out),
                                       "--fail-on-regression"])
    assert result.exit_code == 3, result.output            # written whole, then the regression's exit status
    doc = json.loads(out.read_text())
    slow = [p for p in doc["points"] if p["msg_size"] == 1 << 20][0]
    assert slow["verdict"] == "slower" and slow["speedup_high"] < 1
    stats = doc["statistics"]
    assert stats["decision"] == "do not deploy" and "comm 2 msg 1048576" in stats["reason"]
    assert stats["machine"]["np"] == 2 and doc["summary"]["bcast"]["verdicts"]["slower"] >= 1
    assert "DECISION: do not deploy" in result.output       # on stderr when the report goes to a file
