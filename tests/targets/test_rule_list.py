import dataclasses

from hypothesis import given, settings, strategies as st

from quadsel.targets.rule_list import build_rule_list

from helpers import probe_points, random_fn, tree_choosing


@given(st.integers(0, 10**6), st.integers(1, 8), st.integers(1, 10), st.integers(1, 5),
       st.sampled_from([None, 0, 1, 2, 3]), st.sampled_from(["spread", "edge"]))
@settings(max_examples=60, deadline=None)
def test_rule_list_answers_like_the_decision_function(seed, n_comm, n_msg, n_methods, max_depth, pad_mode):
    fn = random_fn(seed, n_comm, n_msg, n_methods, max_depth, pad_mode)
    rl = build_rule_list(fn)
    for comm, msg in probe_points(fn):
        assert rl.lookup(comm, msg) == fn.query(comm, msg), (comm, msg)


@given(st.integers(0, 10**6), st.integers(1, 8), st.integers(1, 10), st.integers(1, 4))
@settings(max_examples=40, deadline=None)
def test_rules_start_at_zero_and_are_merged(seed, n_comm, n_msg, n_methods):
    fn = random_fn(seed, n_comm, n_msg, n_methods, None)
    rl = build_rule_list(fn)
    keys = [c.comm_size for c in rl.comm_rules]
    assert keys == sorted(set(keys)) and keys[0] == int(fn.comm_sizes[0])
    for a, b in zip(rl.comm_rules, rl.comm_rules[1:]):
        assert a.msg_rules != b.msg_rules                       # identical neighbours are merged
    for comm in rl.comm_rules:
        assert comm.msg_rules[0].msg_size == 0                  # Open MPI ignores a file whose first rule is not 0
        sizes = [r.msg_size for r in comm.msg_rules]
        assert sizes == sorted(set(sizes))
        assert all(a.method != b.method for a, b in zip(comm.msg_rules, comm.msg_rules[1:]))   # one rule per run
        for a, b in zip(comm.msg_rules, comm.msg_rules[1:]):
            assert a.method != b.method                         # consecutive equal methods are merged


def test_unmerged_rule_list_keeps_every_measured_comm_size():
    fn = random_fn(3, 5, 4, 1, None)   # one method: everything merges
    assert len(build_rule_list(fn).comm_rules) == 1
    assert [c.comm_size for c in build_rule_list(fn, merge_comm_sizes=False).comm_rules] == fn.comm_sizes.tolist()


def test_ranges_are_inclusive_and_open_at_the_end():
    fn = random_fn(11, 4, 6, 3, None)
    ranges = build_rule_list(fn).ranges()
    assert ranges[0][0] == 1 and ranges[-1][1] is None
    for (lo, hi, msgs), nxt in zip(ranges, ranges[1:] + [None]):
        if nxt:
            assert hi == nxt[0] - 1
        assert msgs[0][0] == 0 and msgs[-1][1] is None
        for a, b in zip(msgs, msgs[1:]):
            assert a[1] == b[0] - 1


def test_a_method_named_twice_in_the_table_is_one_run():
    a, b = ("1", 0), ("2", 0)
    fn = tree_choosing("bcast", [2, 4], [1, 8, 64, 512], [[a, b, a, b], [a, a, b, b]])
    twice = dataclasses.replace(fn, methods=[fn.methods[0], fn.methods[0]])     # indices 0 and 1: equal methods
    rl = build_rule_list(twice)
    assert [[(r.msg_size, r.method) for r in c.msg_rules] for c in rl.comm_rules] == [[(0, fn.methods[0])]]
    assert [len(c.msg_rules) for c in build_rule_list(fn).comm_rules] == [4, 2]
