"""The rules every writer prints (targets/layout_rules.py): one RuleList per layer of the decision function, keyed by
its ppn bound, and a function without the layout key as one layer -- so a writer prints the layout level without
code of its own for it."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_function import DecisionFunction
from quadsel.decision.decision_map import build_decision_map
from quadsel.targets.layout_rules import layout_rules

from helpers import random_table
from layout_helpers import forest_of, layout_rows, probe_sizes


def toy_writer(fn):
    """A writer of a format with a ppn level: {bound or "any": [(comm lo, [(msg lo, label)])]} -- nothing in it
    knows whether the function has the layout key."""
    rules = layout_rules(fn)
    last = len(rules.layers) - 1
    return {("any" if i == last else ppn): [(c.comm_size, [(r.msg_size, r.method.label) for r in c.msg_rules])
                                             for c in rl.comm_rules]
            for i, (ppn, rl) in enumerate(rules.layers)}


def answer(doc, ppn, comm, msg):
    """What a library reading the toy format answers: the first bound >= ppn, else `any`; then the floor rules."""
    key = next((b for b in doc if b != "any" and ppn <= b), "any")
    comm_rules = doc[key]
    rules = [r for lo, r in comm_rules if lo <= comm] or [comm_rules[0][1]]
    msgs = rules[-1]
    return ([label for lo, label in msgs if lo <= msg] or [msgs[0][1]])[-1]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10 ** 6), st.booleans())
def test_the_toy_writer_answers_as_the_function_with_and_without_the_layout_key(seed, layered):
    if layered:
        fn = forest_of(layout_rows(seed % 1000, ppns=(1, 2, 4), nodes=(1, 2, 3), n_msg=4))
    else:
        rows, _, _ = random_table(np.random.default_rng(seed), 4, 5, 3)
        fn = DecisionFunction.of(build_size_tree(build_decision_map(rows), outside="extrapolate"))
    doc = toy_writer(fn)
    assert len(doc) == len(fn.layers) and fn.has_layout == (len(doc) > 1 or fn.layers[0].ppn is not None)
    comms = probe_sizes(sorted({int(c) for t in fn.size_trees for c in t.comm_sizes}), 64)
    msgs = probe_sizes(sorted({int(m) for t in fn.size_trees for m in t.msg_sizes}), 1 << 20)
    for ppn in (1, 2, 3, 4, 5, 64):
        for comm in comms:
            if comm < 1:
                continue
            for msg in msgs:
                assert answer(doc, ppn, comm, msg) == fn.query(comm, msg, ppn=ppn).label, (ppn, comm, msg)


def test_the_toy_writer_answers_as_a_forest_whose_members_are_bounded():
    """Members extrapolated up to a bound (decision/reach.py): the rules hand back from the bound on, as the query."""
    fn = forest_of(layout_rows(2, ppns=(1, 2, 4), default=True, n_msg=8), split="measured", between="least-bad",
                   leaf_rule="penalty", keep_default=True, tolerance="ci", max_leaves="auto", outside="auto",
                   bound_outside=True)
    assert any(t.options.outside_reach for t in fn.size_trees)
    doc = toy_writer(fn)
    comms = sorted({int(v) + d for t in fn.size_trees for v in t.comm_axis.lo for d in (-1, 0, 1) if v + d >= 1})
    msgs = sorted({int(v) + d for t in fn.size_trees for v in t.msg_axis.lo for d in (-1, 0, 1) if v + d >= 0})
    for ppn in (1, 2, 3, 4, 5):
        for comm in comms + [10 ** 6]:
            for msg in msgs + [1 << 40]:
                assert answer(doc, ppn, comm, msg) == fn.query(comm, msg, ppn=ppn).label, (ppn, comm, msg)


def test_a_size_tree_is_taken_as_a_function_without_the_layout_key():
    rows, _, _ = random_table(np.random.default_rng(1), 3, 4, 2)
    tree = build_size_tree(build_decision_map(rows))
    rules = layout_rules(tree)
    assert not rules.has_layout and [ppn for ppn, _ in rules.layers] == [None]
    assert rules.collapsed() is rules.layers[0][1] and rules.header_lines() == [] and rules.lost_lines() == []


@pytest.mark.parametrize("min_nodes", [1, 2])
def test_collapsed_layers_name_what_they_cannot_keep(min_nodes):
    fn = forest_of(layout_rows(7, ppns=(1, 4), nodes=(1, 2, 4), n_msg=3))
    rules = layout_rules(fn)
    lines = rules.header_lines(min_nodes)
    assert rules.has_layout and len(lines) == 2 and lines[0].startswith("bcast: layout forest collapsed")
    assert rules.lost_lines(min_nodes) == lines[1:]
