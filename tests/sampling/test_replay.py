"""`quadsel measure --replay FILES`: answers from recorded sweeps, its resume and budget, its errors,
and the adaptive strategy's figures on the recorded data (examples/ and, when present, ORFEO)."""

import csv
import glob
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from quadsel.cli import main
from quadsel.decision.decision_function import DecisionFunction
from quadsel.decision.decision_map import build_decision_map
from quadsel.evaluate.penalty import penalty_grid, summarize
from quadsel.ingest import read_measurements
from quadsel.sampling.budget import parse_budget
from quadsel.measure.output import SKIPPED

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MPICH = str(EXAMPLES / "mpich5-bcast.csv")


def run(*args):
    return CliRunner().invoke(main, ["measure", *args])


def replay(out, files, *options, collective="bcast"):
    result = run("--replay", *files, "-c", collective, "-o", str(out), "--quiet", *options)
    assert result.exit_code == 0, result.output
    return json.loads(Path(str(out)[:-4] + ".meta.json").read_text())


def data_rows(path):
    with open(path, newline="") as handle:
        return [r for r in csv.reader(handle) if r and not r[0].startswith(("#", "collective"))]


def test_full_replay_writes_the_recorded_rows(tmp_path):
    out = tmp_path / "full.csv"
    meta = replay(out, [MPICH])
    assert sorted(data_rows(out)) == sorted(data_rows(MPICH))      # times, stddevs and reps as recorded
    assert meta["complete"] and meta["library"] == "replay" and "adaptive" not in meta
    assert meta["benchmarking_time_us"] == meta["full_sweep_benchmarking_time_us"] > 0
    assert meta["replay"]["files"][0]["sha256"] and meta["grid"]["points"] == 147 * 8
    assert "# skipped" not in out.read_text()


def test_adaptive_replay_of_an_example(tmp_path):
    out = tmp_path / "adaptive.csv"
    meta = replay(out, [MPICH], "--adaptive")
    done = meta["adaptive"]
    assert done["finished"] and meta["complete"] and done["full_sweep_time_is"] == "recorded"
    assert 0 < done["share_of_full_sweep"] < 0.5
    assert done["pairs_measured"] + done["pairs_skipped"] == 147 * 8       # every pair decided once, the default's too
    recorded = {tuple(r[:5]): r for r in data_rows(MPICH)}
    rows = data_rows(out)
    assert len(rows) == done["pairs_measured"]
    for r in rows:                                   # recorded times, fewer repetitions
        full = recorded[tuple(r[:5])]
        assert r[5:7] == full[5:7] and 5 <= int(r[7]) <= int(full[7])
    points = {(r[3], r[4]) for r in rows}
    assert len(points) == done["points_measured"]
    assert {(r[3], r[4]) for r in rows if r[1] == "default"} <= points     # the default is a candidate...
    # ...and never alone at a point (the decision map would fill that point from its neighbours)
    assert all(any(q[1] != "default" and (q[3], q[4]) == p for q in rows) for p in points)
    assert not any(line.startswith(f"{SKIPPED}bcast,default,0,*,*") for line in Path(out).read_text().splitlines())
    # quadsel build reads it without a flag (the # lines are comments)
    assert CliRunner().invoke(main, ["build", str(out), "-o", str(tmp_path / "t.json")]).exit_code == 0


def test_an_interrupted_replay_resumes_to_the_same_file(tmp_path):
    whole = tmp_path / "whole.csv"
    replay(whole, [MPICH], "--adaptive")
    text = whole.read_text()
    for cut in (0.3, 0.7):
        part = tmp_path / f"part{cut}.csv"
        # what a kill -9 leaves: the first rows and half a line
        part.write_text(text[:int(len(text) * cut)])
        meta = replay(part, [MPICH], "--adaptive")
        assert part.read_text() == text, cut      # the same decisions from the rows already written
        assert meta["complete"]


def test_budget_share_stops_and_a_rerun_with_more_continues(tmp_path):
    whole = tmp_path / "whole.csv"
    replay(whole, [MPICH], "--adaptive")
    out = tmp_path / "cut.csv"
    meta = replay(out, [MPICH], "--adaptive", "--budget", "5%")
    done = meta["adaptive"]
    assert not meta["complete"] and done["budget_spent"] and not done["finished"]
    assert done["budget"] == {"budget": "5%", "seconds": None, "share": 0.05}
    assert 0.05 <= done["share_of_full_sweep"] < 0.08
    assert "# budget 5% spent" in out.read_text()
    meta = replay(out, [MPICH], "--adaptive")
    assert meta["complete"] and len(meta["runs"]) == 2
    assert sorted(data_rows(out)) == sorted(data_rows(whole))


def test_budget_time_in_a_replay_counts_the_modelled_benchmarking_time(tmp_path):
    meta = replay(tmp_path / "t.csv", [MPICH], "--adaptive", "--budget", "1s")
    assert meta["adaptive"]["budget_spent"]
    assert 1e6 <= meta["adaptive"]["benchmarking_time_us"] < 1.5e6


def test_files_without_stddev_or_reps_count_one_call_per_pair(tmp_path):
    sweep = tmp_path / "osu_like.csv"
    with open(sweep, "w") as handle:
        handle.write("Processes,Size,Algorithm,Latency(us)\n")
        for c in (2, 4):
            for m in (1, 2, 4, 8):
                handle.write(f"{c},{m},1,{1 + m}\n{c},{m},6,{10 + m}\n")
    meta = replay(tmp_path / "a.csv", [str(sweep)], "--adaptive", "--cheap", "0")
    rows = data_rows(tmp_path / "a.csv")
    assert all(r[6] == "" and r[7] == "" for r in rows)          # nothing invented
    assert meta["full_sweep_benchmarking_time_us"] == sum((1 + m) + (10 + m) for m in (1, 2, 4, 8)) * 2
    assert meta["benchmarking_time_us"] == sum(float(r[5]) for r in rows)


@pytest.mark.parametrize("args, message", [
    (["--replay", "-c", "bcast", "-o", "x.csv"], "--replay needs the recorded FILES"),
    ([MPICH, "-c", "bcast", "-o", "x.csv"], "measurement files are read only with --replay"),
    (["--replay", MPICH, "-c", "bcast", "-o", "x.csv", "--np", "2"], "--replay runs no MPI"),
    (["--replay", MPICH, "-c", "bcast", "-o", "x.csv", "--budget", "10%"], "--budget needs --adaptive"),
    (["--replay", MPICH, "-c", "bcast", "-o", "x.csv", "--adaptive", "--budget", "ten"], "bad --budget 'ten'"),
    (["--replay", "missing.csv", "-c", "bcast", "-o", "x.csv"], "missing.csv: file not found"),
    (["--replay", MPICH, "-c", "reduce", "-o", "x.csv"], "no reduce measurements"),
    (["--replay", MPICH, "-c", "bcast", "-o", "x.csv", "--comm-sizes", "64"], "no recorded measurements in the"),
])
def test_bad_input_is_one_line_exit_2_and_no_file(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "x.meta.json").exists()


def test_the_grid_options_narrow_a_replay(tmp_path):
    meta = replay(tmp_path / "n.csv", [MPICH], "--comm-sizes", "2,4", "--msg-sizes", "1K-64K:pow2",
                  "--algorithms", "binomial,default")
    assert meta["grid"]["comm_sizes"] == [2, 4] and meta["grid"]["msg_sizes"] == [1024 << i for i in range(7)]
    assert {r[1] for r in data_rows(tmp_path / "n.csv")} == {"binomial", "default"}


@pytest.mark.parametrize("text, seconds, share", [("90m", 5400, None), ("1h30m", 5400, None), ("45s", 45, None),
                                                  ("1.5h", 5400, None), ("25%", None, 0.25)])
def test_parse_budget(text, seconds, share):
    budget = parse_budget(text)
    assert budget.seconds == seconds and budget.share == share


def _deployed_penalty(csv_path, full_map, tmp_path):
    """Mean penalty (%) on the full data of the tree `quadsel tune` deploys from `csv_path` (`quadsel build` with no
    option: the library default kept where nothing beats it), against the best measured choice, default included."""
    tree = tmp_path / (Path(csv_path).stem + ".qt.json")
    assert CliRunner().invoke(main, ["build", str(csv_path), "-o", str(tree)]).exit_code == 0
    from quadsel.evaluate.comparators import QuadtreeSelector, choice_on
    fn = DecisionFunction.load(tree).size_tree
    return summarize(penalty_grid(full_map, choice_on(QuadtreeSelector.of(fn), full_map)), full_map).mean


def _goal(files, collective, tmp_path):
    """(time share, penalty gap in pp) of `measure --adaptive` against the full sweep, replayed from `files`."""
    full_map = build_decision_map(read_measurements(files, collective=collective), collective)
    replay(tmp_path / f"{collective}-full.csv", files, collective=collective)
    meta = replay(tmp_path / f"{collective}-adaptive.csv", files, "--adaptive", collective=collective)
    gap = _deployed_penalty(tmp_path / f"{collective}-adaptive.csv", full_map, tmp_path) - \
        _deployed_penalty(tmp_path / f"{collective}-full.csv", full_map, tmp_path)
    return meta["adaptive"]["share_of_full_sweep"], gap


@pytest.mark.parametrize("coll", ["bcast", "reduce"])
def test_orfeo_replay_meets_the_issue_goal(orfeo, tmp_path, coll):
    """Issue 33 (tune's default strategy): on ORFEO bcast and on reduce, each, at most 30 % of the full sweep's
    benchmarking time, and the deployed tree's penalty on the full data at most 0.5 pp above the full sweep's
    (figures: docs/benchmarks.md, *Measuring strategies*)."""
    files = sorted(glob.glob(str(orfeo / f"{coll}_algo*.csv"))) + [str(orfeo / f"{coll}_default.csv")]
    share, gap = _goal(files, coll, tmp_path)
    assert share <= 0.30 and gap <= 0.5, (coll, share, gap)


@pytest.mark.parametrize("name", ["mpich5-bcast", "ompi5-bcast", "ompi5-reduce", "second-run/ompi5-reduce",
                                  "two-ranks/allreduce", "two-ranks/bcast", "two-ranks/reduce"])
def test_example_replays_meet_the_issue_goal(tmp_path, name):
    """The same bounds on every example, single rows included (two-ranks/bcast lost 8.4 pp before the step rule;
    mpich5-bcast spent 32.8 % before the indifference zone, two-ranks/allreduce 30.7 % at --behind 1.5)."""
    coll = next(c for c in ("allreduce", "bcast", "reduce") if c in name)
    share, gap = _goal([str(EXAMPLES / f"{name}.csv")], coll, tmp_path)
    assert share <= 0.30 and gap <= 0.5, (name, share, gap)


def test_the_default_is_a_candidate_the_build_can_keep(tmp_path):
    """Where the library default is far ahead of every forced method (ORFEO-like: a default the forced set
    lacks), the adaptive run measures it and one method beside it, and the deployed tree keeps the default
    there, as the full sweep's does."""
    sweep = tmp_path / "full.csv"
    with open(sweep, "w") as handle:
        handle.write("collective,algorithm,segsize,comm_size,msg_size,time_us,stddev_us,reps\n")
        for c in (2, 4, 8):
            for m in (1 << i for i in range(0, 21, 2)):
                big = m >= 4096 and c >= 4
                handle.write(f"bcast,1,0,{c},{m},{1 + m / 100 * c:.3f},0.01,20\n")
                handle.write(f"bcast,6,0,{c},{m},{2 + m / 150 * c:.3f},0.01,20\n")
                handle.write(f"bcast,default,0,{c},{m},{(0.3 if big else 1.2) * (1 + m / 150 * c):.3f},0.01,20\n")
    meta = replay(tmp_path / "a.csv", [str(sweep)], "--adaptive")
    rows = data_rows(tmp_path / "a.csv")
    assert meta["adaptive"]["pairs_skipped"] > 0
    for c, m in {(r[3], r[4]) for r in rows}:
        here = {r[1] for r in rows if (r[3], r[4]) == (c, m)}
        assert here - {"default"}, (c, m)                          # never the default alone
        if int(m) >= 4096 and int(c) >= 4:
            assert "default" in here, (c, m)                       # the winner is measured
    assert CliRunner().invoke(main, ["build", str(tmp_path / "a.csv"), "-o", str(tmp_path / "t.qt.json")]).exit_code == 0
    fn = DecisionFunction.load(tmp_path / "t.qt.json").size_tree
    assert fn.query(8, 1 << 20).algorithm == "default"


def _drive(recording, plan, run, rule):
    """The replay's loop (run_replay) on a PlanRun made by hand."""
    from quadsel.sampling.replay import replay_point
    while (c := run.next_row()) is not None:
        for m in plan.msg_sizes:
            todo = run.todo(c, m)
            if todo is None:
                return
            run.done(c, m, replay_point(recording, c, m, todo, rule, 5, True))
        run.row_finished(c)


def test_a_real_run_estimates_the_full_sweep_and_checks_a_share_only_once_it_can(tmp_path):
    """A real run does not know the full sweep: it estimates it from what it measured (here checked
    against the recorded one), and a share budget waits for the smallest and largest comm sizes."""
    from quadsel.measure import output
    from quadsel.sampling.adaptive import AdaptivePlan
    from quadsel.sampling.budget import estimate_full_cost
    from quadsel.sampling.replay import Recording
    from quadsel.sampling.sweep import PlanRun
    from quadsel.measure.timing import StoppingRule
    rule = StoppingRule()
    recording = Recording([MPICH], "bcast")
    comms, msgs, methods = recording.grid()
    plan = AdaptivePlan(comms, msgs, methods)
    run = PlanRun(plan, "bcast", output.ResultFile(tmp_path / "a.csv"), progress=False, rule=rule, rounds=2)
    _drive(recording, plan, run, rule)
    exact = recording.full_cost(comms, msgs, methods)
    assert 0.7 < estimate_full_cost(plan, rule, rounds=2) / exact < 1.4
    assert run.summary()["full_sweep_time_is"] == "estimated"
    plan = AdaptivePlan(comms, msgs, methods)
    run = PlanRun(plan, "bcast", output.ResultFile(tmp_path / "b.csv"), budget=parse_budget("1%"), progress=False,
                  rule=rule, rounds=2)
    _drive(recording, plan, run, rule)
    assert run.budget_spent and sorted(plan.rows_done) == [0, len(comms) - 1]


def test_a_replay_of_a_multi_host_file_is_refused_not_pooled(tmp_path):
    """4 ranks as 2 x 2 and as 4 x 1 are two points; a replay keys on the communicator size and would have pooled
    them (the later row answering for both): refused in one line, nothing written (issue 30)."""
    src = tmp_path / "layouts.csv"
    src.write_text("collective,algorithm,segsize,nodes,ppn,comm_size,msg_size,time_us\n"
                   "bcast,6,0,2,2,4,8,1.5\nbcast,1,0,2,2,4,8,2.5\nbcast,6,0,4,1,4,8,3.5\nbcast,1,0,4,1,4,8,2.0\n")
    out = tmp_path / "out.csv"
    for options in ((), ("--adaptive",)):
        result = run("--replay", str(src), "-c", "bcast", "-o", str(out), "--quiet", *options)
        assert result.exit_code == 2 and "layouts.csv: rows of 2 layout(s)" in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1 and not out.exists()
