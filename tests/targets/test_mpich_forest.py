"""A layout forest as MPICH selection JSON: comm_avg_ppn<=P blocks outermost, read back under csel's own matching
(src/mpi/coll/src/csel.c: node-aware and comm_size <= P x nodes) exactly as `quadsel query` answers."""

import json

from hypothesis import given, settings, strategies as st

from quadsel.decision.decision_function import query_ppn
from quadsel.targets import emit, mpich_json
from quadsel.json_lines import parse_json_lines
from quadsel.targets.library_call import CallModel

from layout_helpers import forest_of, layout_rows, probe_sizes

NAMES = ("binomial", "scatter_ring_allgather", "tree", "pipelined_tree", "nb")


def document(forest):
    text = emit("mpich-json", [forest], mpich_base=None)
    doc = parse_json_lines(text, "forest.json")
    assert mpich_json.check(doc, "forest.json") == []          # what MPICH's parser would abort on: nothing
    return text, doc


def test_blocks_are_outermost_and_the_last_is_any():
    forest = forest_of(layout_rows(4, ppns=(1, 2, 8), names=NAMES))
    text, _ = document(forest)
    intra = json.loads(text)["collective=bcast"]["comm_type=intra"]
    assert list(intra) == [f"comm_avg_ppn<={m.ppn}" for m in forest.layers[:-1]] + ["comm_avg_ppn=any"]
    assert all(next(iter(block)).startswith("comm_size") for block in intra.values())


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10 ** 6), st.sampled_from([(1, 2, 4), (1, 8), (4,), (2, 3, 16)]),
       st.sampled_from([(1, 2, 4), (1, 3), (2, 16)]), st.sampled_from([None, 1, 2]))
def test_reader_matches_the_forest_query_at_every_measured_layout_and_boundary(seed, ppns, nodes, depth):
    forest = forest_of(layout_rows(seed, ppns=ppns, nodes=nodes, names=NAMES), max_depth=depth)
    _, doc = document(forest)
    node_counts = sorted({n + d for n in nodes for d in (-1, 0, 1) if n + d >= 1} | {64})
    msgs = set()
    comms = set()
    for member in forest.layers:
        msgs |= set(probe_sizes(member.tree.msg_sizes, int(member.tree.msg_sizes[-1])))
        comms |= set(probe_sizes(member.tree.comm_sizes, int(member.tree.comm_sizes[-1])))
        comms |= {n * b + d for n in node_counts for b in forest.bounds.tolist() for d in (-1, 0, 1)}
    msgs = sorted(m for m in msgs if m < 2 ** 31)          # csel's int thresholds
    checked = 0
    for n in node_counts:
        for c in sorted(comms):
            if c < max(n, 1):
                continue                                    # a node holds at least one rank
            p = query_ppn(c, nodes=n)
            want = forest.methods_at([p] * len(msgs), [c] * len(msgs), msgs)
            for m, method in zip(msgs, want):
                found = mpich_json.lookup(doc, "bcast", c, m, CallModel(count=m, type_size=1, nodes=n))
                assert found is not None and mpich_json.label("bcast", found[0]) == method.algorithm, (n, c, m)
                checked += 1
    assert checked > 100


def test_a_communicator_without_node_information_takes_the_last_block():
    forest = forest_of(layout_rows(6, ppns=(1, 4), names=NAMES), max_depth=0)
    _, doc = document(forest)
    last = forest.layers[-1].tree.query(8, 64)
    found = mpich_json.lookup(doc, "bcast", 8, 64, CallModel(count=64, type_size=1, one_node=False))
    assert mpich_json.label("bcast", found[0]) == last.algorithm
