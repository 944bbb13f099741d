"""The layouts of an ingest table: its rows grouped by ranks per node, never pooled (decision/layouts.py builds
one tree per group)."""

from ..errors import QuadselError


def layout_groups(rows):
    """{ppn: rows of that ppn} of an ingest table, or None when no row has a layout (the 2-D build, unchanged).

    A table mixing rows with and without a layout is refused in one line: pooling them would merge layouts."""
    if getattr(rows, "layouts", None) is False:      # a table that says it has none is not read row by row
        return None
    with_layout = without = None
    groups = {}
    for m in rows:
        if m.ppn is None:
            without = without or m
        else:
            with_layout = with_layout or m
            groups.setdefault(m.ppn, []).append(m)
    if with_layout is None:
        return None
    if without is not None:
        raise QuadselError(f"{without.source.split(' ')[0]} has no layout and {with_layout.source.split(' ')[0]} has "
                           f"one ({with_layout.nodes} nodes x {with_layout.ppn} ppn): layouts are never pooled; give "
                           "--layout NODESxPPN for files without nodes/ppn columns (docs/formats-input.md)")
    return dict(sorted(groups.items()))
