"""A tree as the library's file carries it (quadsel/targets/written.py): where Open MPI matches a collective on no
message size, the file holds one method per communicator cell, and verify, prune and tune take that function."""

from hypothesis import given, settings, strategies as st

from quadsel.decision.decision_function import DecisionFunction
from quadsel.targets.written import as_written
from quadsel.verify.run import emit_rules

from helpers import probe_points, random_fn
from library_readers import OmpiClassicRules

SCATTER = 15      # Open MPI's collective id


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), default=st.booleans())
def test_a_scatter_tree_as_written_answers_what_open_mpi_runs_with_its_file(seed, default):
    fn = DecisionFunction.of(random_fn(seed, 4, 6, 3, None, names=["1", "2", "3"], collective="scatter",
                                       library_default=default))
    written = as_written(fn, "openmpi")
    assert as_written(written, "openmpi") is written            # idempotent: tune's identity test relies on it
    rules = OmpiClassicRules(emit_rules("openmpi", [fn]))
    assert emit_rules("openmpi", [written]).split("# Use:")[1] == emit_rules("openmpi", [fn]).split("# Use:")[1]
    for comm, msg in probe_points(fn.size_tree):
        method = written.query(comm, msg)
        for key in (0, msg * comm):                   # the root's key and every other rank's (0)
            alg = rules.lookup(SCATTER, comm, key)[0]
            assert alg == (0 if method.algorithm == "default" else int(method.algorithm)), (comm, msg, key)
        if written is fn:
            continue
        row = {written.query(comm, m) for m in (0, 1, msg, 1 << 40)}
        assert len(row) == 1, (comm, row)             # one method per communicator size


def test_a_collective_matched_on_its_message_size_is_left_as_it_is():
    fn = DecisionFunction.of(random_fn(3, 4, 6, 3, None, names=["1", "2", "3"], collective="bcast"))
    assert as_written(fn, "openmpi") is fn and as_written(fn, None) is fn
