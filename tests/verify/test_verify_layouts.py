"""verify, report and codegen --verified of a layout forest (verify/layouts.py, evaluate/report_layouts.py,
verify/prune.prune_forest) and verify's launches on the user's hosts (verify/hosts.py), without an MPI job: the
plan per layout, the verdict's proof per layout, pruning per member, the penalty per layout, the launch command.
The real runs on two hosts are tests/cluster/test_cluster_e2e.py."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from quadsel.decision.decision_map import DEFAULT_METHOD
from quadsel.errors import QuadselError
from quadsel.verify import command, hosts, verdict
from quadsel.verify.follow import PointCheck
from quadsel.verify.layouts import forest_rules, layout_summary
from quadsel.verify.selection import TreeSelection
from quadsel.verify.prune import prune_all

from layout_helpers import forest_of, han_forest, layout_rows


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_the_plan_of_a_forest_times_its_choice_per_layout(seed):
    forest = forest_of(layout_rows(seed, ppns=(1, 2), nodes=(1, 2), n_msg=3))
    sel = TreeSelection(forest, "openmpi", "f.json")
    layouts = sel.layouts
    assert set(layouts) <= {(n, p) for n in (1, 2) for p in (1, 2)} and (2, 2) in layouts
    points = command.plan(sel, "openmpi", 4, msg_sizes=[8, 4096], layouts=layouts)
    assert {tuple(p["layout"]) for p in points} == {lp for lp in layouts if lp[0] * lp[1] <= 4}
    for p in points:
        nodes, ppn = p["layout"]
        assert p["comm"] == nodes * ppn
        chosen = forest.query(p["comm"], p["msg"], ppn=ppn)
        assert p["quadsel"][0] == (chosen.algorithm if chosen != DEFAULT_METHOD else "default")
    assert all(p["layout"][0] * p["layout"][1] <= 2 for p in command.plan(sel, "openmpi", 2, msg_sizes=[8],
                                                                          layouts=layouts))
    # a forest without measurements: the best arm is every method of the tree at every point; tune asks for none
    assert any(len(p["candidates"]) > 1 for p in points)
    lean = command.plan(sel, "openmpi", 4, msg_sizes=[8, 4096], layouts=layouts, best_arm=False)
    assert [p["candidates"] for p in lean] == [None] * len(points)
    assert [(p["quadsel"], p["default"]) for p in lean] == [(p["quadsel"], p["default"]) for p in points]


def _row(nodes, ppn, msg, verdict_="faster", speedup=1.5):
    return {"collective": "bcast", "comm_size": nodes * ppn, "msg_size": msg, "nodes": nodes, "ppn": ppn,
            "verdict": verdict_, "speedup": speedup}


def _check(nodes, ppn, msg, status):
    return PointCheck("bcast", nodes * ppn, msg, "1", status, [], None, [nodes, ppn])


GOOD = {"changed": 6, "points": 6, "geomean_speedup": 1.5, "geomean_low": 1.3, "geomean_high": 1.7}
LAYOUTS = [(2, 1), (1, 2), (2, 2)]


def test_deploy_needs_the_file_followed_in_every_layout_it_changes():
    rows = [_row(n, p, m) for n, p in LAYOUTS for m in (8, 1024)]
    followed = {"f": [_check(n, p, m, "follows") for n, p in LAYOUTS for m in (8, 1024)]}
    evidence = verdict.proof(rows, followed)
    assert verdict.decide(rows, GOOD, evidence)[0] == "deploy"
    # the same counts, but layout 1x2 shows nothing: 2x1 (same comm size) must not stand in for it
    partly = {"f": [_check(n, p, m, "follows" if (n, p) != (1, 2) else "indistinguishable")
                    for n, p in LAYOUTS for m in (8, 1024)]}
    evidence = verdict.proof(rows, partly)
    assert evidence["collectives_without_proof"] == ["bcast layout 1x2"]
    decision, reason = verdict.decide(rows, GOOD, evidence)
    assert decision == "unproven" and "bcast layout 1x2" in reason
    # a layout where the library runs something else: never deployed, and the layout is named
    wrong = {"f": followed["f"][:-1] + [_check(2, 2, 1024, "differs")]}
    decision, reason = verdict.decide(rows, GOOD, verdict.proof(rows, wrong))
    assert decision == "do not deploy" and "layout 2x2 comm 4 msg 1024" in reason
    summary = {x["layout"]: x for x in layout_summary(rows, partly)}
    assert summary["1x2"]["followed"] == {"indistinguishable": 2} and summary["2x1"]["followed"] == {"follows": 2}
    assert summary["2x2"]["geomean_speedup"] == pytest.approx(1.5)


def test_one_file_per_ppn_where_the_format_has_no_ppn_key():
    forest = forest_of(layout_rows(3, ppns=(1, 2), nodes=(1, 2), n_msg=3))
    sel = TreeSelection(forest, "openmpi", "f.json")
    points = {"bcast": [(2, 8, 2, 1), (2, 8, 1, 2), (4, 8, 2, 2)]}
    files = forest_rules("openmpi", [sel], points)
    assert [sorted(f[3]["bcast"]) for f in files] == [[(2, 8, 2, 1)], [(2, 8, 1, 2), (4, 8, 2, 2)]]
    for source, fns, _, mine in files:
        ppn = mine["bcast"][0][3]
        assert [f.size_tree for f in fns] == [forest.layers[int(forest.layer_index([ppn])[0])].tree] and f"ppn {ppn}" in source
    one = forest_rules("mpich", [sel], points)   # MPICH's JSON has comm_avg_ppn: the whole forest in one file
    assert len(one) == 1 and one[0][1] == [forest] and one[0][3] == points


def _result(tmp_path, forest, slower, edit=None):
    points = []
    for n, p in LAYOUTS:
        for m in sorted({int(x) for x in forest.layers[0].tree.msg_sizes.tolist()}):
            chosen = forest.query(n * p, m, ppn=p)
            points.append({"collective": "bcast", "comm_size": n * p, "msg_size": m, "nodes": n, "ppn": p,
                           "quadsel": chosen.label, "verdict": "slower" if (n, p, m) in slower else "faster"})
    if edit:
        edit(points)
    path = tmp_path / "verify.json"
    path.write_text(json.dumps({"library": "openmpi", "points": points, "statistics": {}}))
    return path


def test_prune_a_forest_per_layout(tmp_path):
    forest = forest_of(layout_rows(11, ppns=(1, 2), nodes=(1, 2), n_msg=3))
    assert len(forest.layers) == 2
    msg = int(forest.layers[0].tree.msg_sizes[1])
    before = [m.tree for m in forest.layers]
    (pruned,) = prune_all([forest], str(_result(tmp_path, forest, {(2, 1, msg)})))
    # the 2x1 point (comm 2, ppn 1) goes back to the default in the member for ppn 1 only
    assert pruned.query(2, msg, ppn=1) == DEFAULT_METHOD
    assert pruned.layers[1].tree.query(2, msg) == before[1].query(2, msg)
    for c in (2, 4):
        for m in before[1].msg_sizes.tolist():
            assert pruned.query(c, int(m), ppn=2) == forest.query(c, int(m), ppn=2)
    (same,) = prune_all([forest], str(_result(tmp_path, forest, set())))
    assert same is forest and pruned is not forest   # nothing handed back: the same function (tune verifies again
    # only what pruning changed, tune/run.py)
    flat = str(_result(tmp_path, forest, set(), edit=lambda ps: [p.pop(k) for p in ps for k in ("nodes", "ppn")]))
    with pytest.raises(QuadselError, match="without layouts"):
        prune_all([forest], flat)
    bad = str(_result(tmp_path, forest, set(), edit=lambda ps: ps[0].update(nodes=3)))
    with pytest.raises(QuadselError, match="nodes x ppn = comm_size"):
        prune_all([forest], bad)


def test_report_per_layout(tmp_path):
    from quadsel.evaluate.report_layouts import layout_report, render
    from quadsel.ingest import Table
    rows = layout_rows(5, ppns=(1, 2), nodes=(1, 2), n_msg=4, default=True)
    forest = forest_of(rows)
    doc = layout_report(Table(rows, ()), [("f", forest)])
    assert [(e["nodes"], e["ppn"]) for e in doc["layouts"]] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    for e in doc["layouts"]:
        assert set(e["penalty"]) == {"f", "default"} and e["penalty"]["f"]["mean"] <= e["penalty"]["f"]["max"]
    # one number per thing: the overall mean is every point's mean, i.e. the per-layout means weighted by points
    total = sum(e["points"] for e in doc["layouts"])
    assert doc["overall"]["f"]["mean"] == pytest.approx(
        sum(e["penalty"]["f"]["mean"] * e["points"] for e in doc["layouts"]) / total)
    assert doc["overall"]["f"]["max"] == max(e["penalty"]["f"]["max"] for e in doc["layouts"])
    assert "| all layouts |" in render(doc, "md") and render(doc, "csv").count("\n") == 1 + 2 * len(doc["layouts"])


def test_launches_on_the_users_hosts():
    module = ("python", "quadsel.verify.speed")
    plain = hosts.command("mpiexec", "openmpi", 64, module, ["a"])
    assert plain[:2] == ["mpiexec", "--oversubscribe"] and "-x" not in plain
    with hosts.passing("--host a:2,b:2 --mca pml ob1"):
        cmd = hosts.command("mpiexec", "openmpi", 4, module, ["a"],
                            {"LD_PRELOAD": "/p.so", "OMPI_MCA_pml_monitoring_enable": "1"})
        assert cmd[1:7] == ["--host", "a:2,b:2", "--mca", "pml", "ob1,monitoring", "-x"]
        assert "--oversubscribe" not in cmd and cmd[cmd.index("LD_PRELOAD") - 1] == "-x"
        assert "OMPI_MCA_pml_monitoring_enable" not in cmd     # Open MPI forwards its own
        assert hosts.environment("openmpi", {})["OMPI_MCA_coll"] == "^han"
        assert "OMPI_MCA_coll" not in hosts.environment("openmpi", {}, han=True)   # coll/han's default timed
        hydra = hosts.command("mpiexec", "mpich", 4, module, ["a"], {"LD_PRELOAD": "/p.so"})
        assert "-x" not in hydra                                  # Hydra forwards the whole environment
    assert hosts.prefix() == []
    from quadsel.libraries.openmpi import with_monitoring
    assert with_monitoring(["--mca", "pml", "^cm"]) == ["--mca", "pml", "^cm"]
    assert with_monitoring(["--mca", "pml", "ob1,monitoring"]) == ["--mca", "pml", "ob1,monitoring"]


def test_mpiexec_args_are_for_self_launched_jobs_only(monkeypatch):
    from quadsel.verify.run import VerifyOptions, run_verify
    monkeypatch.setenv("PMI_RANK", "0")     # under the user's own launcher: its options are given to it
    with pytest.raises(QuadselError, match="--mpiexec-args goes with --np"):
        run_verify(VerifyOptions(["t.json"], 4, rounds=2, max_reps=6, max_time=0.2, mpiexec_args="--host a:2"), print)


def test_codegen_ppn_writes_the_member_of_that_ppn(tmp_path):
    from click.testing import CliRunner
    from quadsel.cli import main
    from quadsel.targets import emit
    forest = forest_of(layout_rows(7, ppns=(1, 4), nodes=(1, 2), n_msg=3))
    path = tmp_path / "f.json"
    path.write_text(forest.dumps())
    for ppn in (1, 2, 4, 9):
        out = tmp_path / f"r{ppn}.rules"
        done = CliRunner().invoke(main, ["codegen", str(path), "-t", "ompi-rules", "--ppn", str(ppn), "-o", str(out)])
        assert done.exit_code == 0, done.output
        member = forest.layers[int(forest.layer_index([ppn])[0])].tree
        assert out.read_text() == emit("ompi-rules", [member])
    done = CliRunner().invoke(main, ["codegen", str(path), "--flavor", "table", "-o", str(tmp_path / "x.c")])
    assert done.exit_code == 2 and "--ppn P" in done.output
    out = tmp_path / "t.c"     # the member of one ppn is a 2-D tree: every target takes it
    done = CliRunner().invoke(main, ["codegen", str(path), "--flavor", "table", "--ppn", "4", "-o", str(out)])
    assert done.exit_code == 0 and "int quadsel_bcast_decision(int comm_size, size_t msg_size" in out.read_text()


def test_coll_han_points_time_the_default_with_han_and_keep_it_where_the_selection_does(monkeypatch):
    """verify/han.py: on a communicator of 2+ nodes of a collective coll/han takes, the default arm is the library's
    (coll/han on), and so is the selection where it keeps the default (coll/han's file says `han` there): `mark` only
    marks. Another library, an Open MPI without coll/han by default, or a user who decided about coll/han: nothing
    marked. (That the timing job marks exactly the communicators spanning nodes, on the namespace cluster:
    tests/cluster/test_cluster_e2e.py.)"""
    from quadsel.verify import han
    monkeypatch.delenv("OMPI_MCA_coll", raising=False)
    monkeypatch.delenv("OMPI_MCA_coll_han_priority", raising=False)
    colls = han.collectives("openmpi", "Open MPI v5.0.11, package: Open MPI")
    assert "bcast" in colls and "alltoall" not in colls and han.collectives("mpich", "MPICH 4.2") == ()
    assert han.collectives("openmpi", "Open MPI v4.1.6, package") == ()              # coll/han off by default
    assert "alltoall" in han.collectives("openmpi", "Open MPI v6.0.0a1, package")
    points = [{"quadsel": ["default", 0], "default": ["default", 0]}, {"quadsel": ["6", 0], "default": ["default", 0]},
              {"quadsel": ["3", 8192, [["chain_fanout", 2]]], "default": ["default", 0]}]
    han.mark(points)
    assert all(p["han"] for p in points)
    assert [p["quadsel"] for p in points] == [["default", 0], ["6", 0], ["3", 8192, [["chain_fanout", 2]]]]
    assert han.note([{"collective": "bcast", "han": True}, {"collective": "bcast"}]).startswith(
        "coll/han: at 1 point(s) of bcast")
    assert han.note([{"collective": "bcast"}]) is None
    monkeypatch.setenv("OMPI_MCA_coll", "^han")     # the user's own decision: their default is what they run
    assert han.collectives("openmpi", "Open MPI v5.0.11") == ()


def test_coll_hans_file_keeps_it_where_the_tree_keeps_the_default_and_routes_the_rest_to_tuned(tmp_path):
    """The deployment across hosts (tune/hosts.ompi_files, verify/han.han_text): per ppn coll/tuned's file of the
    member and coll/han's, read back under Open MPI 5.0.x's rules (ompi_han.read/decide): `han` at the sizes where the
    member keeps the default, coll/tuned's scatter_allgather elsewhere, one node to coll/tuned's rule; only the global
    level is written (coll/han's own steps keep Open MPI's defaults). A collective coll/han does not take gets none."""
    from quadsel.libraries import get
    from quadsel.targets import ompi_han, ompi_rules
    from quadsel.tune import hosts as tune_hosts
    forest = han_forest()
    files = tune_hosts.ompi_files([forest], ("bcast", "reduce"))
    assert sorted(files) == ["han-ppn1.rules", "han-ppn2.rules", "tuned-ppn1.rules", "tuned-ppn2.rules"]
    for ppn in (1, 2):
        han = ompi_han.read(files[f"han-ppn{ppn}.rules"], "han.rules")
        assert han.ignored is None and not han.warnings
        assert [set(levels) for _, levels in han.collectives] == [{"global_communicator"}]
        _, tuned, ignored, _ = ompi_rules.read(files[f"tuned-ppn{ppn}.rules"], "tuned.rules")
        rules = tuned.get(7, [])
        for nodes, msg, want in ((2, 1024, ("han", None)), (2, 65536, ("tuned", 8)), (1, 1024, ("tuned", 6))):
            if nodes == 1 and ppn == 1:
                continue
            component, rule = ompi_han.decide(han, rules, "bcast", nodes, nodes * ppn, msg, msg)
            assert (component, rule.alg if component == "tuned" else rule) == want, (ppn, nodes, msg)
    assert tune_hosts.ompi_files([forest], ("reduce",)).keys() == {"tuned-ppn1.rules", "tuned-ppn2.rules"}
    env = tune_hosts.env_text(get("openmpi"), str(tmp_path), [], ["h"])
    assert "export" not in env     # nothing deployed: nothing set


def test_the_follow_status_where_the_file_keeps_coll_han():
    """follow._status: where the selection keeps the default on a communicator coll/han takes, the point follows when
    coll/han's algorithm functions ran as in the forced default (the rest of the fingerprint, coll/han's steps, may
    differ), and differs when coll/tuned ran instead; where coll/han handed the call to coll/tuned itself (one rank
    per node) the usual rule. probe.multinode_part picks coll/han's functions out of a probe fingerprint."""
    from quadsel.verify.follow import _status
    from quadsel.verify.probe import multinode_part, short_name
    assert short_name("mca_coll_han_bcast_intra") == "han_bcast_intra"
    assert short_name("ompi_coll_base_bcast_intra_binomial") == "bcast_intra_binomial"
    han = [None, [[0, [["han_bcast_intra", 1], ["bcast_intra_bintree", 2]]], [1, [["han_bcast_intra", 1]]]]]
    han_other_steps = [None, [[0, [["han_bcast_intra", 1], ["bcast_intra_binomial", 1]]], [1, [["han_bcast_intra", 1]]]]]
    tuned8 = [None, [[0, [["bcast_intra_scatter_allgather", 1]]], [1, [["bcast_intra_scatter_allgather", 1]]]]]
    assert multinode_part(han) == [[0, [["han_bcast_intra", 1]]], [1, [["han_bcast_intra", 1]]]]
    assert multinode_part(tuned8) == [] and multinode_part(None) == [] and multinode_part([None, None]) == []
    arms = {"default": han, "8": tuned8}
    assert _status("default", han_other_steps, arms, True) == ("follows", ["default"])
    assert _status("default", tuned8, arms, True) == ("differs", ["8"])
    assert _status("default", han_other_steps, arms, False)[0] == "differs"      # not a coll/han point: whole prints
    assert _status("8", tuned8, arms, False) == ("follows", ["8"])
    assert _status("8", han, arms, False) == ("differs", ["default"])
    flat = {"default": tuned8, "8": tuned8}      # coll/han handed the call to coll/tuned: nothing tells them apart
    assert _status("default", tuned8, flat, True) == ("indistinguishable", ["8", "default"])
    assert _status("default", None, arms, True) == ("unchecked", [])


def test_a_tuned_choice_on_a_coll_han_communicator_is_told_by_its_own_functions():
    """The 2 x 2 Slurm run's allreduce at 256 KiB: the file routes the call to coll/tuned's nonoverlapping, whose
    nested reduce and bcast reach coll/han in the file launch (the communicator's component) and coll/tuned in the
    forced one (its arms run where coll/han may not): "not followed", matching no arm. Its own functions
    (probe.own_part) tell what ran; a file launch that ran coll/han's own allreduce still differs."""
    from quadsel.verify.follow import _status
    from quadsel.verify.probe import own_part

    def fp(*names):
        return [None, [[rank, [[n, 1] for n in names]] for rank in range(2)]]
    got = fp("han_allreduce_intra", "allreduce_intra_nonoverlapping", "han_reduce_intra", "reduce_intra_binomial",
             "han_bcast_intra", "bcast_intra_binomial")
    arms = {"2": fp("allreduce_intra_nonoverlapping", "reduce_intra_basic_linear", "bcast_intra_bintree"),
            "default": fp("han_allreduce_intra", "allreduce_intra_recursivedoubling", "reduce_intra_basic_linear")}
    assert own_part(got, "allreduce") == own_part(arms["2"], "allreduce") == [
        [0, [["allreduce_intra_nonoverlapping", 1]]], [1, [["allreduce_intra_nonoverlapping", 1]]]]
    assert _status("2", got, arms, False) == ("differs", [])                  # the whole print: nothing matches
    assert _status("2", got, arms, False, own="allreduce") == ("follows", ["2"])
    assert _status("2", arms["default"], arms, False, own="allreduce") == ("differs", ["default"])
    assert own_part(fp("reduce_scatter_intra_ring"), "reduce") == [[0, []], [1, []]]    # not another collective's
    assert own_part(None, "reduce") is None
