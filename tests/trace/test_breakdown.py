"""The per-rank breakdown on synthetic timestamps with known answers, and its invariants (no MPI)."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from quadsel.cli import main
from quadsel.trace import breakdown as bd
from quadsel.trace.breakdown_report import analyses, as_json, render
from quadsel.libraries import trees
from quadsel.trace.trace_file import FORMAT, VERSION, load_trace


def trace_doc(runs, n=4, collective="bcast", library="openmpi"):
    return {"format": FORMAT, "version": VERSION, "collective": collective, "library": library, "comm_size": n,
            "job_size": n, "root": 0, "datatype": "byte", "map_by": None, "hosts": ["h"] * n, "cpus": 2,
            "oversubscribed": n > 2, "load_average": [0, 0, 0],
            "runs": [{"algorithm": alg, "name": alg, "segsize": 0, "msg_size": 1024, "calls": len(e),
                      "entry_us": [list(r) for r in e], "exit_us": [list(r) for r in x],
                      "overhead": {"traced_us_per_iteration": [11.0, 12.0], "untraced_us_per_iteration": [10.0, 10.0]}}
                     for alg, e, x in runs]}


# binomial bcast of 4 ranks: 0 -> 1, 2; 1 -> 3. Rank 1 arrives last (20); 3 arrives at 5 and waits for it.
ENTRY = [0.0, 20.0, 2.0, 5.0]
EXIT = [22.0, 32.0, 12.0, 40.0]


def binomial_config(calls=5):
    doc = trace_doc([("6", [ENTRY] * calls, [EXIT] * calls)])
    return bd.configs([("t.json", doc)])[0]


def test_known_answers_binomial_bcast():
    c = binomial_config()
    assert c.shape.parents == [-1, 0, 0, 1]
    b = bd.analyse(c)
    m = {r.rank: r.means for r in b.rows}
    assert [m[r]["inside"] for r in range(4)] == [22, 12, 10, 35]
    assert [m[r]["arrival_wait"] for r in range(4)] == [20, 0, 18, 15]
    assert [m[r]["departure_wait"] for r in range(4)] == [10, 20, 0, 28]
    # rank 3 waits for its parent 1 (a late sender, 15 µs), then the data needs 20 µs more; the root waits
    # 20 µs for its child 1 (a late receiver)
    assert [m[r]["sender_wait"] for r in range(4)] == [0, 0, 0, 15]
    assert [m[r]["receiver_wait"] for r in range(4)] == [20, 0, 0, 0]
    assert [m[r]["dependency_wait"] for r in range(4)] == [20, 0, 0, 15]
    assert m[3]["transfer"] == 20 and m[0]["transfer"] == 2
    assert [r.gate for r in b.rows] == [1, 1, 2, 1]
    assert b.span_us == 40
    assert b.critical["arrival_to_gate_us"] == 20 and b.critical["transfer_along_path_us"] == 20
    assert b.critical["paths"] == [{"ranks": [1, 3], "share": 1.0}]
    assert [r.on_critical_path for r in b.rows] == [0, 1, 0, 1]
    assert [r.last_departure for r in b.rows] == [0, 0, 0, 1]
    assert [r.depth for r in b.rows] == [0, 1, 1, 2] and [r.subtree for r in b.rows] == [0, 1, 2, 1]
    assert b.overhead["per_call_us"] == 1.5 and b.overhead["blocks"] == 2


def test_reduce_depends_on_the_subtree():
    # binomial reduce of 4 (in-order bmtree: 0 <- 1, 2; 2 <- 3): the root waits for the late leaf 3
    entry, exit_ = [0.0, 1.0, 2.0, 30.0], [45.0, 5.0, 40.0, 35.0]
    doc = trace_doc([("5", [entry] * 3, [exit_] * 3)], collective="reduce")
    b = bd.analyse(bd.configs([("t", doc)])[0])
    assert b.config.shape.flow == "up"
    assert [r.gate for r in b.rows] == [3, 1, 3, 3]
    assert [r.means["dependency_wait"] for r in b.rows] == [30, 0, 28, 0]
    assert b.critical["paths"][0]["ranks"] == [3, 2, 0]


def test_no_tree_waits_for_everyone():
    doc = trace_doc([("3", [ENTRY] * 3, [EXIT] * 3)], collective="allreduce")
    b = bd.analyse(bd.configs([("t", doc)])[0])
    assert b.config.shape is None
    assert [r.means["dependency_wait"] for r in b.rows] == [20, 0, 10, 15]   # clipped to the time inside
    assert all(r.gate == 1 for r in b.rows)


def test_outlier_calls_are_fenced():
    entry = [ENTRY] * 9 + [[0.0, 20.0, 2.0, 5.0]]
    exit_ = [EXIT] * 9 + [[22.0, 32.0, 12.0, 5000.0]]
    b = bd.analyse(bd.configs([("t", trace_doc([("6", entry, exit_)]))])[0])
    assert b.dropped_calls == 1 and b.span_us == 40


def test_clusters_and_similar_subtrees():
    assert bd.cluster_ranks(np.array([[0, 10, 0], [0, 10.5, 0], [0, 30, 0]]), 2) == [[0, 1], [2]]
    parents = trees.bmtree(8)                           # 0 -> 1 2 4; 1 -> 3 5; 2 -> 6; 3 -> 7
    same = np.zeros((8, 3))
    assert bd.similar_subtrees(parents, same, 1.0) == [[2, 3], [4, 5, 6, 7]]
    different = same.copy()
    different[7] = [50, 0, 0]                           # leaf 7 behaves apart: subtree 3 = {3, 7} too
    assert bd.similar_subtrees(parents, different, 1.0) == [[4, 5, 6]]


def test_identical_leaves_cluster_together():
    # flat bcast: every leaf alike, the root apart
    entry, exit_ = [0.0, 0.0, 0.0, 0.0], [30.0, 10.0, 10.0, 10.0]
    b = bd.analyse(bd.configs([("t", trace_doc([("1", [entry] * 4, [exit_] * 4)]))])[0])
    assert b.clusters == [[0], [1, 2, 3]] and b.similar_subtrees == [[1, 2, 3]]


calls_strategy = st.integers(1, 6).flatmap(lambda calls: st.integers(2, 7).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.floats(0, 1e4), min_size=n, max_size=n), min_size=calls, max_size=calls),
    st.lists(st.lists(st.floats(0, 1e4), min_size=n, max_size=n), min_size=calls, max_size=calls),
    st.sampled_from(["1", "2", "3", "5", "6", "7", "8"]), st.sampled_from([0.0, 12345.5]))))


@settings(max_examples=60, deadline=None)
@given(calls_strategy)
def test_invariants(case):
    entries, durations, alg, shift = case
    entry = np.array(entries) + shift
    exit_ = entry + np.array(durations)
    n = entry.shape[1]
    shape = trees.algorithm_shape("openmpi", "bcast", alg, n)
    calls = bd.per_call(entry, exit_, bd.dependencies(shape, n))
    assert (calls["arrival_wait"] >= 0).all() and np.allclose(calls["arrival_wait"].min(axis=1), 0)
    assert (calls["departure_wait"] >= 0).all() and np.allclose(calls["departure_wait"].min(axis=1), 0)
    assert (calls["dependency_wait"] >= 0).all() and (calls["dependency_wait"] <= calls["inside"] + 1e-9).all()
    assert np.allclose(calls["dependency_wait"] + calls["transfer"], calls["inside"])
    # the metrics do not depend on where the clock starts
    moved = bd.per_call(entry - 777.0, exit_ - 777.0, bd.dependencies(shape, n))
    for key in bd.METRICS:
        assert np.allclose(moved[key], calls[key], atol=1e-6)
    # the critical path splits every call's span exactly
    doc = trace_doc([(alg, (entry - shift).tolist(), (exit_ - shift).tolist())], n=n)
    b = bd.analyse(bd.configs([("t", doc)])[0], fence=0)
    assert b.critical["arrival_to_gate_us"] + b.critical["transfer_along_path_us"] == pytest.approx(b.span_us)
    assert sum(r.last_departure for r in b.rows) == pytest.approx(1.0)


def test_report_side_by_side_and_json(tmp_path):
    doc = trace_doc([("6", [ENTRY] * 4, [EXIT] * 4), ("3", [ENTRY] * 4, [[22.0, 32.0, 50.0, 60.0]] * 4)])
    results = analyses([("t", doc)])
    text = render(results)
    assert "Side by side:" in text and "A = 6 @ 1024 B" in text and "span: B / A 1.50x" in text
    assert "waits most: rank 0 (20.0 µs of its 22.0 µs inside: 0.0 for its senders, 20.0 for its receivers; " \
        "most often for rank 1 (its child))" in text
    md = render(results, "markdown")
    assert "| rank | depth |" in md
    data = as_json(results)
    assert data["comparisons"] == [["6 @ 1024 B", "3 @ 1024 B"]]
    assert data["configurations"][0]["ranks_table"][3]["gate"] == 1
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    out = CliRunner().invoke(main, ["breakdown", str(path), "--json", "--select", "1"])
    assert out.exit_code == 0, out.output
    assert [c["algorithm"] for c in json.loads(out.output)["configurations"]] == ["3"]
    pytest.importorskip("matplotlib")
    png = tmp_path / "map.png"
    out = CliRunner().invoke(main, ["breakdown", str(path), "--timemap", str(png), "-o", str(tmp_path / "t.md")])
    assert out.exit_code == 0, out.output
    assert png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(format="x"), 'format: \'x\' is not "quadsel-trace"'),
    # the fields breakdown reads beyond the timestamps (issue 32: each was a traceback)
    (lambda d: d.update(root="0"), "root: '0' is not an integer"),
    (lambda d: d.update(root=-1), "root: -1 is below the minimum 0"),
    (lambda d: d.update(hosts="node1"), "hosts: 'node1' is not an array"),
    (lambda d: d.update(cpu_affinity=[[0], ["a"]]), "cpu_affinity[1][0]: 'a' is not an integer"),
    (lambda d: d.update(load_average="high"), "load_average: 'high' is not an array"),
    (lambda d: d.update(probe_cost_us="x"), "probe_cost_us: 'x' is not a number or null"),
    (lambda d: d["runs"][0].update(overhead={"traced_us_per_iteration": ["x"], "untraced_us_per_iteration": [1]}),
     "runs[0].overhead.traced_us_per_iteration[0]: not a finite number"),
    (lambda d: d["runs"][0].update(overhead={"traced_us_per_iteration": [1, 2], "untraced_us_per_iteration": [1]}),
     "traced and untraced blocks differ"),
    (lambda d: d["runs"][0].update(overhead=[]), "runs[0].overhead: an array is not an object"),
    (lambda d: d["runs"][0].update(name=["x"]), "runs[0].name: an array is not a string"),
    (lambda d: d["runs"][0].update(segsize=True), "runs[0].segsize: true is not an integer"),
    (lambda d: d["runs"][0].update(msg_size=2 ** 63), "runs[0].msg_size: 9223372036854775808 is beyond"),
    (lambda d: d["runs"][0].pop("algorithm"), 'runs[0]: "algorithm" is missing'),
    (lambda d: d.update(comm_size=1), "comm_size: 1 is below the minimum 2"),
    (lambda d: d.update(runs=[]), "runs: 0 items, at least 1 needed"),
    (lambda d: d["runs"][0].update(calls=3), "has 4 calls"),
    (lambda d: d["runs"][0]["exit_us"][0].__setitem__(0, -1.0), "leaves a call before it enters"),
    (lambda d: d["runs"][0]["entry_us"][1].pop(), "not 4 finite numbers"),
])
def test_bad_trace_files(tmp_path, mutate, message):
    doc = trace_doc([("6", [ENTRY] * 4, [EXIT] * 4)])
    mutate(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    out = CliRunner().invoke(main, ["breakdown", str(path)])
    assert out.exit_code == 2 and message in out.output and str(path) in out.output
    assert "Traceback" not in out.output
    with pytest.raises(Exception):
        load_trace(str(path))
    bad = tmp_path / "nojson.json"
    bad.write_text("{")
    out = CliRunner().invoke(main, ["breakdown", str(bad)])
    assert out.exit_code == 2 and "not valid JSON" in out.output


# issue 31: a noisy trace printed "tracing overhead: -0.08 µs per call (64.4 traced vs 63.6 µs untraced)". These
# block walls are a real 4-rank run on 2 cores (oversubscribed): the paired median is -0.31 µs, the kinds'
# medians 175.9 and 36.1 µs.
NOISY = {"traced_us_per_iteration": [36.924, 432.989, 33.34, 293.596, 34.455, 1196.042, 33.824, 1099.693, 1188.517,
                                     58.167],
         "untraced_us_per_iteration": [38.809, 653.981, 32.07, 32.308, 356.22, 1588.002, 38.423, 32.013, 33.811,
                                       31.956]}


def _overhead_line(overhead, probe=0.14):
    from quadsel.trace.breakdown_report import overhead_line
    doc = trace_doc([("6", [ENTRY] * 5, [EXIT] * 5)])
    doc["runs"][0]["overhead"] = overhead
    b = bd.analyse(bd.configs([("t.json", doc)])[0])
    return b, overhead_line(b.overhead, {"probe_cost_us": probe})


def test_noisy_overhead_is_not_printed_as_a_negative_cost():
    b, line = _overhead_line(NOISY)
    assert b.overhead["per_call_us"] < 0 and not b.overhead["resolved"]
    lo, hi = b.overhead["ci_us"]
    assert lo < 0 < hi
    assert "not measurable in this run" in line and "µs per call (" not in line
    assert b.overhead["share_of_span"] is None


def test_clean_overhead_is_a_cost_with_its_interval():
    clean = {"traced_us_per_iteration": [6.9 + 0.01 * i for i in range(10)],
             "untraced_us_per_iteration": [6.65 + 0.01 * i for i in range(10)]}
    b, line = _overhead_line(clean)
    assert b.overhead["resolved"] and b.overhead["per_call_us"] == pytest.approx(0.25)
    assert line.startswith("tracing overhead: +0.25 µs per call, 95 % interval [+0.25, +0.25]")


def test_too_few_blocks_do_not_bound_the_overhead():
    b, line = _overhead_line({"traced_us_per_iteration": [11.0, 12.0], "untraced_us_per_iteration": [10.0, 10.0]})
    assert b.overhead["ci_us"] is None and not b.overhead["resolved"]
    assert "not measurable: only 2 block pairs" in line


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(1, 1e4), st.floats(1, 1e4)), min_size=1, max_size=40))
def test_overhead_is_printed_as_a_cost_only_when_its_interval_is_above_zero(pairs):
    traced, untraced = map(list, zip(*pairs))
    b, line = _overhead_line({"traced_us_per_iteration": traced, "untraced_us_per_iteration": untraced})
    o = b.overhead
    if o["ci_us"] is not None:
        assert o["ci_us"][0] <= o["per_call_us"] <= o["ci_us"][1]
    if "µs per call, 95 % interval" in line:
        assert o["resolved"] and o["per_call_us"] > 0 and o["ci_us"][0] > 0
        assert line.startswith(f"tracing overhead: +{o['per_call_us']:.2f}")
    else:
        assert not o["resolved"] and "not measurable" in line


def test_median_interval_coverage():
    # [x_(k), x_(n-k+1)] at 95 %: n = 6 -> the extremes (96.9 %); n = 10 -> 2nd and 9th (97.9 %); n < 6 -> none
    assert bd.median_interval(range(5)) is None
    assert bd.median_interval(range(6)) == (0, 5)
    assert bd.median_interval(range(10)) == (1, 8)
    assert bd.median_interval(range(20)) == (5, 14)


@pytest.mark.parametrize("library, collective, algorithm, name, title", [
    ("openmpi", "bcast", "6", "binomial", "binomial (bmtree)"),
    ("openmpi", "bcast", "5", "binary_tree", "binary_tree"),
    ("openmpi", "bcast", "2", "chain", "chain (4 chains)"),
    ("openmpi", "bcast", "1", "basic_linear", "basic_linear (flat)"),
    ("openmpi", "reduce", "5", "binomial", "binomial (in-order bmtree)"),
    ("mpich", "bcast", "binomial", "binomial", "binomial"),
    ("openmpi", "bcast", "default", "library default", "library default (no tree)"),
])
def test_titles_say_the_algorithm_once(library, collective, algorithm, name, title, tmp_path):
    doc = trace_doc([(algorithm, [ENTRY] * 3, [EXIT] * 3)], collective=collective, library=library)
    doc["runs"][0]["name"] = name
    c = bd.configs([("t.json", doc)])[0]
    assert bd.algorithm_title(c) == title
    b = bd.analyse(c)
    heading = render([b]).splitlines()[0]
    assert f"{collective} {title} on {library}," in heading
    # the timemap's panel title: the same words, once
    pytest.importorskip("matplotlib")
    from quadsel.trace.timemap import write_timemap
    import matplotlib.pyplot as plt
    captured = []
    original = plt.Axes.set_title
    try:
        plt.Axes.set_title = lambda self, text, **kw: captured.append(text) or original(self, text, **kw)
        write_timemap([b], str(tmp_path / "t.png"))
    finally:
        plt.Axes.set_title = original
    assert captured[0].splitlines()[0] == f"{collective} {title}"


def test_what_the_default_ran_is_named_as_every_table_names_an_id(tmp_path):
    """"3 pipeline" (libraries.named_label's form), not "pipeline (3)": one format across quadsel's texts."""
    from quadsel.libraries import named_label
    from quadsel.trace.breakdown_report import library_ran_text
    doc = trace_doc([("default", [ENTRY] * 3, [EXIT] * 3)], collective="bcast", library="openmpi")
    doc["runs"][0]["name"] = "library default"
    ran = {"status": "identified", "algorithms": [{"label": "3", "name": "pipeline"}], "evidence": "the functions"}
    doc["runs"][0]["library_ran"] = ran
    c = bd.configs([("t.json", doc)])[0]
    assert bd.algorithm_title(c) == "library default, ran " + named_label("openmpi", "bcast", "3") == \
        "library default, ran 3 pipeline"
    assert library_ran_text(ran).startswith("3 pipeline (told apart by")
