"""The timemap (after Bongo et al., Fig. 2): per rank, where the mean call goes, one panel per configuration.

x = 0 is the call's last arrival (the mean over calls of the latest entry): a rank's bar starts at its mean
entry (x < 0: it arrived early, its arrival wait), is orange while it waits inside the call for the ranks it
depends on in the algorithm's tree, blue while the data moves (transfer) and ends at its mean exit. Ranks are
in tree order (depth-first from the root). The dashed line is the mean first exit, the red line joins the
exits along the commonest critical path. matplotlib is imported lazily (optional extra `figures`).
"""

from ..errors import printable
from ..libraries import trees
from .breakdown import algorithm_title
from ..evaluate.figure_maps import pyplot, save


def rank_order(shape, n):
    """Ranks depth-first from the root (children in the library's order), or 0..n-1 without a tree."""
    if shape is None:
        return list(range(n))
    kids = trees.children(shape.parents)
    order, stack = [], [shape.root]
    while stack:
        v = stack.pop()
        order.append(v)
        stack += reversed(kids[v])
    return order


def bars(b):
    """{rank: (entry, gate, exit)} mean µs relative to the mean last arrival."""
    c = b.config
    last = c.entry.max(axis=1).mean()
    out = {}
    for r in b.rows:
        entry = float(c.entry[:, r.rank].mean() - last)
        out[r.rank] = (entry, entry + r.means["dependency_wait"], entry + r.means["inside"])
    return out


def write_timemap(results, path):
    plt = pyplot()
    k = len(results)
    n = max(b.config.ranks for b in results)
    fig, axes = plt.subplots(1, k, figsize=(4.2 * k + 1.0, 1.8 + 0.45 * n), sharex=True, squeeze=False)
    all_x = []
    for ax, b in zip(axes[0], results):
        c = b.config
        spans = bars(b)
        order = rank_order(c.shape, c.ranks)
        depth = trees.depths(c.shape.parents) if c.shape else [None] * c.ranks
        y = {r: i for i, r in enumerate(order)}
        for r in order:
            entry, gate, exit_ = spans[r]
            all_x += [entry, exit_]
            ax.plot([entry, 0], [y[r]] * 2, color="0.8", lw=1.5, zorder=1)
            ax.barh(y[r], gate - entry, left=entry, height=0.6, color="tab:orange", zorder=2,
                    label="dependency wait" if r == order[0] else None)
            ax.barh(y[r], exit_ - gate, left=gate, height=0.6, color="tab:blue", zorder=2,
                    label="transfer" if r == order[0] else None)
        first_exit = float(c.exit.min(axis=1).mean() - c.entry.max(axis=1).mean())
        ax.axvline(first_exit, color="0.3", ls="--", lw=1, label="first exit")
        ax.axvline(0, color="0.5", lw=0.8)
        if b.critical["paths"]:
            path_ranks = b.critical["paths"][0]["ranks"]
            ax.plot([spans[r][2] for r in path_ranks], [y[r] for r in path_ranks], "o-", color="tab:red", lw=1.2,
                    ms=3, zorder=3, label="critical path")
        ax.set_yticks(range(len(order)))
        ax.set_yticklabels([f"{r}" + ("" if depth[r] is None else f" (d{depth[r]})") for r in order])
        ax.invert_yaxis()
        ax.set_title(f"{c.collective} {printable(algorithm_title(c))}\n{c.msg_size} B, "
                     f"{c.ranks} ranks, span {b.span_us:.0f} µs", fontsize=9)
        ax.set_xlabel("µs from the last arrival (mean over calls)")
    axes[0][0].set_ylabel("rank (depth in the tree)")
    if all_x:
        lo, hi = min(all_x), max(all_x)
        pad = 0.05 * (hi - lo or 1.0)
        axes[0][0].set_xlim(lo - pad, hi + pad)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=4, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return save(fig, path)
