"""`quadsel build --model FORM` end to end with real files: a sparse CSV in, a tree over the requested grid out,
its predicted points in the tree file and the printed line; bad input one line, exit 2, nothing written."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from quadsel.cli import main
from quadsel.decision.decision_function import DecisionFunction
from quadsel.models import forms

COMM = [2, 4, 8, 16, 32, 64]
MSG = [2 ** i for i in range(0, 21, 2)]
TRUTH = {"1": ("linear", [0.5, 0.2, 1e-4]), "6": ("tree", [0.5, 1.0, 1e-4])}


def write_sparse(path, keep):
    cc, mm = np.meshgrid(COMM, MSG, indexing="ij")
    lines = ["collective,algorithm,segsize,comm_size,msg_size,time_us"]
    for alg, (family, theta) in TRUTH.items():
        t = (forms.hockney_terms(family, cc.ravel(), mm.ravel(), 0) @ theta).reshape(cc.shape)
        lines += [f"bcast,{alg},0,{COMM[i]},{MSG[j]},{t[i, j]:.6f}" for i, j in zip(*np.nonzero(keep))]
    path.write_text("\n".join(lines) + "\n")


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize("form", ["hockney", "paper"])
def test_build_model_predicts_the_grid_and_marks_it(tmp_path, form):
    keep = np.zeros((len(COMM), len(MSG)), dtype=bool)
    keep[:3, :] = keep[:, :3] = True                       # small comm sizes, small messages: the cheap points
    sparse = tmp_path / "sparse.csv"
    write_sparse(sparse, keep)
    tree = tmp_path / "t.qt.json"
    result = invoke("build", sparse, "--model", form, "--predict-comm-sizes", "2-128:pow2",
                    "--predict-msg-sizes", ",".join(map(str, MSG)), "-o", tree, "--json")
    assert result.exit_code == 0, result.output
    fn = DecisionFunction.load(str(tree)).size_tree
    assert fn.comm_sizes.tolist() == COMM + [128] and fn.msg_sizes.tolist() == MSG
    model = fn.provenance["model"]
    assert model["form"] == form and model["measured_points"] == keep.sum()
    assert model["predicted_points"] == (len(COMM) + 1) * len(MSG) - keep.sum()
    assert [m["method"] for m in model["methods"]] == ["1", "6"] and all(m["params"] for m in model["methods"])
    summary = json.loads(result.stdout)
    assert summary["points"] == keep.sum() and summary["predicted_points"] == model["predicted_points"]
    assert f"{model['predicted_points']} points predicted by the {form} model (never scored)" in result.stderr
    # the data came from the hockney forms: that model's tree picks the true fastest method everywhere
    if form == "hockney":
        assert fn.query(128, 1 << 20).algorithm == "6" and fn.query(2, 1).algorithm == "1"
    assert invoke("query", tree, "--comm", 100, "--msg", 5000).exit_code == 0
    report = invoke("report", sparse, "--tree", tree, "--no-compare", "--format", "json")
    assert report.exit_code == 0, report.output
    assert f"t.qt.json was built with {model['predicted_points']} of its points predicted by the {form} model" in \
        report.stderr
    row = next(r for r in json.loads(report.stdout)["rows"] if r["method"] == "tree")
    assert row["points"] == keep.sum()                     # the measured points of the sparse file only


def test_without_model_the_same_file_builds_the_sparse_map(tmp_path):
    keep = np.ones((len(COMM), len(MSG)), dtype=bool)
    sparse = tmp_path / "full.csv"
    write_sparse(sparse, keep)
    result = invoke("build", sparse, "-o", tmp_path / "t.qt.json")
    assert result.exit_code == 0 and "predicted" not in result.stderr
    assert "model" not in DecisionFunction.load(str(tmp_path / "t.qt.json")).size_tree.provenance


@pytest.mark.parametrize("args, message", [
    (["--predict-comm-sizes", "2-8"], "--predict-comm-sizes and --predict-msg-sizes need --model"),
    (["--model", "hockney", "--predict-msg-sizes", "1-x"], "message size"),
    (["--model", "loggp"], "Invalid value for '--model'"),
    (["--model", "paper", "--predict-comm-sizes", "2-4000", "--predict-msg-sizes", "1-4000"], "too large"),
])
def test_bad_model_options_one_line_exit_2(tmp_path, args, message):
    sparse = tmp_path / "s.csv"
    write_sparse(sparse, np.ones((len(COMM), len(MSG)), dtype=bool))
    result = invoke("build", sparse, "-o", tmp_path / "t.qt.json", *args)
    assert result.exit_code == 2 and message in result.output
    assert "Traceback" not in result.output and not (tmp_path / "t.qt.json").exists()


def test_nothing_to_fit_is_one_line_exit_2(tmp_path):
    keep = np.zeros((len(COMM), len(MSG)), dtype=bool)
    keep[:, 0] = True                                      # one message size: no method's model can be fitted
    sparse = tmp_path / "s.csv"
    write_sparse(sparse, keep)
    result = invoke("build", sparse, "--model", "hockney", "-o", tmp_path / "t.qt.json")
    assert result.exit_code == 2 and "cannot fit any method's model" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "t.qt.json").exists()
