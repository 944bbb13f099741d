"""tune's build step is `quadsel build`'s default build (pipeline/build.py): the same tree, each side outside the
measured range decided by the folds as `quadsel build` decides it (docs/tune.md, step 2). No MPI."""

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from quadsel.cli import main
from quadsel.tune import steps
from quadsel.tune.folder import Folder, Journal

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _without_provenance(text):
    data = json.loads(text)
    data.pop("provenance", None)
    return data


def test_tune_builds_the_tree_quadsel_build_writes_sides_outside_the_range_included(tmp_path):
    folder = Folder(str(tmp_path / "tuned"))
    folder.make()
    Journal(folder, {"library": "openmpi", "library_version": "x", "np": 8, "comm_sizes": None, "msg_sizes": None,
                     "strategy": "full"})
    Path(folder("measurements")).mkdir(exist_ok=True)
    shutil.copy(EXAMPLES / "ompi5-bcast.csv", folder.measurement("bcast"))
    shutil.copy(EXAMPLES / "ompi5-bcast.meta.json", folder("measurements", "bcast.meta.json"))
    Path(folder("trees")).mkdir(exist_ok=True)
    fn, summary, _ = steps.build(folder, "bcast")

    out = tmp_path / "built.qt.json"
    done = CliRunner().invoke(main, ["build", folder.measurement("bcast"), "-o", str(out)])
    assert done.exit_code == 0, done.output
    built = json.loads(out.read_text())
    assert _without_provenance(fn.dumps()) == _without_provenance(out.read_text())
    # the folds extrapolate on this map: a tune that handed every side back would differ here
    assert built["builder"]["outside"] != "default"
    top_comm, top_msg = max(fn.size_tree.comm_sizes), max(fn.size_tree.msg_sizes)
    assert fn.query(top_comm * 4, top_msg * 8) != 0
    assert summary["leaves"] == fn.stats()["leaves"]
