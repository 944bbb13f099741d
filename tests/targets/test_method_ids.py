"""Ids are checked per collective in codegen (and build: tests/ingest/test_identity.py): one line, file:line, exit 2."""

import json

import pytest
from click.testing import CliRunner

from quadsel.cli import main
from quadsel.libraries import openmpi

from helpers import tree_choosing


def tree_with_id(tmp_path, collective, alg):
    fn = tree_choosing(collective, [2, 4], [64, 1024], [[("1", 0), ("2", 0)], [("1", 0), ("2", 0)]])
    data = json.loads(fn.dumps())
    data["provenance"]["library"] = "openmpi"
    data["methods"][1]["algorithm"] = str(alg)
    path = tmp_path / f"{collective}.qt.json"
    path.write_text(json.dumps(data, indent=1))
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if f'"{alg}"' in text)
    return path, line


@pytest.mark.parametrize("collective", ["bcast", "reduce", "allreduce", "allgather", "alltoall", "barrier", "scan"])
@pytest.mark.parametrize("target", ["ompi-rules", "ompi-json", "c", "blob"])
def test_an_id_the_collective_lacks_is_refused_in_one_line_naming_file_and_line(tmp_path, collective, target):
    if collective not in openmpi.ALGORITHMS:
        pytest.skip(f"no coll/tuned id table for {collective} yet (libraries/openmpi.py)")
    path, line = tree_with_id(tmp_path, collective, 42)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["codegen", str(path), "-t", target, "-o", str(out)])
    assert result.exit_code == 2, result.output
    message = result.output.strip()
    assert "\n" not in message and "Traceback" not in message
    assert f"{path}:{line}:" in message and "42" in message and collective in message
    assert not out.exists()                       # nothing half-written


def test_known_ids_pass(tmp_path):
    path, _ = tree_with_id(tmp_path, "bcast", 6)
    result = CliRunner().invoke(main, ["codegen", str(path), "-t", "ompi-rules", "-o", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
