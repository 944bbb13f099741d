"""Layouts across hosts without MPI: --layouts parsing, the default set, the node-major placement of NodeGroups, and
the CSV with nodes/ppn columns (keys ending in the layout, resumed as such, never mixed with a one-host file)."""

import pytest
from hypothesis import given, strategies as st

from quadsel.errors import QuadselError
from quadsel.measure import output
from quadsel.measure.layouts import NodeGroups, default_layouts


def powers_and(top):
    return {v for v in (1, 2, 4, 8, 16, 32, 64) if v < top} | {top}


@given(st.integers(1, 40), st.integers(1, 40))
def test_default_layouts_are_powers_of_two_or_the_maximum(nodes, ppn):
    got = default_layouts(nodes, ppn)
    expected = {(n, p) for n in powers_and(nodes) for p in powers_and(ppn) if n * p >= 2}
    assert set(got) == expected and len(got) == len(expected)
    assert [n * p for n, p in got] == sorted(n * p for n, p in got)
    assert set(default_layouts(nodes, ppn, comm_sizes=[2, 4])) == {lp for lp in expected if lp[0] * lp[1] in (2, 4)}


def groups_of(sizes):
    """NodeGroups of a job whose node i holds sizes[i] ranks, ranks filled node by node; one per rank."""
    out, leaders = [], []
    for node, size in enumerate(sizes):
        leaders.append(sum(sizes[:node]))
        for local in range(size):
            g = object.__new__(NodeGroups)
            g.node, g.local_rank, g.sizes, g.count = node, local, list(sizes), len(sizes)
            g.leaders, g.hostnames = leaders, [f"n{i}" for i in range(len(sizes))]
            out.append(g)
    return out


@given(st.lists(st.integers(1, 6), min_size=1, max_size=6), st.data())
def test_a_layout_takes_the_first_ppn_ranks_of_the_first_nodes_in_node_major_order(sizes, data):
    ranks = groups_of(sizes)
    nodes = data.draw(st.integers(1, len(sizes)))
    ppn = data.draw(st.integers(1, min(sizes[:nodes])))
    ranks[0].check([(nodes, ppn)])
    places = [(g.node, g.local_rank, *g.place((nodes, ppn))) for g in ranks]
    members = sorted((order, node, local) for node, local, member, order in places if member)
    assert [order for order, _, _ in members] == list(range(nodes * ppn))     # ranks 0..n-1 of the layout
    assert all(node == order // ppn and local == order % ppn for order, node, local in members)
    assert ranks[0].hosts((nodes, ppn)) == [f"n{i}" for i in range(nodes)]
    with pytest.raises(QuadselError):
        ranks[0].check([(len(sizes) + 1, 1)])


def test_layout_rows_are_written_and_resumed_with_their_layout(tmp_path):
    path = tmp_path / "m.csv"
    results = output.ResultFile(path, resume=False, layouts=True)
    results.append(("bcast", "6", 0, 2, 8, 2, 1), 12.0, 1.0, 10)
    results.append(("bcast", "6", 0, 2, 8, 1, 2), 2.0, 0.1, 10)
    results.close()
    lines = path.read_text().splitlines()
    assert lines == ["collective,algorithm,segsize,nodes,ppn,comm_size,msg_size,time_us,stddev_us,reps",
                     "bcast,6,0,2,1,2,8,12.000,1.000,10", "bcast,6,0,1,2,2,8,2.000,0.100,10"]
    again = output.ResultFile(path, resume=True, layouts=True)
    assert again.done == {("bcast", "6", 0, 2, 8, 2, 1), ("bcast", "6", 0, 2, 8, 1, 2)}
    assert again.values[("bcast", "6", 0, 2, 8, 2, 1)] == (12.0, 1.0, 10)
    again.close()
    with pytest.raises(QuadselError, match="nodes/ppn"):
        output.ResultFile(path, resume=True, layouts=False)
