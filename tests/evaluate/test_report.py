import json

import numpy as np
import pytest

from quadsel.evaluate import report
from quadsel.decision.decision_map import build_decision_map
from quadsel.ingest import read_measurements
from quadsel.ingest.table import Measurement

from helpers import random_table, table_from_cube

KEYS = {"constraint", "depth_min", "depth_max", "depth_mean", "penalty_min", "penalty_max", "penalty_mean",
        "penalty_median", "leaves", "nodes"}


def test_table_has_depth_rows_exact_sweep_and_default():
    rng = np.random.default_rng(0)
    cost = rng.uniform(1, 10, size=(5, 11, 3))
    default = cost.min(axis=2) * 1.1
    dmap = build_decision_map(table_from_cube(cost, [2, 3, 4, 6, 8], [2 ** i for i in range(11)],
                                              [("1", 0), ("2", 0), ("3", 0)], default=default))
    rows = report.penalty_table(dmap, thresholds=(0.5, 1.0))
    names = [r["constraint"] for r in rows]
    assert names == ["max_depth=1", "max_depth=2", "max_depth=3", "max_depth=4", "exact", "threshold=0.5", "default"]
    by_name = {r["constraint"]: r for r in rows}
    assert by_name["exact"]["penalty_max"] == 0.0
    assert by_name["max_depth=1"]["paper_leaves"] == 4 and by_name["max_depth=1"]["leaves"] <= 4
    assert by_name["default"]["penalty_mean"] > 0
    for row in rows[:-1]:       # the deployed tree (the size every output prints) and the paper's padded count
        assert row["size"] == row["leaves"] <= row["paper_leaves"] and row["leaves"] <= row["nodes"]


def test_outputs_in_markdown_csv_and_json():
    rows, _, _ = random_table(np.random.default_rng(1), 4, 4, 3)
    table = report.penalty_table(build_decision_map(rows))
    payload = json.loads(report.to_json(table, {"collective": "bcast"}))
    assert all(KEYS <= set(row) for row in payload["rows"])
    md = report.to_markdown(table, "t")
    assert md.count("\n|") == len(table) + 2 and "| exact |" in md
    csv_text = report.to_csv(table)
    assert csv_text.splitlines()[0].startswith("constraint,depth_min,depth_max")
    assert len(csv_text.splitlines()) == len(table) + 1


def _full_report(**kwargs):
    rng = np.random.default_rng(2)
    cost = rng.uniform(1, 10, size=(5, 8, 3))
    dmap = build_decision_map(table_from_cube(cost, [2, 4, 8, 16, 32], [2 ** (2 * i) for i in range(8)],
                                              [("1", 0), ("2", 0), ("6", 0)], default=cost.min(axis=2) * 1.2))
    return dmap, report.build_report(dmap, thresholds=(0.5, 1.0), **kwargs)


def test_full_report_rows_carry_method_size_and_holdout():
    dmap, result = _full_report()
    kinds = [r["method"] for r in result.rows]
    trees = kinds.count("quadsel") + kinds.count("quadtree")
    assert kinds[0] == "quadsel" and kinds[trees - 5:trees] == ["quadtree"] * 5 and kinds[trees] == "default"
    assert {"single", "runlength", "model"} <= set(kinds)
    by_kind = {r["method"]: r for r in result.rows}
    assert by_kind["default"]["size"] is None and by_kind["single"]["size"] == 1
    assert by_kind["model"]["size"] == 3 * len(dmap.methods)
    assert by_kind["runlength"]["penalty_max"] == 0.0
    assert by_kind["single"]["penalty_mean"] >= 0.0
    payload = json.loads(report.to_json(result.rows, result.meta()))
    for row in payload["rows"]:
        assert KEYS | {"method", "size", "holdout"} <= set(row) and row["holdout"] is None
    assert payload["models"][0]["family"] == "linear" and payload["points"] == 40
    csv_lines = report.to_csv(result.rows).splitlines()
    assert len(csv_lines) == len(result.rows) + 1 and "method" in csv_lines[0] and "holdout" in csv_lines[0]


def test_cart_rows_share_the_quadtree_leaf_budgets():
    pytest.importorskip("sklearn")
    _, result = _full_report()
    budgets = sorted({r["leaves"] for r in result.rows if r["method"] in ("quadtree", "quadsel")})
    carts = [r for r in result.rows if r["method"] == "cart"]
    assert [int(r["constraint"].split("=")[1]) for r in carts] == budgets[:len(carts)]
    assert all(r["size"] <= int(r["constraint"].split("=")[1]) for r in carts)


def test_without_scikit_learn_the_cart_rows_are_left_out_with_a_note(monkeypatch):
    monkeypatch.setattr(report, "cart_available", lambda: False)
    _, result = _full_report()
    assert not [r for r in result.rows if r["method"] == "cart"]
    assert result.notes == [report.NO_SKLEARN]
    assert "scikit-learn is not installed" in report.report_markdown(result)


def test_markdown_has_one_table_per_split():
    from quadsel.evaluate.holdout import Holdout
    _, result = _full_report(holdouts=[Holdout("comm")])
    text = report.report_markdown(result, figure_links=[("Fig", "figs/a.png")])
    assert text.count("| Method | Constraint | Size |") == 2
    assert "#### held out: comm" in text and "- [Fig](figs/a.png)" in text and "Fitted models" in text


def test_orfeo_comparators_and_holdout(orfeo):
    from quadsel.evaluate.holdout import Holdout
    from quadsel.ingest import read_measurements
    names = ["bcast_algo1.csv", "bcast_algo2_all.csv", "bcast_algo3.csv", "bcast_algo6.csv", "bcast_default.csv"]
    dmap = build_decision_map(read_measurements([str(orfeo / n) for n in names]))
    result = report.build_report(dmap, holdouts=[Holdout("msg")], comparators=("default", "single", "runlength"))
    rows = {(r["method"], r["constraint"], r["holdout"]): r for r in result.rows}
    # both pick the best forced algorithm at every point, and pay where the default beats them all
    exact, runlength = rows[("quadtree", "exact", None)], rows[("runlength", "per comm size", None)]
    assert exact["penalty_mean"] == pytest.approx(runlength["penalty_mean"]) and exact["penalty_min"] == 0.0
    assert rows[("default", "default", None)]["penalty_min"] == 0.0
    held = rows[("quadtree", "exact", "msg")]
    assert held["points"] == 80 and held["penalty_mean"] > 0.0


def test_cli_no_compare_keeps_the_paper_table(tmp_path):
    from click.testing import CliRunner
    from quadsel.cli import main
    rows, _, _ = random_table(np.random.default_rng(8), 4, 6, 3)
    path = tmp_path / "m.csv"
    path.write_text("collective,algorithm,segsize,comm_size,msg_size,time_us\n" + "".join(
        f"{r.collective},{r.algorithm},{r.segsize},{r.comm_size},{r.msg_size},{r.time}\n" for r in rows))
    result = CliRunner().invoke(main, ["report", str(path), "--no-compare", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert {r["method"] for r in json.loads(result.stdout)["rows"]} == {"quadtree"}
    result = CliRunner().invoke(main, ["report", str(path)])
    assert "At a glance" in result.stdout and "| runlength | per comm size |" in result.stdout


def test_a_tree_built_on_one_run_is_scored_on_another(tmp_path):
    """report --tree: the tree is scored as it is on the other run's points (never rebuilt)."""
    from click.testing import CliRunner
    from quadsel.cli import main
    from quadsel.decision.decision_function import DecisionFunction
    paths = []
    for seed in (11, 12):
        rows, _, _ = random_table(np.random.default_rng(seed), 4, 6, 3)
        path = tmp_path / f"run{seed}.csv"
        path.write_text("collective,algorithm,segsize,comm_size,msg_size,time_us\n" + "".join(
            f"{r.collective},{r.algorithm},{r.segsize},{r.comm_size},{r.msg_size},{r.time}\n" for r in rows))
        paths.append(path)
    tree = tmp_path / "run11.qt.json"
    assert CliRunner().invoke(main, ["build", str(paths[0]), "-o", str(tree)]).exit_code == 0
    result = CliRunner().invoke(main, ["report", str(paths[1]), "--tree", str(tree), "--format", "json"])
    assert result.exit_code == 0, result.output
    row = next(r for r in json.loads(result.stdout)["rows"] if r["method"] == "tree")
    fn = DecisionFunction.load(tree)
    other = build_decision_map(read_measurements([str(paths[1])]))
    from quadsel.evaluate.comparators import QuadtreeSelector, choice_on
    from quadsel.evaluate.penalty import penalty_grid, summarize
    expected = summarize(penalty_grid(other, choice_on(QuadtreeSelector.of(fn), other)), other)
    assert row["constraint"].startswith("run11.qt.json: ") and row["penalty_mean"] == pytest.approx(expected.mean)
    assert row["points"] == expected.points == 24


def test_a_choice_where_the_method_was_not_measured_is_charged_the_worst_penalty():
    from helpers import table_from_cube
    from quadsel.evaluate.penalty import charged_grid, penalty_grid, summarize
    cost = np.array([[[10.0, 20.0, 40.0], [10.0, np.nan, 30.0]]])    # method 1 not measured at the 2nd point
    dmap = build_decision_map(table_from_cube(cost, [4], [8, 64], [("1", 0), ("2", 0), ("3", 0)]))
    choice = np.array([[1, 1]])
    grid = penalty_grid(dmap, choice)
    assert grid.tolist() == [[100.0, 200.0]]                          # charged the worst measured there (3: +200 %)
    summary = summarize(grid, dmap, charged=charged_grid(dmap, choice))
    assert (summary.points, summary.charged, summary.unscored) == (2, 1, 0)
    assert penalty_grid(dmap, np.array([[-1, 0]])).tolist() == [[300.0, 0.0]]   # a method the map lacks


def test_single_best_is_fitted_by_the_penalty_the_report_scores_with():
    """Review finding: SingleBest ranked by interpolated times, the report charges unmeasured methods the worst."""
    from helpers import table_from_cube
    from quadsel.evaluate.comparators import SingleBest
    cost = np.array([[[10.0, 9.9, 40.0], [10.0, np.nan, 40.0], [10.0, np.nan, 40.0], [10.0, 9.9, 40.0]]])
    dmap = build_decision_map(table_from_cube(cost, [4], [1, 2, 4, 8], [("1", 0), ("2", 0), ("3", 0)]))
    single = SingleBest.fit(dmap)
    assert dmap.methods[single.choice].algorithm == "1"      # "2" is charged the worst (+300 %) where unmeasured


def test_figures_of_a_map_one_method_wins_everywhere(tmp_path):
    """Review finding: no restricted tree differs from the exact one and no default: figures without panels."""
    pytest.importorskip("matplotlib")
    from quadsel.evaluate.figures import write_figures
    rows = [Measurement("bcast", alg, 0, c, m, t + c) for c in (2, 3, 4) for m in (1, 2, 4) for alg, t in
            (("1", 1.0), ("6", 2.0))]
    written = write_figures(report.build_report(build_decision_map(rows)), tmp_path / "figs")
    assert written and all((tmp_path / "figs" / p.split("/")[-1]).exists() for _, p in written)
