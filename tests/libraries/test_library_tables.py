"""The id tables of libraries/ are the installed libraries' own: read back through MPI_T in a real process.

Open MPI: each `coll_tuned_<coll>_algorithm` is an MPI_T enumeration of (id, name); MPICH: each
`MPIR_CVAR_<COLL>_INTRA_ALGORITHM` lists its values in its description. One process per library, all
collectives at once (MPI_T needs no mpiexec). MPICH runs when QUADSEL_MPICH_PYTHON names its venv's Python.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from quadsel.libraries import COLLECTIVES, mpich, openmpi

REPO = Path(__file__).resolve().parents[2]
MPICH_PYTHON = os.environ.get("QUADSEL_MPICH_PYTHON")

PROBE = r"""
import json, sys
from mpi4py import MPI
from quadsel.measure.mpit import MPIT
from quadsel.libraries.mpich import MPICH
mpit = MPIT(thread_level=MPI.Query_thread())
out = {"version": MPI.Get_library_version(), "openmpi": {}, "mpich": {}}
for coll in sys.argv[1:]:
    var = "coll_tuned_%s_algorithm" % coll
    if mpit.has(var):
        out["openmpi"][coll] = mpit.enum_items(var)
    var = "MPIR_CVAR_%s_INTRA_ALGORITHM" % coll.upper()
    if mpit.has(var):
        out["mpich"][coll] = MPICH("MPICH", mpit)._values(var)
mpit.close()
print(json.dumps(out))
"""


def _probe(python):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([python, "-c", PROBE] + list(COLLECTIVES), capture_output=True, text=True, env=env,
                          timeout=120)
    if done.returncode != 0:
        pytest.skip(f"{python}: no mpi4py/MPI_T ({done.stderr.strip().splitlines()[-1:]})")
    return json.loads(done.stdout)


def test_every_collective_has_a_table_in_both_libraries():
    assert set(COLLECTIVES) <= set(openmpi.ALGORITHMS) and set(COLLECTIVES) <= set(mpich.ALGORITHMS)
    for coll in COLLECTIVES:
        assert openmpi.COLLECTIVE_IDS[coll] >= 0
        assert len(openmpi.ALGORITHMS[coll]) >= 2 and len(mpich.ALGORITHMS[coll]) >= 2
        for name in mpich.ALGORITHMS[coll]:      # every MPICH name has a csel container
            assert mpich.container(coll, name)[1].startswith(f"MPIR_{coll.capitalize()}_")


def test_open_mpi_tables_are_the_mpit_enumerations():
    got = _probe(sys.executable)
    if "Open MPI" not in got["version"]:
        pytest.skip("mpi4py here does not load Open MPI")
    assert sorted(got["openmpi"]) == sorted(COLLECTIVES)
    for coll, items in got["openmpi"].items():
        assert items[0] == [0, "ignore"], coll
        ours = {alg: openmpi.MPIT_SPELLINGS.get((coll, alg), name) for alg, name in openmpi.ALGORITHMS[coll].items()}
        assert {v: n for v, n in items[1:]} == ours, coll
        for v, _ in items[1:]:      # every id round-trips through the label functions
            assert openmpi.canonical_label(coll, str(v)) == str(v)
            assert openmpi.algorithm_id(coll, openmpi.ALGORITHMS[coll][v]) == v


@pytest.mark.skipif(not MPICH_PYTHON, reason="the MPICH venv: set QUADSEL_MPICH_PYTHON to a Python with MPICH")
def test_mpich_tables_are_the_cvar_enumerations():
    got = _probe(MPICH_PYTHON)
    assert "MPICH" in got["version"]
    assert sorted(got["mpich"]) == sorted(COLLECTIVES)
    for coll, values in got["mpich"].items():
        assert values[0] == "auto", coll
        assert values[1:] == mpich.ALGORITHMS[coll], coll


def test_docs_hold_the_generated_tables():
    import importlib.util
    spec = importlib.util.spec_from_file_location("collectives_tables", REPO / "scripts" / "collectives_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.text() in (REPO / "docs" / "collectives.md").read_text(), \
        "docs/collectives.md: run python scripts/collectives_tables.py and paste its output"


def test_library_version_is_one_printable_line():
    # Open MPI's MPI_Get_library_version() ends in a NUL byte: it reached tune's report.md and tuned.env
    from quadsel.libraries import open_library
    ompi = open_library("Open MPI v5.0.11, package: Open MPI user@localhost Distribution, ident: 5.0.11\x00")
    assert ompi.version == "Open MPI v5.0.11, package: Open MPI user@localhost Distribution, ident: 5.0.11"
    mpich = open_library("MPICH Version:      5.0.2\nMPICH Release date: x\x1b[31m\n")
    assert mpich.version == "MPICH Version:      5.0.2"
    assert open_library("\x00\n").version == ""
