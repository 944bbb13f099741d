import numpy as np
import pytest
from hypothesis import given, strategies as st

from quadsel.decision.padding import first_copy, pad_index, padded_size


@given(st.integers(1, 70), st.sampled_from(["spread", "edge"]), st.integers(0, 2))
def test_index_map_covers_every_original_in_order(n, mode, extra):
    size = padded_size(n, 1) << extra
    index = pad_index(n, size, mode)
    assert len(index) == size
    assert np.all(np.diff(index) >= 0)
    assert set(index.tolist()) == set(range(n))
    assert np.array_equal(index[first_copy(index, n)], np.arange(n))


def test_padded_size_is_next_power_of_two():
    assert padded_size(8, 20) == 32
    assert padded_size(49, 38) == 64
    assert padded_size(1, 1) == 1
    assert padded_size(16, 16) == 16


def test_spread_spreads_copies_evenly_and_edge_repeats_the_last():
    assert pad_index(3, 8, "spread").tolist() == [0, 0, 0, 1, 1, 1, 2, 2]
    assert pad_index(3, 8, "edge").tolist() == [0, 1, 2, 2, 2, 2, 2, 2]
    counts = np.bincount(pad_index(20, 32, "spread"))
    assert counts.max() - counts.min() <= 1


def test_unknown_mode_is_rejected():
    with pytest.raises(ValueError):
        pad_index(3, 4, "mirror")
