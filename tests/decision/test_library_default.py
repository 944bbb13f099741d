"""Regions handed back to the library (decision/library_default.py): where the measured default is not beaten,
and outside the measured range -- in the Python query, the C and every rules target alike."""

import numpy as np
import pytest

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_function import DecisionFunction
from quadsel.decision.decision_map import DEFAULT_METHOD, build_decision_map
from quadsel.decision.grid import Axis
from quadsel.evaluate.comparators import QuadtreeSelector, choice_on
from quadsel.evaluate.penalty import LIBRARY_DEFAULT, penalty_grid
from quadsel.targets import emit

from helpers import MPICH_BASE, table_from_cube
from library_readers import MpichSelection, OmpiClassicRules, OmpiJsonRules

COMMS = [2, 3, 4, 6, 8]
MSGS = [8, 64, 512, 4096, 32768]


def default_best_for_large_comms(noise=0.0, seed=0):
    """Open MPI bcast: binomial (6) best below 6 ranks; the library default best from 6 ranks up."""
    rng = np.random.default_rng(seed)
    shape = (len(COMMS), len(MSGS))
    big = np.asarray(COMMS)[:, None] >= 6
    six = np.where(big, 12.0, 5.0) * (1 + noise * rng.standard_normal(shape))
    one = np.full(shape, 20.0)
    default = np.where(big, 6.0, 10.0) * (1 + noise * rng.standard_normal(shape))
    cost = np.stack([one, six], axis=2)
    return table_from_cube(cost, COMMS, MSGS, [("1", 0), ("6", 0)], default=default)


@pytest.fixture(scope="module")
def tree():
    return build_size_tree(build_decision_map(default_best_for_large_comms()), split="measured",
                                   between="least-bad", leaf_rule="penalty", max_leaves="auto", tolerance="ci",
                                   keep_default=True, outside="default")


def test_the_region_where_the_default_is_best_is_the_default(tree):
    for comm in (2, 3, 4, 6, 7, 8):      # 5 lies between the regions: either is the least bad there
        for msg in (8, 100, 4096, 32768):
            want = DEFAULT_METHOD if comm >= 6 else tree.methods[[m.algorithm for m in tree.methods].index("6")]
            assert tree.query(comm, msg) == want, (comm, msg)


def test_outside_the_measured_range_the_library_decides(tree):
    for comm, msg in [(1, 64), (9, 64), (1000, 8), (3, 0), (3, 7), (3, 32769), (2, 1 << 40)]:
        assert tree.query(comm, msg) == DEFAULT_METHOD, (comm, msg)
    assert tree.query(2, 8).algorithm == "6" and tree.query(4, 32768).algorithm == "6"


def test_extrapolate_keeps_the_nearest_rules():
    fn = build_size_tree(build_decision_map(default_best_for_large_comms()), split="measured",
                                 between="least-bad", leaf_rule="penalty", keep_default=True)
    assert fn.query(1, 64).algorithm == "6" and fn.query(3, 1 << 40).algorithm == "6"
    assert fn.query(1000, 8) == DEFAULT_METHOD         # the kept default region extends like any other


def test_every_target_hands_the_region_back(tree, compile_decision):
    probes = [(c, m) for c in (1, 2, 3, 5, 6, 7, 8, 9, 64) for m in (0, 7, 8, 9, 500, 4096, 32768, 32769, 1 << 30)]
    expected = {(c, m): tree.query(c, m) for c, m in probes}
    classic = OmpiClassicRules(emit("ompi-rules", [tree]))
    js = OmpiJsonRules(emit("ompi-json", [tree]))
    mpich_tree = build_size_tree(build_decision_map(
        [r.__class__(r.collective, {"1": "binomial", "6": "smp"}.get(r.algorithm, r.algorithm), r.segsize, r.comm_size,
                     r.msg_size, r.time) for r in default_best_for_large_comms()]),
        split="measured", between="least-bad", leaf_rule="penalty", keep_default=True, outside="default")
    selection = MpichSelection(emit("mpich-json", [mpich_tree], mpich_base=MPICH_BASE))
    ask = {flavor: compile_decision(emit("c", [tree], flavor=flavor, name=f"f_{flavor}"), f"f_{flavor}")
           for flavor in ("plain", "table")}
    answers = {flavor: dict(zip(probes, ask[flavor](probes))) for flavor in ask}
    for (c, m), method in expected.items():
        alg = 0 if method == DEFAULT_METHOD else int(method.algorithm)
        assert classic.lookup(7, c, m)[0] == alg, ("classic", c, m)
        assert js.lookup("bcast", c, m)[0] == alg, ("json", c, m)
        for flavor in ask:
            assert answers[flavor][(c, m)] == (alg, 0), (flavor, c, m)
        name, _ = selection.lookup("bcast", c, m)
        want = mpich_tree.query(c, m)
        assert (want == DEFAULT_METHOD) == (method == DEFAULT_METHOD)
        assert name == ("MPIR_Bcast_intra_binomial" if want == DEFAULT_METHOD or want.algorithm == "binomial"
                        else "MPIR_Bcast_intra_smp"), ("mpich", c, m)
    header = emit("ompi-rules", [tree])
    assert "outside them the library decides" in header
    assert "0 = no decision" in emit("c", [tree])


def test_mpich_needs_its_own_selection_to_hand_back(tree):
    from quadsel.errors import QuadselError
    fn = build_size_tree(build_decision_map(
        [r.__class__(r.collective, {"1": "binomial", "6": "smp"}.get(r.algorithm, r.algorithm), r.segsize, r.comm_size,
                     r.msg_size, r.time) for r in default_best_for_large_comms()]), outside="default")
    with pytest.raises(QuadselError, match="--mpich-base"):
        emit("mpich-json", [fn])


def test_penalty_of_the_default_regions_is_the_defaults(tree):
    dmap = build_decision_map(default_best_for_large_comms())
    choice = choice_on(QuadtreeSelector.of(tree), dmap)
    assert (choice[np.asarray(COMMS) >= 6] == LIBRARY_DEFAULT).all()
    grid = penalty_grid(dmap, choice)
    assert np.allclose(grid[np.asarray(COMMS) >= 6], 0.0)   # faster than every forced method: the best choice there


def test_a_gain_within_the_noise_goes_to_the_default_and_a_clear_gain_does_not():
    from quadsel.ingest.table import Measurement

    def rows(gain):
        out = []
        for comm in COMMS:
            for msg in MSGS:
                out.append(Measurement("bcast", "6", 0, comm, msg, 10.0 / gain, 1.0, 25))    # se 0.2 µs
                out.append(Measurement("bcast", "1", 0, comm, msg, 30.0, 1.0, 25))
                out.append(Measurement("bcast", "default", 0, comm, msg, 10.0, 1.0, 25))
        return out

    for gain, kept in ((1.02, True), (1.5, False)):    # 0.2 µs faster: within 1.96 se of the difference; 3.3 µs
        fn = build_size_tree(build_decision_map(rows(gain)), split="measured", between="least-bad",
                                     leaf_rule="penalty", max_leaves="auto", tolerance="ci", keep_default=True)
        assert (fn.query(4, 512) == DEFAULT_METHOD) == kept, gain


def test_the_tree_file_keeps_the_outside_cells(tree, tmp_path):
    path = tmp_path / "t.qt.json"
    tree.save(path)
    again = DecisionFunction.load(path).size_tree
    assert again.options.outside == "default" and again.options.keep_default
    probes = [(c, m) for c in (1, 2, 6, 9) for m in (0, 8, 40000)]
    assert [again.query(*p) for p in probes] == [tree.query(*p) for p in probes]


def test_axis_outside_cells():
    axis = Axis.of([8, 64, 512], "least-bad", outside=True)
    assert axis.lo.tolist() == [0, 8, 9, 64, 65, 512, 513]
    assert axis.is_measured.tolist() == [False, True, False, True, False, True, False]
    assert Axis.of([0, 8], "floor", outside=True).lo.tolist() == [0, 8, 9]


def _auto(rows):
    return build_size_tree(build_decision_map(rows), split="measured", between="least-bad",
                                   leaf_rule="penalty", max_leaves="auto", tolerance="ci", keep_default="auto")


def test_auto_keeps_the_default_where_it_holds_up_on_held_out_sizes():
    """The default build (keep_default="auto"): the default beats every forced method from 6 ranks up, smoothly;
    it is a method of the map (issue 39), and the tree takes it there."""
    fn = _auto(default_best_for_large_comms(noise=0.01))
    assert fn.options.keep_default and fn.query(8, 512) == DEFAULT_METHOD and fn.query(2, 512).algorithm == "6"


def test_an_erratic_default_is_a_method_too():
    """A default that is the fastest at every other message size and slow at the others (a library switching
    its own algorithms between the measured sizes). Issue 39: the measured default is a method of every build
    (before, the folds left it out and the tree lost 150 % at every other measured size); the tree takes it where
    it was measured fastest and the forced method where it was not."""
    shape = (len(COMMS), len(MSGS))
    erratic = np.where(np.arange(len(MSGS))[None, :] % 2 == 0, 4.0, 40.0) * np.ones(shape)
    cost = np.stack([np.full(shape, 20.0), np.full(shape, 10.0)], axis=2)
    fn = _auto(table_from_cube(cost, COMMS, MSGS, [("1", 0), ("6", 0)], default=erratic))
    assert fn.options.keep_default and "keep_default" not in fn.provenance["size"]
    assert [fn.query(4, m).label for m in MSGS] == ["default", "6", "default", "6", "default"]


def test_auto_without_a_measured_default_is_off_and_a_fixed_size_keeps_it():
    fn = _auto(table_from_cube(np.stack([np.full((5, 5), 20.0), np.full((5, 5), 10.0)], axis=2), COMMS, MSGS,
                               [("1", 0), ("6", 0)]))
    assert not fn.options.keep_default and "keep_default" not in fn.provenance["size"]
    fixed = build_size_tree(build_decision_map(default_best_for_large_comms()), split="measured",
                                    between="least-bad", leaf_rule="penalty", max_leaves=4, keep_default="auto")
    assert fixed.options.keep_default and fixed.query(8, 512) == DEFAULT_METHOD    # issue 39: every builder


def test_build_command_lets_the_folds_decide_and_the_flags_override(tmp_path):
    from click.testing import CliRunner
    from quadsel.cli import main
    import json
    csv = tmp_path / "m.csv"
    csv.write_text("collective,algorithm,segsize,comm_size,msg_size,time_us\n" + "".join(
        f"{r.collective},{r.algorithm},{r.segsize},{r.comm_size},{r.msg_size},{r.time}\n"
        for r in default_best_for_large_comms(noise=0.01)))
    kept = {}
    for flags in ([], ["--no-keep-default"], ["--keep-default"], ["--paper"], ["--max-leaves", "10"]):
        out = tmp_path / "t.qt.json"
        result = CliRunner().invoke(main, ["build", str(csv), *flags, "-o", str(out)])
        assert result.exit_code == 0, result.output
        kept[" ".join(flags)] = json.loads(out.read_text())["builder"]["keep_default"]
    assert kept == {"": True, "--no-keep-default": False, "--keep-default": True, "--paper": False,
                    "--max-leaves 10": True}     # issue 39: every builder but the paper's keeps it


def test_auto_does_not_keep_intel_mpis_default():
    """I_MPI_ADJUST cannot name Intel MPI's default (preset 0 is its basic logic): the folds are not asked."""
    from dataclasses import replace
    dmap = build_decision_map(default_best_for_large_comms(noise=0.01))
    assert _auto_map(dmap).options.keep_default
    fn = _auto_map(replace(dmap, library="intelmpi"))
    assert not fn.options.keep_default and DEFAULT_METHOD not in fn.methods


def _auto_map(dmap):
    return build_size_tree(dmap, split="measured", between="least-bad", leaf_rule="penalty",
                                   max_leaves="auto", tolerance="ci", keep_default="auto")


def test_mpich_base_without_a_comm_type_level_is_handed_back():
    # MPICH 4.x's embedded selection has `collective=exscan` -> `algorithm=...` with no comm_type level: quadsel
    # tune's MPICH run stopped at "hands regions back ... give --mpich-base" although the base was given.
    from quadsel.ingest.table import Measurement
    rows = []
    for c in (2, 4):
        for m in (8, 64, 512, 4096):
            fast = c == 4         # recursive doubling wins there, the default at 2 (csel keys exscan on no msg size)
            rows += [Measurement("exscan", "default", 0, c, m, 10.0),
                     Measurement("exscan", "recursive_doubling", 0, c, m, 5.0 if fast else 20.0)]
    fn = build_size_tree(build_decision_map(rows), split="measured", keep_default=True, outside="default")
    base = {"collective=exscan": {"algorithm=MPIR_Exscan_intra_recursive_doubling": {}}}
    base_default = {"collective=exscan": {"algorithm=MPIR_Exscan_intra_other": {}}}
    for b, at_default in ((base, "MPIR_Exscan_intra_recursive_doubling"), (base_default, "MPIR_Exscan_intra_other")):
        selection = MpichSelection(emit("mpich-json", [fn], mpich_base=b))
        for c in (2, 3, 4, 5):
            for m in (8, 100, 512, 4096):       # within the measured sizes (outside, csel keys on none)
                want = fn.query(c, m)
                name, _ = selection.lookup("exscan", c, m)
                assert name == (at_default if want == DEFAULT_METHOD else "MPIR_Exscan_intra_recursive_doubling"), (c, m)
