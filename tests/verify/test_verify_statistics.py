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


def test_collective_geomean_leaves_the_points_that_keep_the_default_out():
    points = [_point([20, 22, 21], [10, 11, 10.5]), _point([10, 11, 12], [10, 11, 12], chosen=("default", 0))]
    s = statistics.collective_statistics(points, _key)
    assert s["geomean_speedup"] == pytest.approx(2.0, rel=0.05)   # not sqrt(2): the default point measures nothing
    assert (s["points"], s["all_points"]) == (1, 2)
    every_default = statistics.collective_statistics(points[1:], _key)
    assert every_default["geomean_speedup"] == 1.0 and every_default["geomean_low"] == 1.0
    assert every_default["points"] == 0


def test_overall_weights_collectives_by_changed_points():
    a = {"log_mean": math.log(1.2), "log_se": 0.01, "dof": 4, "points": 3, "all_points": 10}
    b = {"log_mean": math.log(1.0), "log_se": 0.02, "dof": 4, "points": 1, "all_points": 5}
    o = statistics.overall_statistics({"bcast": a, "reduce": b})
    assert o["geomean_speedup"] == pytest.approx(math.exp(0.75 * math.log(1.2)))
    assert o["geomean_low"] > 1 and (o["changed"], o["points"]) == (4, 15)


def _measured(rounds):
    """A point's times entry as speed.run writes it: the fenced mean of all calls and each round's median."""
    from quadsel.measure.timing import StoppingRule
    flat = [x for r in rounds for x in r]
    ends = list(np.cumsum([len(r) for r in rounds]))
    return {"mean_us": StoppingRule().summarize(flat)[0], "rounds_us": round_medians(flat, ends)}


def _row_of(default_rounds, chosen_rounds):
    """The printed table row and the JSON row of one bcast point timed with these per-round samples."""
    from quadsel.verify import command, speed
    point = {"collective": "bcast", "comm": 2, "msg": 8, "default": ["default", 0], "quadsel": ["6", 0],
             "candidates": None, "times": {"default": _measured(default_rounds), "6": _measured(chosen_rounds)}}
    result = {"collective": "bcast", "points": [point]}
    rows, summary = speed.summarize(result)
    statistics.annotate({"bcast": result}, rows, {"bcast": summary}, np_=2)
    table = command.format_table(rows, {"bcast": summary}, None, (), "openmpi")
    return [line for line in table.splitlines() if line.startswith("| bcast |")][0], rows[0]


def test_a_row_does_not_contradict_itself():
    # issue 31: `default 5.2 µs, quadsel 3.7 µs, speed-up 0.11`: one slow round of few calls is fenced out of the
    # mean of all calls, but it is one of the rounds the speed-up is computed from
    line, row = _row_of([[5.2] * 50, [5.2] * 5], [[3.0] * 50, [100.0] * 5])
    cells = [c.strip() for c in line.strip("|").split("|")]
    default, quadsel, speedup = float(cells[3]), float(cells[4]), float(cells[6])
    assert (default > quadsel) == (speedup > 1), line
    assert row["speedup"] == pytest.approx(row["default_us"] / row["quadsel_us"])
    assert row["quadsel_mean_us"] == pytest.approx(3.0)      # the mean of all calls is kept, under its own name


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.lists(st.floats(0.5, 500), min_size=1, max_size=12),
                          st.lists(st.floats(0.5, 500), min_size=1, max_size=12)), min_size=1, max_size=6))
def test_printed_speedup_agrees_with_the_printed_times_and_its_interval(rounds):
    default_rounds, chosen_rounds = zip(*rounds)
    line, row = _row_of(default_rounds, chosen_rounds)
    cells = [c.strip() for c in line.strip("|").split("|")]
    default, quadsel, speedup = float(cells[3]), float(cells[4]), float(cells[6])
    # the same side of 1 as the printed times (rounding to the printed digits may only reach 1.00)
    if default > quadsel:
        assert speedup >= 1.0, line
    elif default < quadsel:
        assert speedup <= 1.0, line
    assert row["speedup"] == pytest.approx(row["default_us"] / row["quadsel_us"], rel=1e-9)
    if cells[7] != "—":
        low, high = (float(x) for x in cells[7].strip("[]").split(","))
        assert low <= speedup <= high, line


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
    assert stats["proof"]["ran"] is False and stats["proof"]["why_not"] == "--no-check-rules"
    assert "DECISION: do not deploy" in result.output       # on stderr when the report goes to a file
