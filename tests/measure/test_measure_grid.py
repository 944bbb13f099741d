"""Grid parsing of `quadsel measure` (no MPI needed)."""

import pytest
from hypothesis import given, strategies as st

from quadsel.errors import QuadselError
from quadsel.measure.grid import format_size, parse_list, parse_size


@pytest.mark.parametrize("text,value", [("0", 0), ("17", 17), ("1K", 1024), ("64k", 65536), ("1M", 1 << 20),
                                        ("2G", 2 << 30), ("8KiB", 8192), ("4KB", 4096), (" 3 ", 3)])
def test_sizes(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "-1", "1.5K", "K", "1T", "12 34", "0x10"])
def test_bad_sizes(text):
    with pytest.raises(QuadselError):
        parse_size(text)


def test_lists_ranges_and_powers_of_two():
    assert parse_list("2-8") == [2, 3, 4, 5, 6, 7, 8]
    assert parse_list("0,1K,8K,64K") == [0, 1024, 8192, 65536]
    assert parse_list("1-1M:pow2") == [1 << i for i in range(21)]
    assert parse_list("0-8:pow2") == [0, 1, 2, 4, 8]
    assert parse_list("3-100:pow2") == [4, 8, 16, 32, 64]
    assert parse_list("2-8:2,3") == [2, 3, 4, 6, 8]
    assert parse_list("8,2,2,4") == [2, 4, 8]          # sorted, distinct
    assert parse_list("1K-4K:1K") == [1024, 2048, 3072, 4096]


@pytest.mark.parametrize("text", ["8-2", "1,,2", "5:pow2", "1-1M", "2-8:0", "9-15:pow2", "a-b"])
def test_bad_lists(text):
    with pytest.raises(QuadselError):
        parse_list(text)


@pytest.mark.parametrize("text", ["-1", "4-", "1--2", "-1-4", "2,-8"])
def test_a_negative_size_or_an_open_range_names_its_item(text):
    """`quadsel query --msg -1` said "invalid --msg-sizes '': expected an integer": the empty side of a range."""
    with pytest.raises(QuadselError) as caught:
        parse_list(text, "--msg-sizes")
    item = text.split(",")[-1]
    assert f"bad --msg-sizes {item!r}: expected a size or a range A-B of sizes" in str(caught.value)


@given(st.integers(min_value=0, max_value=40))
def test_format_size_round_trips(power):
    n = 1 << power
    assert parse_size(format_size(n)) == n
    assert parse_size(format_size(n + 3)) == n + 3
