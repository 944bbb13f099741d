"""Random measurements with layouts and their forests (tests of decision/layouts.py and its targets)."""

import numpy as np

from quadsel.decision.builder import build_size_tree
from quadsel.decision.layouts import build_from_groups, layout_groups
from quadsel.ingest.table import Measurement


def layout_rows(seed, ppns=(1, 2, 4), nodes=(1, 2, 4), n_msg=5, names=("1", "6", "8"), default=False):
    """Rows of a (nodes x ppn) sweep whose best method changes with the layout (random costs)."""
    rng = np.random.default_rng(seed)
    msgs = sorted(rng.choice(np.arange(0, 1 << 20), size=n_msg, replace=False).tolist())
    rows = []
    for p in ppns:
        for n in nodes:
            for m in msgs:
                for name in names + (("default",) if default else ()):
                    rows.append(Measurement("bcast", name, 0, n * p, int(m), float(rng.uniform(1, 100)),
                                            source=f"x.csv:{len(rows) + 2}", nodes=n, ppn=p))
    return rows


def forest_of(rows, **options):
    options.setdefault("outside", "extrapolate")
    return build_from_groups(layout_groups(rows), "bcast", lambda d: build_size_tree(d, **options))[0]


def han_forest(sizes=(1024, 65536)):
    """bcast on 2x1, 1x2 and 2x2 where the library default (coll/han's across nodes, as measure times it) is fastest
    at the first size on 2+ nodes and scatter_allgather (8) at the others, binomial (6) on one node: a forest that
    keeps the default (coll/han) in one region and a coll/tuned algorithm in the other (tests of verify/han.py)."""
    rows = []
    for nodes, ppn in ((2, 1), (1, 2), (2, 2)):
        for msg in sizes:
            fast = "6" if nodes == 1 else ("default" if msg == sizes[0] else "8")
            for name in ("default", "6", "8"):
                rows.append(Measurement("bcast", name, 0, nodes * ppn, msg, 1.0 if name == fast else 5.0,
                                        source=f"x.csv:{len(rows) + 2}", nodes=nodes, ppn=ppn))
    return forest_of(rows, split="measured", keep_default=True)


def probe_sizes(values, top):
    """Every measured size, its neighbours, 0/1 and beyond the largest."""
    return sorted({0, 1, top * 2 + 1} | {int(v) + d for v in values for d in (-1, 0, 1) if v + d >= 0})
