"""codegen -t mpich-json keeps MPICH's own selection from the libmpi `measure` recorded (issue 31: --mpich-base did
not default to it); build carries the recorded path into the tree's provenance."""

import json
import shutil

from click.testing import CliRunner

from quadsel.cli import main

from helpers import MPICH_BASE, REPO


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_mpich_json_defaults_to_the_recorded_libmpi(tmp_path):
    csv = tmp_path / "bcast.csv"
    shutil.copy(REPO / "examples" / "mpich5-bcast.csv", csv)
    meta = json.loads((REPO / "examples" / "mpich5-bcast.meta.json").read_text())
    # MPICH's own selection where `measure` recorded its libmpi: here a tuning JSON stands in for the library
    # (load_base reads either; tests/verify reads the real libmpi.so with QUADSEL_MPICH_PYTHON)
    base = tmp_path / "libmpi-selection.json"
    base.write_text(json.dumps({k: v for k, v in MPICH_BASE.items() if "allreduce" not in k}))
    meta["libmpi"] = str(base)
    (tmp_path / "bcast.meta.json").write_text(json.dumps(meta))
    built = run("build", csv, "-o", tmp_path / "b.qt.json")
    assert built.exit_code == 0, built.output
    assert json.loads((tmp_path / "b.qt.json").read_text())["provenance"]["libmpi"] == str(base)
    by_default = run("codegen", "-t", "mpich-json", tmp_path / "b.qt.json", "-o", tmp_path / "d.json")
    assert by_default.exit_code == 0, by_default.output
    assert f"note: --mpich-base {base} (the libmpi `measure` recorded)" in by_default.output
    given = run("codegen", "-t", "mpich-json", tmp_path / "b.qt.json", "--mpich-base", base, "-o", tmp_path / "g.json")
    assert given.exit_code == 0 and "note: --mpich-base" not in given.output
    assert (tmp_path / "d.json").read_text() == (tmp_path / "g.json").read_text()
    assert "collective=reduce" in (tmp_path / "d.json").read_text()      # the base's other collective kept
    base.unlink()                                                        # gone: said, and the old refusal
    gone = run("codegen", "-t", "mpich-json", tmp_path / "b.qt.json", "-o", tmp_path / "x.json")
    assert gone.exit_code == 2 and "no longer there" in gone.output and "needs --mpich-base" in gone.output
