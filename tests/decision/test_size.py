"""The held-out folds of the leaf budget (decision/size.py): budget by budget, stopping once the curve turned."""

import numpy as np
import pytest

from quadsel.decision import size
from quadsel.decision.decision_map import build_decision_map
from quadsel.ingest import read_measurements

from helpers import REPO


@pytest.fixture(scope="module")
def dmap():
    return build_decision_map(read_measurements([str(REPO / "examples" / "ompi5-bcast.csv")]))


def _run(dmap, curve, monkeypatch):
    """fold_scores over `curve` ({budget: held-out penalty}): the budgets each fold's stream was asked for."""
    asked = []

    def trees(train, budgets):
        for budget in budgets:
            asked.append(budget)
            yield budget                      # held_out_penalty below reads the budget back

    monkeypatch.setattr(size, "held_out_penalty", lambda dmap, budget, test, cube: curve[budget])
    scores = size.fold_scores(dmap, trees, list(curve))
    n_folds = len(size.folds(dmap))
    assert all(len(v) == n_folds for v in scores.values())
    return scores, sorted(set(asked), key=list(curve).index)


def test_a_curve_that_turns_past_64_leaves_stops_two_budgets_later(dmap, monkeypatch):
    curve = {1: 9.0, 2: 8.0, 4: 7.0, 8: 6.0, 16: 5.0, 32: 4.0, 64: 3.0, 128: 3.5, 256: 3.2, 512: 2.0, None: 1.0}
    scores, asked = _run(dmap, curve, monkeypatch)
    assert asked == [1, 2, 4, 8, 16, 32, 64, 128, 256]       # 512 and the exact tree are never grown
    assert size.choose(scores)[0] == 64


def test_below_64_leaves_a_ragged_curve_is_followed_to_the_end(dmap, monkeypatch):
    curve = {1: 9.0, 2: 5.0, 4: 6.0, 8: 7.0, 16: 6.5, 32: 4.0, None: 4.5}
    scores, asked = _run(dmap, curve, monkeypatch)
    assert asked == list(curve)
    assert size.choose(scores)[0] == 32


def test_a_curve_still_falling_scores_the_exact_tree(dmap, monkeypatch):
    curve = {b: 100.0 / b for b in (1, 2, 4, 8, 16, 32, 64, 128, 256)}
    curve[None] = 0.1
    scores, asked = _run(dmap, curve, monkeypatch)
    assert asked == list(curve) and size.choose(scores)[0] is None


def test_equal_means_count_as_not_lowering_the_best(dmap, monkeypatch):
    curve = {1: 5.0, 2: 4.0, 4: 3.0, 8: 2.0, 16: 2.0, 32: 2.0, 64: 2.0, 128: 2.0, 256: 1.0, None: 0.5}
    scores, asked = _run(dmap, curve, monkeypatch)
    assert asked[-1] == 64 and size.choose(scores)[0] == 8       # stale since 16, stopped at the first budget >= 64


def test_a_gain_under_one_percent_of_the_best_is_no_progress(dmap, monkeypatch):
    curve = {1: 9.0, 2: 8.0, 4: 7.0, 8: 6.0, 16: 5.0, 32: 4.0, 64: 3.0, 128: 2.99, 256: 2.98, 512: 1.0, None: 0.5}
    scores, asked = _run(dmap, curve, monkeypatch)
    assert asked[-1] == 256 and size.choose(scores)[0] == 256      # stopped, but the best scored is chosen


@pytest.mark.parametrize("stride", [2, 3, 4])
def test_folds_hold_out_every_measured_point_once_per_axis(dmap, stride):
    masks = size.folds(dmap, stride)
    on_comm = stride if 7 >= 2 * stride else 2               # 7 comm x 21 msg sizes: a short axis is halved
    assert len(masks) == stride + on_comm
    per_axis = [masks[:stride], masks[stride:]]
    for axis_masks in per_axis:
        total = np.sum(axis_masks, axis=0)
        assert np.array_equal(total, dmap.measured.astype(int))    # each measured point held out exactly once
        for mask in axis_masks:                                      # and a training grid keeps the rest
            assert mask.any() and (dmap.measured & ~mask).any()


def test_an_axis_too_short_for_the_stride_is_halved():
    from quadsel.decision.decision_map import map_from_cube
    from quadsel.decision.decision_map import Method
    cost = np.random.default_rng(0).uniform(1, 2, size=(4, 9, 2))
    small = map_from_cube("bcast", np.array([2, 3, 4, 5]), 2 ** np.arange(9), [Method("1", 0), Method("2", 0)], cost)
    masks = size.folds(small, 3)
    assert len(masks) == 3 + 2                                # 9 message sizes in thirds, 4 communicator sizes halved
    assert [m.sum() for m in masks[3:]] == [2 * 9, 2 * 9]


def test_a_pair_skipped_to_the_end_of_its_row_is_charged_its_own_penalty_held():
    """An adaptive run prunes a method from the size where it falls far behind to the row's end, measuring the
    winner and one method beside it: the worst measured there is then ~0, and a fold's tree that chose the pruned
    method would win by it. Beyond its measured sizes its penalty at the nearest one is held (never less than the
    worst measured); between two of them its time is interpolated; a method never measured in the row keeps the
    worst measured."""
    from quadsel.decision.decision_map import Method, map_from_cube, penalty_cube
    nan = np.nan
    # one communicator size, 5 message sizes; "1" pruned after 2 sizes (3x the best), "3" skipped at the middle one,
    # "4" never measured in the row (another row has it)
    row = [[1.0, 3.0, 2.0, nan], [2.0, 6.0, 4.0, nan], [4.0, nan, nan, nan], [8.0, nan, 12.0, nan],
           [16.0, nan, 20.0, nan]]
    cost = np.array([row, [[1.0, nan, 1.0, 1.0]] * 5])      # no other row has "2": its ratio is held
    dmap = map_from_cube("bcast", np.array([2, 4]), 2 ** np.arange(5), [Method(str(k), 0) for k in (1, 2, 3, 4)], cost)
    between, beyond = size.skipped_estimate(dmap)
    assert between[0, 2, 2] == pytest.approx((48 ** 0.5 / 4 - 1) * 100)   # "3": log-log between 4 and 12 µs
    assert np.isnan(beyond[0, 2, 2]) and np.isnan(between[0, 2, 1])
    assert beyond[0, 2:, 1] == pytest.approx([200.0] * 3)    # "2": 3x the best at 2 B, held to the row's end
    assert np.isnan(between[0, :, 3]).all() and np.isnan(beyond[0, :, 3]).all()
    cube = size.scoring_cube(penalty_cube(dmap), dmap)
    assert cube[0, 2, 1] == pytest.approx(200.0)             # not the worst measured at 4 B (0: "1" alone)
    assert cube[0, 3, 1] == pytest.approx(200.0) and cube[0, 3, 3] == pytest.approx(50.0)   # "4": the worst measured
    assert not np.isnan(cube).any()


def test_a_pruned_method_closing_the_gap_in_another_row_is_charged_as_it_closes_there():
    """The pipeline case: "b" is 5x the best at small messages and wins at large ones. A row where it was pruned
    after its small sizes is charged, beyond them, its ratio changed as it changes in the nearest row that measured
    it at both sizes (its time there falls from 5 to 2 us while a's doubles: a tie), not its small-message ratio held."""
    from quadsel.decision.decision_map import Method, map_from_cube, penalty_cube
    nan = np.nan
    a = [1.0, 2.0, 4.0, 8.0]
    pruned = [[t, b] for t, b in zip(a, [5.0, 10.0, nan, nan])]
    measured = [[t, b] for t, b in zip(a, [5.0, 5.0, 2.0, 4.0])]
    dmap = map_from_cube("bcast", np.array([2, 4, 8]), 2 ** np.arange(4), [Method("a", 0), Method("b", 0)],
                         np.array([pruned, measured, pruned]))
    _, beyond = size.skipped_estimate(dmap)
    # rows 2 and 8: b at 2 B is 10 us, 5x a's; in row 4 b's time goes 5 -> 2 -> 4 us: 10 x 2 / 5 = 4 us at 4 B (a: 4),
    # 10 x 4 / 5 = 8 us at 8 B (a: 8)
    assert beyond[[0, 2], 2, 1] == pytest.approx([0.0, 0.0])
    assert beyond[[0, 2], 3, 1] == pytest.approx([0.0, 0.0])
    cube = size.scoring_cube(penalty_cube(dmap), dmap)
    assert cube[0, 2, 1] == pytest.approx(0.0)               # the worst measured there is a's own 0
