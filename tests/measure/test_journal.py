"""Issue 32: a stale or foreign rounds journal (`OUTPUT.rounds.jsonl`) was pooled into new rows, giving negative or
NaN times that `build` then refused. The journal is now tied to its output by its header line and read through
quadsel/schemas.py (docs/schemas/rounds-journal.schema.json): a journal of another run is ignored whole (and
replaced), a damaged entry is ignored, each with a note naming the file (and line)."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from quadsel.measure.journal import Journal, header, journal_path

KEY = ("bcast", "6", 0, 2, 1024)
HEAD = header("0123456789abcdef", "bcast", "openmpi", "byte", "span", "barrier")


def write_lines(path, *docs):
    path.write_text("".join((d if isinstance(d, str) else json.dumps(d)) + "\n" for d in docs))


def entry(key=KEY, round_=1, samples=(1.5, 1.25), wall=0.01):
    return {"key": list(key), "round": round_, "samples_us": list(samples), "wall_s": wall}


def test_this_runs_journal_is_resumed(tmp_path):
    path = journal_path(tmp_path / "bcast.csv")
    journal = Journal(path, head=HEAD)
    journal.record(KEY, 1, [1.5, 1.25], 0.01)
    journal.close()
    assert json.loads(open(path).readline()) == HEAD        # the header line first
    again = Journal(path, head=HEAD)
    assert again.notes == [] and again.prior(KEY, 2) == ([1.5, 1.25], 0.01)
    again.record(KEY, 2, [1.0], 0.02)
    again.close()
    lines = open(path).read().splitlines()
    assert len(lines) == 3 and json.loads(lines[0]) == HEAD   # appended, not restarted


@pytest.mark.parametrize("first, why", [
    (None, "has no header line"),                                          # an older quadsel's journal
    (dict(HEAD, output_id="fedcba9876543210"), "belongs to another run: its output"),   # another output's
    (dict(HEAD, library="mpich"), "its library is mpich"),
    (dict(HEAD, timing="local"), "its timing is local"),
    (dict(HEAD, datatype="float"), "its datatype is float"),
    (dict(HEAD, version=2), "has no valid first line"),
    ("not json at all", "has no valid first line"),
])
def test_a_journal_of_another_run_is_ignored_with_a_note_and_replaced(tmp_path, first, why):
    path = tmp_path / "bcast.csv.rounds.jsonl"
    docs = ([] if first is None else [first]) + [entry(samples=[-1e6]), entry(samples=[5.0, 6.0])]
    write_lines(path, *docs)
    journal = Journal(str(path), head=HEAD)
    assert journal.rounds == {} and journal.prior(KEY, 2) is None
    assert len(journal.notes) == 1 and why in journal.notes[0] and "bcast.csv.rounds.jsonl" in journal.notes[0]
    journal.record(KEY, 1, [2.0], 0.1)
    journal.close()
    lines = [json.loads(t) for t in path.read_text().splitlines()]
    assert lines == [HEAD, entry(samples=[2.0], wall=0.1)]     # replaced: the foreign entries are gone


@pytest.mark.parametrize("bad, words", [
    (entry(samples=[1.0, -3.0]), "samples_us[1]: -3.0 is below the minimum 0"),
    ('{"key": ["bcast", "6", 0, 2, 1024], "round": 1, "samples_us": [NaN], "wall_s": 0.1}', "NaN is not a JSON value"),
    ('{"key": ["bcast", "6", 0, 2, 1024], "round": 1, "samples_us": [1e400], "wall_s": 0.1}', "beyond a double"),
    (entry(wall=-1.0), "wall_s: -1.0 is below the minimum 0"),
    (entry(round_=0), "round: 0 is below the minimum 1"),
    (entry(round_="1"), "round: '1' is not an integer"),
    (entry(key=("bcast", "6", 0, 2)), "key: 4 items, at least 5 needed"),
    (entry(key=("bcast", "6", 0, 0, 1024)), "key[3]: 0 is below the minimum 1"),
    (entry(key=("reduce", "6", 0, 2, 1024)), "not this journal's collective bcast"),
    (entry(key=("bcast", "6", 0, 2, 1024, 1)), "key: 6 items, 5 or 7 (with nodes, ppn) needed"),
    (entry(key=("bcast", "6", 0, 4, 1024, 2, 0)), "key[6]: 0 is below the minimum 1"),
    (dict(HEAD), "a second header line"),
    ({"key": list(KEY), "round": 1, "samples_us": [1.0], "wall_s": 0.1, "extra": 1}, "unknown key 'extra'"),
])
def test_a_damaged_entry_is_ignored_with_a_note_naming_its_line(tmp_path, bad, words):
    path = tmp_path / "bcast.csv.rounds.jsonl"
    other = ("bcast", "1", 0, 2, 1024)
    write_lines(path, HEAD, entry(key=other), bad)
    journal = Journal(str(path), head=HEAD)
    assert journal.prior(other, 2) == ([1.5, 1.25], 0.01)     # the good entry is kept
    assert not journal.has(KEY, 1)                              # the damaged one is measured again
    assert len(journal.notes) == 1, journal.notes
    assert "bcast.csv.rounds.jsonl:3: " in journal.notes[0] and words in journal.notes[0], journal.notes[0]


def test_a_multi_host_runs_keys_end_in_nodes_and_ppn(tmp_path):
    path = tmp_path / "bcast.csv.rounds.jsonl"
    key = ("bcast", "6", 0, 4, 1024, 2, 2)
    write_lines(path, dict(HEAD, timing="offset", sync="start"), entry(key=key))
    journal = Journal(str(path), head=dict(HEAD, timing="offset", sync="start"))
    assert journal.notes == [] and journal.prior(key, 2) == ([1.5, 1.25], 0.01)


def test_a_torn_last_entry_is_cut_off_quietly(tmp_path):
    path = tmp_path / "bcast.csv.rounds.jsonl"
    path.write_text(json.dumps(HEAD) + "\n" + json.dumps(entry()) + '\n{"key": ["bcast", "1", 0, 2, 1024], "ro')
    journal = Journal(str(path), head=HEAD)
    assert journal.notes == [] and journal.has(KEY, 1)
    journal.record(("bcast", "1", 0, 2, 1024), 1, [3.0], 0.1)
    journal.close()
    assert [json.loads(t) for t in path.read_text().splitlines()][-1]["samples_us"] == [3.0]


JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True)
                    | st.text(max_size=8), lambda inner: st.lists(inner, max_size=5)
                    | st.dictionaries(st.sampled_from(["key", "round", "samples_us", "wall_s", "format", "x"]), inner,
                                      max_size=5), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(JSON | st.builds(entry, samples=st.lists(st.floats(allow_nan=True), max_size=4),
                                 wall=st.floats(allow_nan=True)), max_size=6))
def test_whatever_the_journal_holds_only_finite_non_negative_samples_are_pooled(tmp_path_factory, docs):
    path = tmp_path_factory.mktemp("j") / "bcast.csv.rounds.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in [HEAD] + docs))
    journal = Journal(str(path), head=HEAD)
    for key, rounds in journal.rounds.items():
        assert key[0] == "bcast"
        for samples, wall in rounds.values():
            assert all(math.isfinite(x) and 0 <= x <= 1e12 for x in samples) and math.isfinite(wall) and wall >= 0


# -- for real: the case -------------------------------------------------------------------------------------
def test_a_stale_journal_never_reaches_the_rows_of_a_real_run(tmp_path):
    pytest.importorskip("mpi4py")
    sys.path.insert(0, os.path.dirname(__file__))
    from test_measure_mpi import LIBRARY, _env
    if LIBRARY != "openmpi":
        pytest.skip("Open MPI only")
    out = tmp_path / "bcast.csv"
    # left over from a run killed long ago (an older quadsel's journal has no header), with absurd samples
    stale = [entry(key=("bcast", alg, 0, 2, size), samples=[-1e6], wall=0.01)
             for alg in ("default", "1", "6") for size in (8, 1024)]
    write_lines(Path(journal_path(out)), *stale)
    args = ["--np", "2", "-c", "bcast", "--algorithms", "default,1,6", "--segments", "0", "--msg-sizes", "8,1K",
            "--max-reps", "10", "--rounds", "2", "--quiet", "-o", str(out)]
    done = subprocess.run([sys.executable, "-m", "quadsel", "measure", *args], capture_output=True, text=True,
                          timeout=240, env=_env())
    assert done.returncode == 0, done.stderr
    assert "bcast.csv.rounds.jsonl has no header line" in done.stderr and "ignored" in done.stderr, done.stderr
    rows = [line.split(",") for line in out.read_text().splitlines()[1:] if not line.startswith("#")]
    assert len(rows) == 6 and all(0 < float(r[5]) < 1e4 for r in rows), rows
    built = subprocess.run([sys.executable, "-m", "quadsel", "build", str(out), "-o", str(tmp_path / "t.qt.json")],
                           capture_output=True, text=True, timeout=240, env=_env())
    assert built.returncode == 0, built.stderr
