"""Issue 31: decision maps of a tree that keeps the library default draw it in a colour of its own, listed in the
legend, and list no method that is not drawn; a figure's legend lies inside the saved figure."""

import io

import numpy as np
import pytest

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.evaluate.comparators import QuadtreeSelector, choice_on, method_name
from quadsel.evaluate.penalty import LIBRARY_DEFAULT, penalty_grid

from helpers import table_from_cube

pytest.importorskip("matplotlib")

COMMS, MSGS = [2, 4, 8, 16], [1, 64, 4096, 65536, 1 << 20]


def default_kept_map():
    """Four forced methods; the library default is the fastest from 8 ranks up (so the tree keeps it there), and
    method "2" (index 1, whose colour the raw -2 used to borrow) wins nowhere."""
    shape = (len(COMMS), len(MSGS))
    big = np.asarray(COMMS)[:, None] >= 8
    cost = np.stack([np.where(big, 9.0, 1.0) * np.ones(shape), np.full(shape, 50.0),
                     np.where(big, 9.0, 3.0) * np.ones(shape), np.full(shape, 40.0)], axis=2)
    cost[0, :, 2] = 0.5                                       # "3" wins at 2 ranks
    default = np.where(big, 2.0, 20.0) * np.ones(shape)
    rows = table_from_cube(cost, COMMS, MSGS, [("1", 0), ("2", 0), ("3", 0), ("4", 0)], default=default)
    return build_decision_map(rows)


def _drawn(fig):
    """[(set of RGBA face colours of each panel's mesh)], {legend label: RGBA}."""
    import matplotlib.colors as mcolors
    fig.canvas.draw()
    panels = [{tuple(np.round(c, 4)) for c in ax.collections[0].get_facecolors()} for ax in fig.axes if ax.collections]
    legend = fig.legends[0]
    entries = {text.get_text(): tuple(np.round(mcolors.to_rgba(handle.get_facecolor()), 4))
               for text, handle in zip(legend.get_texts(), legend.legend_handles)}
    return panels, entries


def _inside(fig, artist):
    """The artist's box (title included) lies within the saved figure's canvas."""
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=110, format="png")     # as figure_maps.save: the drawn layout is the saved one
    box, canvas = artist.get_window_extent(), fig.bbox
    return box.x0 >= canvas.x0 - 0.5 and box.x1 <= canvas.x1 + 0.5 and box.y0 >= canvas.y0 - 0.5 and \
        box.y1 <= canvas.y1 + 0.5


def test_the_default_has_its_own_colour_and_legend_entry_and_the_legend_lists_only_what_is_drawn():
    from quadsel.evaluate.figure_maps import DEFAULT_COLOUR, decision_figure, method_colours
    import matplotlib.colors as mcolors
    dmap = default_kept_map()
    fn = build_size_tree(dmap, split="measured", between="least-bad", leaf_rule="penalty",
                                 keep_default=True, outside="default")
    grid = choice_on(QuadtreeSelector.of(fn), dmap)
    assert (grid == LIBRARY_DEFAULT).any() and not (grid == 1).any()
    fig = decision_figure(dmap, [("tree", grid)], "t")
    (drawn,), legend = _drawn(fig)
    default = tuple(np.round(mcolors.to_rgba(DEFAULT_COLOUR), 4))
    colours = [tuple(np.round(c, 4)) for c in method_colours(dmap.methods)]
    assert legend["library default"] == default and default in drawn
    shown = {method_name(dmap.methods[k], dmap.collective) for k in np.unique(grid) if k >= 0}
    assert set(legend) == shown | {"library default"}                   # nothing listed that is not drawn
    assert drawn == {legend[name] for name in legend}                    # and nothing drawn that is not listed
    assert colours[1] not in drawn                                      # method 2 wins nowhere: never drawn
    assert _inside(fig, fig.legends[0])


@pytest.mark.parametrize("n_panels", [1, 2, 3, 5])
def test_penalty_and_decision_legends_lie_inside_the_saved_figure(n_panels):
    """The one-panel penalty figure's legend was clipped at both edges (7 entries in one row of a 4.3-inch figure)."""
    from quadsel.evaluate.figure_maps import decision_figure, penalty_figure
    dmap = default_kept_map()
    rng = np.random.default_rng(n_panels)
    panels = [(f"p{i}", penalty_grid(dmap, rng.integers(-2, len(dmap.methods), size=dmap.shape)))
              for i in range(n_panels)]
    title = "bcast: penalty of the max-depth limited trees (all measured points)"     # wider than one panel
    fig = penalty_figure(dmap, panels, title)
    assert _inside(fig, fig.legends[0]) and _inside(fig, fig._suptitle)
    choices = [(f"c{i}", rng.integers(-2, len(dmap.methods), size=dmap.shape)) for i in range(n_panels)]
    fig = decision_figure(dmap, choices, title)
    assert _inside(fig, fig.legends[0]) and _inside(fig, fig._suptitle)
    _, legend = _drawn(fig)
    assert "library default" in legend and "not in this map" in legend
