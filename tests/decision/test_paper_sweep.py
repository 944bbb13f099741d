import math
from pathlib import Path

import numpy as np
import pytest

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.decision.padding import padded_size
from quadsel.decision.paper_sweep import paper_functions
from quadsel.errors import OptionError
from quadsel.ingest import read_measurements

from helpers import table_from_cube

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def generated_map(seed, n_comm, n_msg, n_methods, holes=0.0):
    """A map with crossings (each method best over a band of message sizes), noise and unmeasured points."""
    rng = np.random.default_rng(seed)
    msg = np.log2(np.arange(1, n_msg + 1))[None, :, None]
    comm = np.arange(1, n_comm + 1)[:, None, None]
    slope = rng.uniform(0.5, 2.0, size=n_methods)
    cost = (rng.uniform(1, 5, size=n_methods) + slope * msg + rng.uniform(0, 0.3, size=n_methods) * comm) \
        * rng.lognormal(0, 0.05, size=(n_comm, n_msg, n_methods))
    cost[rng.uniform(size=cost.shape) < holes] = np.nan
    methods = [(str(k + 1), 0) for k in range(n_methods)]
    return build_decision_map(table_from_cube(cost, 2 * np.arange(1, n_comm + 1), 2 ** np.arange(n_msg), methods))


def maps():
    yield from ((path.name, build_decision_map(read_measurements([str(path)])))
                for path in sorted(EXAMPLES.glob("*.csv")))
    yield "generated 13x37", generated_map(1, 13, 37, 5)
    yield "generated 40x9, holes", generated_map(2, 40, 9, 7, holes=0.3)
    yield "generated 64x64", generated_map(3, 64, 64, 3)


def same_function(a, b):
    assert a.options == b.options and a.paper_stats == b.paper_stats
    assert a.methods == b.methods
    ja, jb = a.to_json(), b.to_json()
    ja["provenance"].pop("created"), jb["provenance"].pop("created")
    assert ja == jb


@pytest.mark.parametrize("name,dmap", list(maps()), ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.parametrize("pad_mode,leaf_rule", [("spread", "majority"), ("edge", "penalty")])
def test_every_depth_and_threshold_is_the_tree_built_alone(name, dmap, pad_mode, leaf_rule):
    k = int(math.log2(padded_size(*dmap.shape)))
    constraints = [(d, 1.0) for d in range(0, k + 2)] + [(None, round(0.05 * i, 2)) for i in range(1, 21)] \
        + [(2, 0.6), (None, 1.0)]
    fns = paper_functions(dmap, constraints, pad_mode, leaf_rule)
    assert len(fns) == len(constraints)
    for (max_depth, threshold), fn in zip(constraints, fns):
        same_function(fn, build_size_tree(dmap, max_depth=max_depth, accuracy_threshold=threshold,
                                                  pad_mode=pad_mode, leaf_rule=leaf_rule))


def test_a_bad_constraint_is_refused_before_anything_is_built():
    with pytest.raises(OptionError):
        paper_functions(generated_map(4, 3, 3, 2), [(1, 1.0), (None, 0.0)])
