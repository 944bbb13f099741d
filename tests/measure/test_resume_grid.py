"""Issue 32: resume refused another grid or method list, though docs/measure.md documents `--algorithms default -o
SAME.csv` after an adaptive run. Decided (docs/measure.md, "Output, crash safety and --resume"): a resumed run may
add methods or sizes; it says so in one note, the metadata records each run's grid and their union, and `complete`
covers every run's grid. What a time means (collective, library, datatype, timing, sync) still cannot change.
`measure --replay FILE --algorithms default` failed although the file records the default."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from quadsel.measure import resume
from quadsel.measure.output import ResultFile

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "ompi5-bcast.csv"


def quadsel(*args, timeout=240):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.run([sys.executable, "-m", "quadsel", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env)


def keys(path):
    return [tuple(line.split(",")[:5]) for line in path.read_text().splitlines()[1:] if not line.startswith("#")]


def meta_of(path):
    return json.loads(path.with_suffix(".meta.json").read_text())


def test_replay_of_the_default_alone(tmp_path):
    out = tmp_path / "d.csv"
    done = quadsel("measure", "--replay", EXAMPLE, "-c", "bcast", "--algorithms", "default", "--quiet", "-o", out)
    assert done.returncode == 0, done.stderr
    assert {k[1] for k in keys(out)} == {"default"} and len(keys(out)) == 7 * 21
    planned = quadsel("measure", "--replay", EXAMPLE, "-c", "bcast", "--algorithms", "default", "--adaptive",
                      "--quiet", "-o", tmp_path / "a.csv")
    assert planned.returncode == 2 and "holds only the library default" in planned.stderr, planned.stderr
    assert len(planned.stderr.strip().splitlines()) == 1


def test_the_default_measured_into_an_adaptive_file_afterwards(tmp_path):
    """docs/measure.md, Adaptive measurement: `--algorithms default -o SAME.csv` afterwards adds its rows."""
    out = tmp_path / "ad.csv"
    # an adaptive run measures the library default as one more candidate; one told to leave it out
    # (--algorithms without `default`) can have its rows added afterwards
    first = quadsel("measure", "--replay", EXAMPLE, "-c", "bcast", "--adaptive", "--quiet", "-o", out,
                    "--algorithms", ",".join(str(a) for a in range(1, 10)))
    assert first.returncode == 0, first.stderr
    assert not [k for k in keys(out) if k[1] == "default"]
    before = keys(out)
    second = quadsel("measure", "--replay", EXAMPLE, "-c", "bcast", "--algorithms", "default", "--quiet", "-o", out)
    assert second.returncode == 0, second.stderr
    assert "was measured with other methods" in second.stderr and "union" in second.stderr
    after = keys(out)
    assert after[:len(before)] == before and len(after) == len(set(after)) == len(before) + 7 * 21
    meta = meta_of(out)
    assert [r["grid"]["methods"] for r in meta["runs"]][1] == ["default"]
    assert len(meta["runs"][0]["grid"]["methods"]) == 27
    assert set(meta["grid"]["methods"]) == set(meta["runs"][0]["grid"]["methods"]) | {"default"}   # the union
    assert meta["complete"] is True
    built = quadsel("build", out, "-o", tmp_path / "t.qt.json")
    assert built.returncode == 0, built.stderr


def test_sizes_added_to_a_sweep_and_the_file_grid_is_the_union(tmp_path):
    out = tmp_path / "s.csv"
    args = ["measure", "--replay", EXAMPLE, "-c", "bcast", "--algorithms", "1,6", "--segments", "0", "--quiet",
            "--comm-sizes", "2,4", "-o", out]
    assert quadsel(*args, "--msg-sizes", "1,1024").returncode == 0
    again = quadsel(*args, "--msg-sizes", "1024,65536")
    assert again.returncode == 0 and "other message sizes (recorded 1,1024; this run 1024,65536)" in again.stderr
    assert sorted({(k[3], k[4]) for k in keys(out)}) == [(c, m) for c in ("2", "4") for m in ("1", "1024", "65536")]
    assert len(keys(out)) == len(set(keys(out))) == 2 * 2 * 3
    meta = meta_of(out)
    assert meta["grid"]["msg_sizes"] == [1, 1024, 65536] and meta["grid"]["points"] == 12
    assert [r["grid"]["msg_sizes"] for r in meta["runs"]] == [[1, 1024], [1024, 65536]] and meta["complete"] is True
    same = quadsel(*args, "--msg-sizes", "1,1024")       # a grid inside the file's: nothing to add
    assert same.returncode == 0 and len(keys(out)) == 12


class Results:
    def __init__(self, done=(), skipped=(), replaced=()):
        self.done, self.skipped, self.replaced = set(done), set(skipped), set(replaced)


def test_complete_needs_every_runs_grid():
    a = {"methods": ["1", "6/seg8192"], "comm_sizes": [2], "msg_sizes": [8, 16]}
    b = {"methods": ["default"], "comm_sizes": [2], "msg_sizes": [8]}
    rows_a = [("bcast", "1", 0, 2, 8), ("bcast", "1", 0, 2, 16), ("bcast", "6", 8192, 2, 8)]
    # run a was cut before its last point; run b (another grid) finished its own: the file is not complete
    results = Results(rows_a + [("bcast", "default", 0, 2, 8)])
    assert not resume.complete("bcast", b, True, [a], results)
    assert resume.complete("bcast", b, True, [a], Results(results.done, replaced={"bcast,6,8192,2,16"}))
    assert resume.complete("bcast", b, True, [a], Results(results.done, skipped={"bcast,*,*,2,16"}))
    assert not resume.complete("bcast", b, True, [a], Results(results.done, skipped={"bcast,*,*,4,16"}))
    assert not resume.complete("bcast", a, False, [a], Results(rows_a))     # the same grid: its own finish
    assert resume.points("bcast", [a, b], {"bcast,6,8192,2,16"}) == 4


def test_union_keeps_the_first_runs_order_and_adds():
    old = {"methods": ["1", "6"], "comm_sizes": [2, 4], "msg_sizes": [8], "segments": [0], "datatype": "byte",
           "algorithms": {"1": "basic_linear", "6": "binomial"}, "points": 4}
    new = {"methods": ["default", "1"], "comm_sizes": [3], "msg_sizes": [8, 1024], "segments": [0, 8192],
           "datatype": "byte", "algorithms": {"default": "library default", "1": "basic_linear"}, "points": 6}
    got = resume.union(old, new)
    assert got["methods"] == ["1", "6", "default"] and got["comm_sizes"] == [2, 3, 4]
    assert got["msg_sizes"] == [8, 1024] and got["segments"] == [0, 8192] and set(got["algorithms"]) == {"1", "6", "default"}


# -- for real ------------------------------------------------------------------------------------------------------
def test_a_real_sweep_gets_the_default_and_a_size_afterwards(tmp_path):
    pytest.importorskip("mpi4py")
    sys.path.insert(0, os.path.dirname(__file__))
    from test_measure_mpi import LIBRARY
    if LIBRARY != "openmpi":
        pytest.skip("Open MPI only")
    out = tmp_path / "b.csv"
    base = ["measure", "--np", "2", "-c", "bcast", "--segments", "0", "--max-reps", "10", "--rounds", "1", "--quiet",
            "-o", out]
    assert quadsel(*base, "--algorithms", "1,6", "--msg-sizes", "8,1K").returncode == 0
    added = quadsel(*base, "--algorithms", "default", "--msg-sizes", "8,1K")
    assert added.returncode == 0, added.stderr
    assert "other methods (recorded 1,6; this run default)" in added.stderr
    more = quadsel(*base, "--algorithms", "default,1,6", "--msg-sizes", "8,1K,4K")
    assert more.returncode == 0, more.stderr
    assert len(keys(out)) == len(set(keys(out))) == 3 * 3
    meta = meta_of(out)
    assert meta["grid"]["methods"] == ["1", "6", "default"] and meta["grid"]["msg_sizes"] == [8, 1024, 4096]
    assert [len(r["grid"]["methods"]) for r in meta["runs"]] == [2, 1, 3] and meta["complete"] is True
    # what a time means cannot change within a file
    local = quadsel(*base, "--algorithms", "default", "--msg-sizes", "8", "--timing", "local")
    assert local.returncode == 2 and "timed with --timing span" in local.stderr
