import numpy as np
import pytest
from click.testing import CliRunner

from quadsel.evaluate import report
from quadsel.cli import main
from quadsel.decision.decision_map import build_decision_map
from quadsel.evaluate.holdout import Holdout

from helpers import random_table

pytest.importorskip("matplotlib")

PNG = b"\x89PNG\r\n\x1a\n"


def _table(seed=0, n_comm=6, n_msg=10, n_methods=3):
    rows, _, _ = random_table(np.random.default_rng(seed), n_comm, n_msg, n_methods)
    default = [r.__class__(r.collective, "default", 0, r.comm_size, r.msg_size, r.time * 1.05)
               for r in rows if r.algorithm == "1"]
    return rows + default


def test_every_figure_is_written_as_a_png(tmp_path):
    from quadsel.evaluate.figures import write_figures
    dmap = build_decision_map(_table())
    result = report.build_report(dmap, holdouts=[Holdout("msg")], comparators=("default", "single", "runlength", "model"))
    written = write_figures(result, tmp_path / "figs")
    names = {p.rsplit("/", 1)[-1] for _, p in written}
    assert {"bcast-decision-maps-depth.png", "bcast-penalty-maps-depth.png", "bcast-penalty-maps-comparators.png", "bcast-decision-maps-comparators.png",
            "bcast-penalty-maps-holdout-msg.png", "bcast-threshold-sweep.png", "bcast-penalty-vs-depth.png",
            "bcast-penalty-vs-size.png"} <= names
    for caption, path in written:
        data = open(path, "rb").read()
        assert caption and data.startswith(PNG) and len(data) > 5000
    assert result.figures == [p for _, p in written]


def test_method_colours_are_one_per_method():
    from quadsel.decision.decision_map import Method
    from quadsel.evaluate.figure_maps import method_colours
    for methods in ([Method(str(i)) for i in range(7)], [Method(str(i)) for i in range(15)],
                    [Method(str(i)) for i in range(33)],
                    [Method(str(a), s) for a in range(1, 10) for s in (0, 1024, 8192, 65536)]):
        assert len(set(method_colours(methods))) == len(methods)


def test_cli_figures_are_linked_from_the_markdown(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("collective,algorithm,segsize,comm_size,msg_size,time_us\n" + "".join(
        f"{r.collective},{r.algorithm},{r.segsize},{r.comm_size},{r.msg_size},{r.time}\n" for r in _table(1, 4, 6)))
    out = tmp_path / "report" / "bcast.md"
    out.parent.mkdir()
    result = CliRunner().invoke(main, ["report", str(path), "--figures", str(tmp_path / "report" / "figs"),
                                       "-o", str(out), "--thresholds", "0.5,1"])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "](figs/bcast-decision-maps-depth.png)" in text and "](figs/bcast-penalty-vs-size.png)" in text
    assert (tmp_path / "report" / "figs" / "bcast-threshold-sweep.png").stat().st_size > 0
