"""The paper's figures 2–6 as PNG files, plus penalty vs size of every selector (optional extra `figures`).

- decision maps (Fig. 2/4): communicator size × message size, one colour per method, for the exact tree and
  each depth-limited (and threshold-limited) tree; each measured point is one cell, centred on its sizes;
- penalty maps (Fig. 3): the penalty class of every measured point (white < 5 %, yellow 10–25 %, red ≥ 50 %),
  for the restricted trees, for the comparators and, per held-out split, on the held-out points;
- threshold sweep (Fig. 5): mean depth and mean penalty against the accuracy threshold;
- penalty vs depth (Fig. 6): depth-limited against threshold-limited trees;
- penalty vs size: every selector's mean penalty against its size (leaves, rules, parameters).

matplotlib is imported lazily with the Agg backend, so quadsel works without it.
"""

import os

import numpy as np

from ..output import make_folder
from .comparators import choice_on
from .figure_maps import decision_maps, panel_grid, penalty_maps, pyplot, save
from .penalty import default_penalty_grid, penalty_grid, summarize

# Fig. 3 classes: bounds in %, colours; below 0 only the library default can be (faster than every method).
FIG_THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 21))


def threshold_sweep(rows, path, title):
    """Fig. 5: mean depth (left axis) and mean penalty (right axis) against the accuracy threshold."""
    plt = pyplot()
    t = [r["threshold"] for r in rows]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ax.plot(t, [r["depth_mean"] for r in rows], "o-", color="tab:blue", label="mean depth")
    ax.set_xlabel("accuracy threshold")
    ax.set_ylabel("mean quadtree depth", color="tab:blue")
    ax.tick_params(axis="y", colors="tab:blue")
    ax.set_ylim(bottom=0)
    other = ax.twinx()
    other.plot(t, [r["penalty_mean"] for r in rows], "s--", color="tab:red", label="mean penalty")
    other.set_ylabel("mean penalty [%]", color="tab:red")
    other.tick_params(axis="y", colors="tab:red")
    other.set_ylim(bottom=0)
    ax.set_xlim(0, 1.02)
    ax.grid(alpha=0.3)
    lines = ax.get_lines() + other.get_lines()
    ax.legend(lines, [l.get_label() for l in lines], loc="center left", fontsize=9)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return save(fig, path)


def penalty_vs_depth(depth_rows, threshold_rows, path, title):
    """Fig. 6: mean penalty against mean depth, depth-limited vs threshold-limited trees."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.plot([r["depth_mean"] for r in depth_rows], [r["penalty_mean"] for r in depth_rows], "o-",
            color="tab:blue", label="max-depth limited")
    for r in depth_rows:
        ax.annotate(r["label"], (r["depth_mean"], r["penalty_mean"]), textcoords="offset points",
                    xytext=(4, 5), fontsize=8, color="tab:blue")
    thr = sorted(threshold_rows, key=lambda r: r["depth_mean"])
    ax.plot([r["depth_mean"] for r in thr], [r["penalty_mean"] for r in thr], "s--", color="tab:orange",
            markerfacecolor="none", label="accuracy-threshold limited")
    ax.set_xlabel("mean quadtree depth")
    ax.set_ylabel("mean penalty [%]")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return save(fig, path)


SERIES = (("quadsel", "max_leaves=", "D-", "tab:red", "quadsel, leaf budgets (cuts at measured sizes)"),
          ("quadsel", "max_leaves=auto", "*", "darkred", "quadsel default build"),
          ("tree", None, "X", "black", "given tree"),
          ("quadtree", "max_depth", "o-", "tab:blue", "paper quadtree, max depth"),
          ("quadtree", "threshold", "s", "tab:cyan", "paper quadtree, threshold"),
          ("cart", None, "^-", "tab:green", "CART (same leaf budget)"),
          ("runlength", None, "D", "tab:purple", "run-length table (rules)"),
          ("model", None, "P", "tab:brown", "model (parameters)"),
          ("single", None, "*", "tab:gray", "single best method"))


def deployed_size(row):
    """What a selector costs where it is deployed: the leaf assignments of its C (trees, CART), else the rules
    of its rules file (run-length table), else its own size (model parameters, one method)."""
    return row.get("assignments") or row.get("rules") or row.get("size")


def penalty_vs_size(groups, path, title):
    """Mean penalty against deployed size (log) of every selector, a Pareto view; one panel per split; the
    default as a line.

    The y-range follows the trees, the run-length table and the single method; a model point or a default
    far above them is drawn at the top edge with its value, so it cannot squash the curves."""
    from matplotlib.ticker import FuncFormatter
    plt = pyplot()
    fig, axes, ncols = panel_grid(plt, len(groups), ncols=2, width=5.6, height=4.0, bottom_space=0.5)
    for i, (ax, (name, rows)) in enumerate(zip(axes, groups)):
        scored = [r for r in rows if r.get("penalty_mean") is not None]
        core = [r["penalty_mean"] for r in scored if r["method"] in ("quadsel", "quadtree", "cart", "runlength",
                                                                      "single")]
        every = [r["penalty_mean"] for r in scored]
        low, high = min([0.0] + every), max([1.0] + core)
        if max(every, default=0.0) <= 3.0 * high:        # nothing far above: show everything
            high = max([high] + every)
        top = high + 0.12 * (high - low)
        for kind, flavour, style, colour, label in SERIES:
            pick = [r for r in scored if r["method"] == kind and r.get("size")
                    and (flavour is None or r["constraint"].startswith(flavour) or
                         (flavour in ("max_depth", "max_leaves=") and r["constraint"] == "exact"))]
            if kind == "quadtree" and flavour == "max_depth":
                pick = [r for r in pick if r["constraint"] != "exact"] or pick
            if flavour == "max_leaves=":
                pick = [r for r in pick if not r["constraint"].startswith("max_leaves=auto")]
            pick = sorted(pick, key=deployed_size)
            if not pick:
                continue
            y = [min(r["penalty_mean"], top) for r in pick]
            ax.plot([deployed_size(r) for r in pick], y, style, color=colour, label=label,
                    markersize=13 if style == "*" else 6, zorder=4 if style == "*" else 3, clip_on=False,
                    markerfacecolor="none" if style == "s" else colour)
            for r in pick:
                if r["penalty_mean"] > top:
                    ax.annotate(f"{r['penalty_mean']:.0f} % ↑", (deployed_size(r), top), textcoords="offset points",
                                xytext=(6, -10), fontsize=8, color=colour)
        default = next((r for r in scored if r["method"] == "default"), None)
        if default is not None:
            value = default["penalty_mean"]
            if value <= top:
                ax.axhline(value, color="tab:red", linestyle=":", label="library default (measured)")
                ax.annotate(f"default {value:.1f} %", (1.0, value), xycoords=("axes fraction", "data"),
                            xytext=(-4, 3), textcoords="offset points", ha="right", fontsize=8, color="tab:red")
            else:     # above the range: said above the panel, the line left out
                ax.plot([], [], color="tab:red", linestyle=":", label="library default (measured)")
                ax.annotate(f"default {value:.1f} % (above)", (1.0, 1.0), xycoords="axes fraction",
                            xytext=(0, 3), textcoords="offset points", ha="right", va="bottom", fontsize=8,
                            color="tab:red")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_ylim(low - 0.04 * (high - low) if low < 0 else 0, top)
        ax.set_xlabel("deployed size (C leaf assignments / rules-file rules / model parameters)")
        if i % ncols == 0:
            ax.set_ylabel("mean penalty [%]")
        ax.grid(alpha=0.3, which="both")
        ax.set_title(name, fontsize=9)
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0.7 / fig.get_figheight(), 1, 0.95))
    return save(fig, path)


# -- one run's figures ----------------------------------------------------------------------------
def _mean_text(grid, dmap, mask=None):
    s = summarize(grid, dmap, mask)
    return "-" if s.points == 0 else f"{s.mean:.1f} %"


def _label(selector):
    if selector.kind == "quadsel":
        c = selector.constraint
        if c.startswith("max_leaves=auto"):
            return "default build"
        return "cuts at measured sizes, exact" if c == "exact" else c.replace("max_leaves=", "leaf budget ")
    if selector.kind == "quadtree":
        c = selector.constraint
        if c == "exact":
            return "exact tree"
        return c.replace("max_depth=", "max depth ").replace("threshold=", "threshold ")
    return {"single": "single best", "runlength": "run-length table", "model": "analytical model"}.get(
        selector.kind, f"CART {selector.constraint.replace('max_leaf_nodes=', '≤ ')} leaves")


def write_figures(report, directory):
    """Write every figure of `report` into `directory`; return [(caption, path)]."""
    from .report import tree_row
    from ..decision.builder import build_size_tree
    dmap = report.dmap
    make_folder(directory)   # the folder itself, never missing parents (quadsel.output)
    stem = os.path.join(directory, dmap.collective)
    trees = [s for s in report.selectors if s.kind == "quadtree"]
    depth = [s for s in trees if s.fn.max_depth is not None]
    exact = next(s for s in trees if s.constraint == "exact")
    restricted = [s for s in depth if s.size != exact.size or
                  not np.array_equal(s.fn.choice_grid(), exact.fn.choice_grid())]
    thresholds = [s for s in trees if s.fn.accuracy_threshold < 1.0]
    out = []

    def tree_panel(s):
        grid = choice_on(s, dmap)
        leaves = "1 leaf" if s.size == 1 else f"{s.size} leaves"
        return f"{_label(s)}: {leaves}, penalty {_mean_text(penalty_grid(dmap, grid), dmap)}", grid

    quadsel = [s for s in report.selectors if s.kind == "quadsel"]
    if quadsel:
        shown = [quadsel[0]] + [s for s in quadsel[1:] if s.size != quadsel[0].size][-5:]
        out.append(("Decision maps of the default build and of the same builder at other leaf budgets",
                    decision_maps(dmap, [tree_panel(s) for s in shown], f"{stem}-decision-maps-quadsel.png",
                                  f"{dmap.collective}: the default build and cuts at measured sizes")))
    out.append(("Decision maps of the exact and the depth-limited trees (Fig. 2)",
                decision_maps(dmap, [tree_panel(exact)] + [tree_panel(s) for s in restricted],
                              f"{stem}-decision-maps-depth.png",
                              f"{dmap.collective}: exact and max-depth limited quadtree decision maps")))
    distinct, seen = [], set()
    for s in thresholds:
        if s.size not in seen:
            seen.add(s.size)
            distinct.append(s)
    if distinct:
        out.append(("Decision maps of the threshold-limited trees (Fig. 4)",
                    decision_maps(dmap, [tree_panel(s) for s in distinct[-6:]],
                                  f"{stem}-decision-maps-threshold.png",
                                  f"{dmap.collective}: accuracy-threshold limited quadtree decision maps")))

    def penalty_panel(s, mask=None):
        grid = penalty_grid(dmap, choice_on(s, dmap))
        if mask is not None:
            grid = np.where(mask, grid, np.nan)
        return f"{_label(s)} ({s.size}): mean {_mean_text(grid, dmap, mask)}", grid

    panels = [penalty_panel(s) for s in restricted]
    default_grid = default_penalty_grid(dmap)
    if default_grid is not None:
        panels.append((f"library default: mean {_mean_text(default_grid, dmap)}", default_grid))
    out.append(("Penalty maps of the depth-limited trees and the default (Fig. 3)",
                penalty_maps(dmap, panels, f"{stem}-penalty-maps-depth.png",
                             f"{dmap.collective}: penalty of the max-depth limited trees (all measured points)")))

    reference = next((s for s in depth if s.fn.max_depth == 3), depth[len(depth) // 2] if depth else exact)

    def comparator_panels(selectors, mask=None, training=False):
        """Exact tree, the reference restricted tree, CART with its leaf budget, run-length, model, single best."""
        pick = lambda kind, constraint=None: [s for s in selectors if s.kind == kind and  # noqa: E731
                                              (constraint is None or s.constraint == constraint)]
        ref = pick("quadtree", reference.constraint)
        panels = [penalty_panel(s, mask) for s in pick("quadsel")[:1]]
        panels += [penalty_panel(s, mask) for s in ([] if training else pick("quadtree", "exact")) + ref]
        if ref:
            carts = pick("cart")
            same = [s for s in carts if s.budget == ref[0].size] or [s for s in carts if s.budget <= ref[0].size][-1:]
            for cart in same:
                name, grid = penalty_panel(cart, mask)
                panels.append((f"CART, budget {ref[0].size} leaves ({cart.size})" + name[name.index(":"):], grid))
        chosen = ([] if training else pick("runlength")) + pick("model") + pick("single")
        panels += [penalty_panel(s, mask) for s in chosen]
        if default_grid is not None:
            grid = default_grid if mask is None else np.where(mask, default_grid, np.nan)
            panels.append((f"library default: mean {_mean_text(grid, dmap, mask)}", grid))
        return panels

    def decision_panel(s, name=None):
        grid = choice_on(s, dmap)
        return f"{name or _label(s)}: size {s.size}, penalty {_mean_text(penalty_grid(dmap, grid), dmap)}", grid

    carts = [s for s in report.selectors if s.kind == "cart" and s.budget <= reference.size][-1:]
    others = [s for kind in ("model", "single") for s in report.selectors if s.kind == kind]
    out.append(("Decision maps of the comparators: how each rule splits the space",
                decision_maps(dmap, [decision_panel(s) for s in quadsel[:1]] + [decision_panel(reference)] +
                              [decision_panel(c, f"CART, budget {reference.size} leaves") for c in carts] +
                              [decision_panel(s) for s in others],
                              f"{stem}-decision-maps-comparators.png",
                              f"{dmap.collective}: decisions of the comparators (size = leaves / parameters)")))

    comp = comparator_panels(report.selectors, training=True)
    out.append(("Penalty maps of the comparators (all measured points)",
                penalty_maps(dmap, comp, f"{stem}-penalty-maps-comparators.png",
                             f"{dmap.collective}: penalty of the comparators (all measured points)")))
    for holdout, test, _, selectors in report.holdouts:
        panels = comparator_panels(selectors, test)
        safe = holdout.name.replace(":", "-").replace(".", "")
        out.append((f"Penalty maps on the held-out points ({holdout.name}: {holdout.describe()})",
                    penalty_maps(dmap, panels, f"{stem}-penalty-maps-holdout-{safe}.png",
                                 f"{dmap.collective}: built without, scored on the held-out points "
                                 f"({holdout.name}; grey = training points)")))

    sweep = []
    for t in FIG_THRESHOLDS:
        fn = build_size_tree(dmap, accuracy_threshold=t, pad_mode=report.pad_mode, leaf_rule=report.leaf_rule)
        row = tree_row(fn, dmap)
        row["threshold"] = t
        sweep.append(row)
    out.append(("Mean depth and mean penalty against the accuracy threshold (Fig. 5)",
                threshold_sweep(sweep, f"{stem}-threshold-sweep.png",
                                f"{dmap.collective}: effect of the accuracy threshold")))
    depth_rows = []
    for s in depth:
        row = tree_row(s.fn, dmap)
        row["label"] = f"d={s.fn.max_depth}"
        depth_rows.append(row)
    out.append(("Mean penalty against mean depth, depth- vs threshold-limited (Fig. 6)",
                penalty_vs_depth(depth_rows, sweep, f"{stem}-penalty-vs-depth.png",
                                 f"{dmap.collective}: max-depth vs accuracy-threshold limited trees")))

    groups = [("all measured points", [r for r in report.rows if r.get("holdout") is None])]
    groups += [(f"held out: {h.name}", [r for r in report.rows if r.get("holdout") == h.name])
               for h, _, _, _ in report.holdouts]
    out.append(("Mean penalty against size for every selector",
                penalty_vs_size(groups, f"{stem}-penalty-vs-size.png",
                                f"{dmap.collective}: mean penalty vs deployed size (Pareto view)")))
    out = [(caption, path) for caption, path in out if path]   # a figure with no panel is not drawn
    report.figures = [path for _, path in out]
    return out
