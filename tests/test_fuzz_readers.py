"""Every reader either reads a fuzzed input or refuses it with a one-line QuadselError (tests/fuzzing.py).

Hypothesis drives the same mutations as the long run in benchmarks/fuzz_readers.py; a new reader (the tree
loader, say) is one entry in fuzzing.READERS and is fuzzed here and there with no other change.
"""

import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import READERS, random_case, run_one


@pytest.mark.parametrize("reader", sorted(READERS))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rnd=st.randoms(use_true_random=False))
def test_reader_reads_or_refuses_in_one_line(reader, rnd):
    data = random_case(reader, rnd)
    with tempfile.TemporaryDirectory(prefix="quadsel-fuzz-") as folder:
        assert run_one(reader, data, folder) in ("read", "refused")
