"""Map figures (paper Figs. 2-4): decision maps and penalty maps on communicator size x message size.

Shared by quadsel.evaluate.figures: colours per method, penalty classes, one panel per selector, the PNG writer.
matplotlib is imported lazily with the Agg backend, so quadsel works without it.
"""

import math

import numpy as np

from ..output import write_bytes
from ..inputs import format_size
from .comparators import method_name

# A penalty is never negative (against the best measured choice, the library default included: penalty.py)
PENALTY_BOUNDS = (0.0, 5.0, 10.0, 25.0, 50.0, 1e9)
PENALTY_COLOURS = ("#ffffff", "#fff6b0", "#ffe01a", "#ff8c1a", "#d7191c")
PENALTY_LABELS = ("0–5 %", "5–10 %", "10–25 %", "25–50 %", "≥ 50 %")
UNSCORED = "#d9d9d9"


def pyplot():
    import matplotlib
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    return plt


# Hue groups of four shades (dark to light) from tab20c/tab20b, most distinct first.
_GROUPS = (("tab20c", 0), ("tab20c", 4), ("tab20c", 8), ("tab20b", 12), ("tab20c", 12), ("tab20b", 4),
           ("tab20b", 8), ("tab20b", 16), ("tab20b", 0), ("tab20c", 16))


def method_colours(methods):
    """One colour per method, the same in every figure of a run, all distinct.

    Without segment sizes (or too many algorithms): tab10/tab20, then an evenly spaced hue circle. With
    segment sizes: one hue per algorithm and one shade per segment size, so "3/seg8192" looks like "3".
    """
    plt = pyplot()
    algorithms = list(dict.fromkeys(m.algorithm for m in methods))
    segments = {a: sorted({m.segsize for m in methods if m.algorithm == a}) for a in algorithms}
    if any(m.segsize for m in methods) and len(algorithms) <= len(_GROUPS) and \
            max(len(v) for v in segments.values()) <= 4:
        out = []
        for m in methods:
            name, first = _GROUPS[algorithms.index(m.algorithm)]
            out.append(plt.get_cmap(name)(first + segments[m.algorithm].index(m.segsize)))
        return out
    n = len(methods)
    if n <= 20:
        cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
        return [cmap(i) for i in range(n)]
    return [plt.get_cmap("hsv")(i / n) for i in range(n)]


# -- axes -----------------------------------------------------------------------------------------
def _coords(values, log):
    v = np.asarray(values, dtype=float)
    return np.log2(np.maximum(v, 0.5)) if log else v


def _edges(centres):
    """Cell edges halfway between neighbouring centres; the outer cells as wide as their neighbour."""
    c = np.asarray(centres, dtype=float)
    if c.size == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    mid = (c[1:] + c[:-1]) / 2
    return np.concatenate(([c[0] - (mid[0] - c[0])], mid, [c[-1] + (c[-1] - mid[-1])]))


def _thin(n, most=8):
    step = max(1, math.ceil(n / most))
    return list(range(0, n, step))


class MapAxes:
    """Where the cells of a decision map go: log2 message axis (west = small); log2 comm axis when it spans 8x
    or more, small communicator sizes at the top (north = small, as the tree and the generated C name them)."""

    def __init__(self, dmap):
        self.dmap = dmap
        self.comm_log = dmap.comm_sizes.max() >= 8 * max(dmap.comm_sizes.min(), 1)
        self.x = _coords(dmap.msg_sizes, True)
        self.y = _coords(dmap.comm_sizes, self.comm_log)
        self.x_edges, self.y_edges = _edges(self.x), _edges(self.y)

    def style(self, ax, xlabel=True, ylabel=True):
        xt = _thin(len(self.x))
        ax.set_xticks(self.x[xt])
        ax.set_xticklabels([format_size(self.dmap.msg_sizes[i]) for i in xt], fontsize=8)
        yt = _thin(len(self.y), 9)
        ax.set_yticks(self.y[yt])
        ax.set_yticklabels([str(int(self.dmap.comm_sizes[i])) for i in yt], fontsize=8)
        ax.set_xlim(self.x_edges[0], self.x_edges[-1])
        ax.set_ylim(self.y_edges[-1], self.y_edges[0])     # small communicators on top: north, as in the C
        if xlabel:
            ax.set_xlabel("message size [bytes per rank]", fontsize=9)
        if ylabel:
            ax.set_ylabel("communicator size", fontsize=9)


def panel_grid(plt, n, ncols=3, width=4.3, height=3.1, bottom_space=0.0):
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows + bottom_space), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()[:n], ncols


def save(fig, path):
    """PNG into `path` by the rules of every output (quadsel.output: atomic, mode kept, links followed)."""
    import io
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=110, format="png")
    pyplot().close(fig)
    write_bytes(path, buffer.getvalue())
    return path


# -- figures --------------------------------------------------------------------------------------
DEFAULT_COLOUR = "#3a3a3a"     # the library default (a region the tree hands back to it): dark grey
UNKNOWN_COLOUR = "#ffffff"     # a method this map does not have (-1; penalty.penalty_grid charges it the worst)
LEGEND_ENTRY_INCHES = 1.55     # the width one legend entry needs at fontsize 9 (label, patch, padding)


def choice_colours(dmap, grids):
    """(colour table, legend handles' (colour, label) list, grids as indices into the table) of choice grids:
    methods keep their method_colours; the library default (penalty.LIBRARY_DEFAULT, -2) and a method the map
    lacks (-1) get colours of their own -- never a method's, which the raw -2 / -1 would have picked (a
    colormap's under colour, a list index from the end)."""
    from .penalty import LIBRARY_DEFAULT
    colours = list(method_colours(dmap.methods))
    k = len(colours)
    extra = {LIBRARY_DEFAULT: (k, DEFAULT_COLOUR, "library default"), -1: (k + 1, UNKNOWN_COLOUR, "not in this map")}
    table = colours + [DEFAULT_COLOUR, UNKNOWN_COLOUR]
    used = sorted({int(v) for grid in grids for v in np.unique(grid)})
    handles = [(colours[v], method_name(dmap.methods[v], dmap.collective)) for v in used if v >= 0]
    handles += [extra[v][1:] for v in (LIBRARY_DEFAULT, -1) if v in used]
    unknown = [v for v in used if v < 0 and v not in extra]
    if unknown:
        raise ValueError(f"choice index {unknown[0]} is neither a method nor the library default")
    indexed = [np.select([np.asarray(g) == LIBRARY_DEFAULT, np.asarray(g) == -1], [k, k + 1], np.asarray(g))
               for g in grids]
    return table, handles, indexed


def legend_columns(fig_width, n, most=6):
    """Columns of a figure-wide legend of `n` entries that fit the figure's width (never clipped at its edges)."""
    return max(1, min(n, most, int(fig_width // LEGEND_ENTRY_INCHES)))


def _suptitle(fig, title):
    """The figure's title, wrapped to its width (a one-panel figure is 4.3 inches wide); returns the top of the
    panels' area (a fraction of the height) below it."""
    import textwrap
    lines = textwrap.wrap(title, width=max(24, int(fig.get_figwidth() / 0.095))) or [""]
    fig.suptitle("\n".join(lines), fontsize=11)
    return 1 - (0.2 * len(lines) + 0.08) / fig.get_figheight()


def decision_figure(dmap, panels, title):
    """The Figure of `decision_maps` (not saved)."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch
    plt = pyplot()
    table, entries, grids = choice_colours(dmap, [grid for _, grid in panels])
    cmap = ListedColormap(table)
    axes_info = MapAxes(dmap)
    probe_width = min(3, len(panels)) * 4.3
    legend_rows = math.ceil(len(entries) / legend_columns(probe_width, len(entries)))
    fig, axes, ncols = panel_grid(plt, len(panels), bottom_space=0.3 * legend_rows)
    for i, (ax, (name, _), grid) in enumerate(zip(axes, panels, grids)):
        ax.pcolormesh(axes_info.x_edges, axes_info.y_edges, np.asarray(grid, dtype=float), cmap=cmap,
                      vmin=-0.5, vmax=len(table) - 0.5, edgecolors="face", linewidth=0)
        axes_info.style(ax, xlabel=i >= len(panels) - ncols, ylabel=i % ncols == 0)
        ax.set_title(name, fontsize=9)
    handles = [Patch(facecolor=colour, edgecolor="black", linewidth=0.4, label=label) for colour, label in entries]
    fig.legend(handles=handles, loc="lower center", ncol=legend_columns(fig.get_figwidth(), len(handles)),
               fontsize=9, frameon=False)
    top = _suptitle(fig, title)
    fig.tight_layout(rect=(0, (0.3 * legend_rows + 0.05) / fig.get_figheight(), 1, top))
    return fig


def decision_maps(dmap, panels, path, title):
    """Fig. 2/4: one panel per (name, (C, M) choice grid of dmap.methods, penalty.LIBRARY_DEFAULT where the tree
    hands the point back to the library); a shared legend of what is drawn. No panel: no figure (None)."""
    if not panels:
        return None
    return save(decision_figure(dmap, panels, title), path)


def penalty_figure(dmap, panels, title):
    """The Figure of `penalty_maps` (not saved)."""
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.patches import Patch
    plt = pyplot()
    cmap = ListedColormap(PENALTY_COLOURS).with_extremes(bad=UNSCORED)
    norm = BoundaryNorm(PENALTY_BOUNDS, cmap.N)
    axes_info = MapAxes(dmap)
    n_entries = len(PENALTY_COLOURS) + 1
    width = min(3, len(panels)) * 4.3
    legend_rows = math.ceil(n_entries / legend_columns(width, n_entries, most=n_entries))
    fig, axes, ncols = panel_grid(plt, len(panels), bottom_space=0.25 + 0.28 * legend_rows)
    for i, (ax, (name, grid)) in enumerate(zip(axes, panels)):
        ax.pcolormesh(axes_info.x_edges, axes_info.y_edges, np.ma.masked_invalid(grid), cmap=cmap, norm=norm,
                      edgecolors="#c8c8c8", linewidth=0.3)
        axes_info.style(ax, xlabel=i >= len(panels) - ncols, ylabel=i % ncols == 0)
        ax.set_title(name, fontsize=9)
    handles = [Patch(facecolor=c, edgecolor="#888888", linewidth=0.5, label=l)
               for c, l in zip(PENALTY_COLOURS, PENALTY_LABELS)]
    handles.append(Patch(facecolor=UNSCORED, edgecolor="#888888", linewidth=0.5, label="not scored"))
    fig.legend(handles=handles, loc="lower center", ncol=legend_columns(fig.get_figwidth(), n_entries, most=n_entries),
               fontsize=9, frameon=False, title="penalty vs the best measured choice (library default included)",
               title_fontsize=9)
    top = _suptitle(fig, title)
    fig.tight_layout(rect=(0, (0.35 + 0.28 * legend_rows) / fig.get_figheight(), 1, top))
    return fig


def penalty_maps(dmap, panels, path, title):
    """Fig. 3: one panel per (name, (C, M) penalty grid in %); grey = not scored (NaN). No panel: no figure (None)."""
    if not panels:
        return None
    return save(penalty_figure(dmap, panels, title), path)
