import numpy as np
import pytest

from quadsel.decision.decision_map import Method, build_decision_map
from quadsel.decision.grid import Axis
from quadsel.errors import QuadselError
from quadsel.ingest.table import Measurement

from helpers import table_from_cube


def test_axes_methods_cost_and_best():
    cost = np.array([[[5.0, 1.0], [1.0, 5.0]], [[2.0, 3.0], [9.0, 4.0]]])
    rows = table_from_cube(cost, [2, 4], [8, 1024], [("6", 0), ("3", 8192)])
    dmap = build_decision_map(rows)
    assert dmap.comm_sizes.tolist() == [2, 4] and dmap.msg_sizes.tolist() == [8, 1024]
    assert dmap.methods == [Method("3", 8192), Method("6", 0)]         # sorted by numeric id
    assert dmap.best.tolist() == [[0, 1], [1, 0]]
    assert not dmap.filled.any() and dmap.default_cost is None


def test_unmeasured_method_never_wins_and_missing_points_are_filled():
    nan = np.nan
    cost = np.array([[[1.0, 5.0], [nan, 9.0], [nan, nan], [2.0, 8.0]],     # comm 4: nothing at msg 256
                     [[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]])    # comm 8 measured everywhere
    rows = table_from_cube(cost, [4, 8], [1, 16, 256, 4096], [("1", 0), ("2", 0)])
    dmap = build_decision_map(rows)
    assert dmap.best[0, 1] == 1                  # the only measured method wins
    assert dmap.filled.tolist() == [[False, False, True, False], [False] * 4]
    # filled point: log-log interpolation between msg 1 and 4096 for method 0 (msg 256 is 2/3 of the way)
    assert dmap.cost_filled[0, 2, 0] == pytest.approx(np.exp(2 / 3 * np.log(2.0)))
    assert dmap.cost_filled[0, 2, 1] == pytest.approx(np.exp(np.log(9.0) + (8 - 4) / (12 - 4) * (np.log(8.0) - np.log(9.0))))
    assert dmap.best[0, 2] == 0


def test_default_rows_are_the_baseline_not_a_method():
    rows = [Measurement("reduce", "7", 0, 2, 8, 2.0), Measurement("reduce", "Default", 0, 2, 8, 3.0)]
    dmap = build_decision_map(rows)
    assert [m.algorithm for m in dmap.methods] == ["7"]
    assert dmap.default_cost.tolist() == [[3.0]]


def test_collective_must_be_chosen_and_present():
    rows = [Measurement("bcast", "1", 0, 2, 8, 1.0), Measurement("reduce", "1", 0, 2, 8, 1.0)]
    with pytest.raises(QuadselError, match="several collectives"):
        build_decision_map(rows)
    with pytest.raises(QuadselError, match="allreduce"):
        build_decision_map(rows, "allreduce")
    assert build_decision_map(rows, "Reduce").collective == "reduce"
    assert build_decision_map(rows, "MPI_Bcast").collective == "bcast"
    with pytest.raises(QuadselError, match="only 'default'"):
        build_decision_map([Measurement("bcast", "default", 0, 2, 8, 1.0)])


def test_floor_index_is_the_boundary_expansion_rule():
    axis = np.array([2, 4, 8])
    assert Axis.of(axis).cells([0, 1, 2, 3, 4, 7, 8, 100]).tolist() == [0, 0, 0, 0, 1, 1, 2, 2]


def test_configurations_of_one_algorithm_are_one_method():
    """Open MPI's basic linear bcast (1) ignores the segment size: four labels are one method, times pooled."""
    from quadsel.ingest.table import Measurement
    rows = [Measurement("bcast", "1", seg, 4, 64, t) for seg, t in ((0, 10.0), (1024, 14.0), (8192, 11.0))]
    rows += [Measurement("bcast", "6", seg, 4, 64, t) for seg, t in ((0, 12.0), (1024, 9.0))]
    dmap = build_decision_map(rows)
    assert dmap.methods == [Method("1", 0), Method("6", 0), Method("6", 1024)]
    assert dmap.cost[0, 0, 0] == 11.0          # the median of 10, 14, 11


def test_several_rows_for_one_point_are_pooled_by_their_median_never_the_last():
    """Unaggregated rows, and the default measured under several segment-size labels (docs/methodology.md)."""
    rows = [Measurement("bcast", "6", 0, 2, 8, t) for t in (1.0, 9.0, 2.0)]
    rows += [Measurement("bcast", "default", seg, 2, 8, t) for seg, t in ((0, 4.0), (1024, 5.0), (8192, 40.0),
                                                                          (65536, 3.0))]
    dmap = build_decision_map(rows)
    assert dmap.cost[0, 0, 0] == 2.0                  # median of 1, 9, 2 (the last row says 2.0, the first 1.0)
    assert dmap.default_cost[0, 0] == 4.5             # median of 4, 5, 40, 3 (the last row says 3.0)


def test_a_training_map_keeps_the_standard_errors():
    """Review finding: held-out folds lost the spread, so ties within the noise never applied there."""
    from quadsel.decision.decision_map import noise_ties, training_map
    from quadsel.ingest.table import Measurement
    rows = [Measurement("bcast", alg, 0, 4, m, t, 0.5, 25) for m in (1, 2, 4) for alg, t in (("1", 10.0), ("6", 10.1))]
    dmap = build_decision_map(rows)
    test = np.zeros(dmap.shape, dtype=bool)
    test[:, 1] = True
    train = training_map(dmap, test)
    assert train.cost_se is not None and noise_ties(train).sum() == noise_ties(dmap)[:, [0, 2]].sum() == 4


def test_sizes_beyond_64_bits_find_the_last_cell():
    axis = Axis.of([1, 2 ** 60, 2 ** 61], "least-bad")
    assert axis.cells(np.array([2 ** 60, 2 ** 63], dtype=object)).tolist() == axis.cells([2 ** 60]).tolist() + [4]


def test_the_default_under_several_labels_gets_the_standard_error_of_pooled_repeats():
    """The default's rows under several segment-size labels are pooled by ingest.aggregate's rule: their
    standard error is their disagreement's (sample sd / sqrt(n)) when it exceeds their own errors."""
    from quadsel.ingest.aggregate import pooled_spread
    rows = [Measurement("bcast", "6", 0, 2, 8, 5.0, 0.1, 100)]
    times = (4.0, 5.0, 9.0)
    rows += [Measurement("bcast", "default", seg, 2, 8, t, 0.1, 100) for seg, t in zip((0, 1024, 8192), times)]
    dmap = build_decision_map(rows)
    stddev, reps = pooled_spread(list(times), [0.1] * 3, [100] * 3)
    assert dmap.default_se[0, 0] == pytest.approx(stddev / reps ** 0.5)
    assert dmap.default_se[0, 0] == pytest.approx(float(np.std(times, ddof=1)) / 3 ** 0.5)
