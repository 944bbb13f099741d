"""The one layout value and its one syntax (quadsel/layout.py, docs/conventions.md "Layouts")."""

import pytest
from hypothesis import given, strategies as st

from quadsel.errors import QuadselError
from quadsel.inputs import INT_MAX
from quadsel.layout import Layout, parse_layouts


@given(st.integers(1, 4096), st.integers(1, 4096), st.sampled_from(["x", "X", " x ", "x "]))
def test_what_quadsel_writes_it_reads_back(nodes, ppn, sep):
    layout = Layout.parse(f"{nodes}{sep}{ppn}")
    assert layout == (nodes, ppn) and layout.comm_size == nodes * ppn
    assert Layout.parse(str(layout)) == layout and str(layout) == f"{nodes}x{ppn}"


@pytest.mark.parametrize("text", ["4*8", "4×8", "4", "4x", "x8", "0x4", "4x0", "-1x4", "4.0x8", "4x8x2", "",
                                  f"{INT_MAX}x2", "12345678901x1"])
def test_anything_else_is_refused_naming_the_option(text):
    with pytest.raises(QuadselError, match=r"^--layout: .* is not NODESxPPN such as 4x8"):
        Layout.parse(text)
    assert Layout.match(text) is None


def test_a_list_keeps_its_order_drops_repeats_and_refuses_one_rank():
    assert parse_layouts("2x1, 1X2,2x2,2x1") == [(2, 1), (1, 2), (2, 2)]
    assert all(isinstance(layout, Layout) for layout in parse_layouts("2x1,1x2"))
    for bad in ("2", "2x", "0x4", "1x1", "axb", "", "2x1,2*2"):
        with pytest.raises(QuadselError, match="^--layouts: "):
            parse_layouts(bad)


def test_every_layout_quadsel_reads_goes_through_it():
    """No second parser: the pattern of a layout is written once, in quadsel/layout.py."""
    import pathlib
    import re
    package = pathlib.Path(__file__).resolve().parents[1] / "quadsel"
    found = [str(p.relative_to(package)) for p in package.rglob("*.py")
             if re.search(r"\[xX[^\]]*\]", p.read_text(encoding="utf-8"))]
    assert found == ["layout.py"], found
