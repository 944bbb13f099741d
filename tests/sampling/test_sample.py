"""`quadsel measure --sample model --budget`: the plan (sample.py) and its replay, resumed, and the model build
from it (examples/; ORFEO when ../shared is present)."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from quadsel.cli import main
from quadsel.decision.decision_function import DecisionFunction
from quadsel.ingest import read_measurements
from quadsel.sampling.sample import ModelSample, expected_cost

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "ompi5-bcast.csv")


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def drive(plan, answer):
    """Run a plan to its end as sweep.PlanRun does, answering every method with answer(c, m, k)."""
    from quadsel.sampling.adaptive import Result
    visits = []
    while (c := plan.next_row()) is not None:
        for m in plan.msg_sizes:
            todo = plan.point(c, m)
            if todo:
                visits.append((c, m, tuple(todo)))
            plan.record(c, m, {k: Result(answer(c, m, k)) for k in todo})
        plan.row_finished(c)
    return visits


def test_plan_measures_every_method_at_each_point_cheapest_first():
    comms, msgs = [2, 4, 8, 16, 32], [1, 64, 4096, 65536, 1 << 20]
    methods = [("default", 0), ("1", 0), ("6", 0), ("6", 8192)]
    plan = ModelSample(comms, msgs, methods)
    measured = drive(plan, lambda c, m, k: 1.0 + c * m)
    visits = [(c, m) for c, m, _ in measured]
    assert sorted(visits) == sorted((c, m) for c in comms for m in msgs)     # every point once
    assert all(set(todo) == {("1", 0), ("6", 0), ("6", 8192)} for _, _, todo in measured)
    costs = [expected_cost(c, m) for c, m in visits]
    # passes of doubling expected cost: nothing visited before a point of less than half its cost
    assert all(later >= earlier / 2 for i, earlier in enumerate(costs) for later in costs[i + 1:])
    assert visits[0] == (2, 1) and visits[-1] == (32, 1 << 20)
    assert plan.summary()["points_measured"] == 25


def replay(out, *options, files=(EXAMPLE,), collective="bcast"):
    result = invoke("measure", "--replay", *files, "-c", collective, "-o", str(out), "--quiet", *options)
    assert result.exit_code == 0, result.output
    return json.loads(Path(str(out)[:-4] + ".meta.json").read_text())


def test_replay_sample_spends_the_budget_then_builds_with_the_model(tmp_path):
    out = tmp_path / "sample.csv"
    meta = replay(out, "--sample", "model", "--budget", "20%")
    done = meta["sample"]
    assert meta["methodology"]["sample"] == "model" and not meta["complete"] and done["budget_spent"]
    rows = [r for r in read_measurements([str(out)]) if not r.is_default]
    per_point = {}
    for r in rows:
        per_point.setdefault((r.comm_size, r.msg_size), set()).add((r.algorithm, r.segsize))
    assert len({frozenset(v) for v in per_point.values()}) == 1            # every method at every point
    spent = sum(r.time * r.reps for r in rows)
    assert spent == pytest.approx(meta["benchmarking_time_us"], rel=1e-6)
    last = max(per_point, key=lambda p: expected_cost(*p))
    last_cost = sum(r.time * r.reps for r in rows if (r.comm_size, r.msg_size) == last)
    full = meta["full_sweep_benchmarking_time_us"]
    assert 0.2 * full <= spent < 0.2 * full + last_cost * 2 ** 6        # stops once over, within a pass's point
    assert done["points_measured"] == len(per_point) < done["points"]
    before = out.read_bytes()
    replay(out, "--sample", "model", "--budget", "20%")                     # a rerun measures nothing again
    assert out.read_bytes().count(b"\n") == before.count(b"\n") + 1        # one more budget note only
    # the model build predicts the grid recorded in the metadata, and says so
    tree = tmp_path / "m.qt.json"
    result = invoke("build", str(out), "--model", "hockney", "-o", str(tree), "--json")
    assert result.exit_code == 0, result.output
    fn = DecisionFunction.load(str(tree)).size_tree
    assert fn.comm_sizes.tolist() == meta["grid"]["comm_sizes"] and fn.msg_sizes.tolist() == meta["grid"]["msg_sizes"]
    predicted = done["points"] - done["points_measured"]
    assert fn.provenance["model"]["predicted_points"] == predicted
    assert f"{predicted} points predicted by the hockney model (never scored)" in result.stderr
    summary = json.loads(result.stdout)
    assert summary["points"] == done["points_measured"] and summary["predicted_points"] == predicted


@pytest.mark.parametrize("args, message", [
    (["--sample", "model"], "--sample needs --budget"),
    (["--sample", "model", "--budget", "10%", "--adaptive"], "two different plans"),
    (["--sample", "model", "--budget", "10%", "--behind", "2"], "--behind needs --adaptive"),
    (["--sample", "grid", "--budget", "10%"], "Invalid value for '--sample'"),
])
def test_bad_sample_options_fail_in_one_line(tmp_path, args, message):
    result = invoke("measure", "--replay", EXAMPLE, "-c", "bcast", "-o", str(tmp_path / "x.csv"), *args)
    assert result.exit_code == 2 and message in result.output
    assert not (tmp_path / "x.csv").exists()


def test_orfeo_model_build_at_a_quarter_of_the_cost(tmp_path, orfeo):
    """ORFEO bcast at 25 % of the sweep: the model build is scored on the full data (benchmarks/model_build.py)."""
    files = sorted(str(p) for p in orfeo.glob("bcast_algo*.csv"))
    out = tmp_path / "s.csv"
    meta = replay(out, "--sample", "model", "--budget", "25%", files=files)
    assert meta["benchmarking_time_us"] / meta["full_sweep_benchmarking_time_us"] < 0.3
    tree = tmp_path / "s.qt.json"
    assert invoke("build", str(out), "--model", "hockney", "-o", str(tree)).exit_code == 0
    report = invoke("report", *files, "--tree", str(tree), "--no-compare", "--format", "json")
    assert report.exit_code == 0, report.output
    row = next(r for r in json.loads(report.stdout)["rows"] if r["method"] == "tree")
    assert row["points"] == 160 and row["penalty_mean"] < 2.6     # the full sweep's default build: 2.60 %


def test_a_larger_budget_extends_the_sample(tmp_path):
    grown, fresh = tmp_path / "grown.csv", tmp_path / "fresh.csv"
    replay(grown, "--sample", "model", "--budget", "10%")
    replay(grown, "--sample", "model", "--budget", "20%")
    replay(fresh, "--sample", "model", "--budget", "20%")
    rows = lambda p: sorted(line for line in p.read_text().splitlines() if not line.startswith("#"))  # noqa: E731
    assert rows(grown) == rows(fresh)
