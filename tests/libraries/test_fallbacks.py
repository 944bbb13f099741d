"""The fallback table (libraries/fallbacks.py) against the real libraries.

Open MPI: a forced algorithm the table says is replaced sends exactly the messages of its replacement
(pml/monitoring traffic), and where the table says it is not, it sends something else.
MPICH: with MPIR_CVAR_COLLECTIVE_FALLBACK=error MPICH refuses instead of silently running its own selection,
so every (collective, algorithm) is forced at 3 ranks (not a power of two) and at 2: it must fail exactly
where the table says MPICH replaces it.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from quadsel.libraries import COLLECTIVES, DEFAULT_ALGORITHM, fallbacks, mpich
from quadsel.libraries.fallbacks import Call, replacement

from helpers import mpi_library as _library, mpiexec_beside as _mpiexec

REPO = Path(__file__).resolve().parents[2]
MPICH_PYTHON = os.environ.get("QUADSEL_MPICH_PYTHON")


def _one_by_one(library, collective, label, call):
    """fallbacks.replacement as the table reads, one call at a time: the first fallback of the current algorithm
    that applies, followed until it ends (the library's own choice, an error, or a label seen before)."""
    seen, current = {label}, label
    while True:
        step = next((f for f in fallbacks.known(library, collective) if f.algorithm == current and f.applies(call)),
                    None)
        if step is None:
            return None if current == label else current
        if step.runs in (DEFAULT_ALGORITHM, fallbacks.ERROR) or step.runs in seen:
            return step.runs
        seen.add(step.runs)
        current = step.runs


def test_many_calls_at_once_are_each_call_alone():
    """replacements (every condition asked of a batch of calls, as ingest asks of a sweep) = one call at a time."""
    import random
    rng = random.Random(7)
    calls = [Call(rng.choice([1, 2, 3, 4, 5, 6, 8, 12, 64, 2 ** 31 - 1]), rng.choice([0, 1, 2, 3, 7, 64, 4096, 2 ** 40]),
                  rng.choice([1, 4]), rng.random() < 0.8, rng.random() < 0.9, rng.random() < 0.2,
                  rng.choice([0, 1, 3, 1024, 65536])) for _ in range(400)]
    for library, table in fallbacks.TABLES.items():
        for collective in sorted({f.collective for f in table}):
            labels = {f.algorithm for f in table if f.collective == collective} | {"1", "ring", "default"}
            for label in sorted(labels):
                expected = [_one_by_one(library, collective, label, call) for call in calls]
                assert fallbacks.replacements(library, collective, label, calls) == expected
                assert [replacement(library, collective, label, call) for call in calls[:40]] == expected[:40]


def test_chains_and_conditions():
    # segmented ring without a segment size: ring, which with count < p is recursive doubling
    assert replacement("openmpi", "allreduce", "5", Call(4, 2, 4)) == "3"
    assert replacement("openmpi", "allreduce", "5", Call(4, 100, 4)) == "4"
    assert replacement("openmpi", "allreduce", "5", Call(4, 4096, 4, segsize=1024)) is None
    assert replacement("openmpi", "allreduce", "4", Call(4, 4, 4)) is None
    assert replacement("openmpi", "allgather", "3", Call(6, 10)) == "2"
    assert replacement("openmpi", "allgather", "3", Call(8, 10)) is None
    assert replacement("openmpi", "allgather", "6", Call(3, 10)) == fallbacks.ERROR
    assert replacement("openmpi", "bcast", "8", Call(5, 4)) == "1"
    assert replacement("openmpi", "bcast", "4", Call(4, 1000, segsize=1024)) == "3"
    assert replacement("openmpi", "reduce", "7", Call(5, 3)) == "1"     # 3 < 4, the power of two below 5
    assert replacement("openmpi", "reduce", "7", Call(5, 4)) is None
    assert replacement("mpich", "allgather", "recursive_doubling", Call(3, 1)) == DEFAULT_ALGORITHM
    assert replacement("mpich", "alltoall", "pairwise_sendrecv_replace", Call(2, 1)) == DEFAULT_ALGORITHM
    assert replacement("mpich", "allreduce", "ccl", Call(2, 1000)) == DEFAULT_ALGORITHM
    for lib, table in fallbacks.TABLES.items():
        for f in table:
            assert f.collective in COLLECTIVES
            if lib == "mpich":
                assert f.algorithm in mpich.ALGORITHMS[f.collective]


@pytest.fixture
def _env(mpi_env):
    pass


@pytest.mark.skipif(not _mpiexec(sys.executable) or _library(sys.executable) != "openmpi",
                    reason="needs Open MPI's mpiexec and mpi4py on Open MPI")
@pytest.mark.parametrize("collective, arms, points", [
    ("allreduce", ["3", "4", "6", "1"], [(3, 4), (3, 64)]),     # float: 1 element < 3 ranks; 16 elements
    ("bcast", ["1", "8", "9"], [(3, 2), (3, 4096)]),
    ("allgather", ["2", "3"], [(3, 64)]),
])
def test_open_mpi_runs_what_the_table_says(_env, tmp_path, collective, arms, points):
    from quadsel.verify.follow import _launch
    from quadsel.verify.traffic import MONITORING_ENV
    spec = {"collective": collective, "kind": "traffic", "points": [list(p) for p in points],
            "forced": [[a, 0] for a in arms]}
    got = _launch(3, spec, dict(MONITORING_ENV), sys.executable, _mpiexec(sys.executable), 600, str(tmp_path))
    for (n, m), traffic in got.items():
        size = 4 if collective == "allreduce" else 1
        for arm in arms:
            runs = replacement("openmpi", collective, arm, Call(n, m // size, size))
            for other in arms:
                if other == arm:
                    continue
                same = traffic[arm] == traffic[other]
                if runs == other:
                    assert same, (collective, n, m, arm, "should run", other)
                elif runs is None and replacement("openmpi", collective, other, Call(n, m // size, size)) is None:
                    assert not same, (collective, n, m, arm, other, "send the same messages")


MPICH_WORKER = r"""
import sys
import numpy as np
from mpi4py import MPI
from quadsel.libraries import COLLECTIVES, open_library, mpich
from quadsel.libraries.fallbacks import ERROR, Call, replacement
from quadsel.measure.calls import buffer_bytes, call_for, is_reduction
from quadsel.measure.mpit import MPIT
world = MPI.COMM_WORLD
mpit = MPIT(thread_level=MPI.Query_thread())
library = open_library(MPI.Get_library_version(), mpit)
mpit.write_int("MPIR_CVAR_COLLECTIVE_FALLBACK", library._values("MPIR_CVAR_COLLECTIVE_FALLBACK").index("print"))
for n in (2, 3):
    base = world.Split(0 if world.rank < n else MPI.UNDEFINED, world.rank)
    if base == MPI.COMM_NULL:
        world.Barrier()
        continue
    if world.rank == 0:
        sys.stderr.write("COMM SIZE %d\n" % n)
        sys.stderr.flush()
    for coll in COLLECTIVES:
        library.prepare(coll)
        msg = 0 if coll == "barrier" else 64
        send, recv = (np.zeros(k, np.uint8) for k in buffer_bytes(coll, msg, n))
        dtype, size = (MPI.FLOAT, 4) if is_reduction(coll) else (MPI.BYTE, 1)
        for alg in mpich.ALGORITHMS[coll]:
            if replacement("mpich", coll, alg, Call(n, msg // size, size)) == ERROR:
                continue      # MPICH would abort the job
            library.activate(coll, alg, 0)
            call_for(MPI, coll, send, recv, msg, dtype, size, n)(base)
            library.activate(coll, "default", 0)
    base.Free()
    world.Barrier()
"""


@pytest.mark.skipif(not MPICH_PYTHON, reason="the MPICH venv: set QUADSEL_MPICH_PYTHON to a Python with MPICH")
def test_mpich_falls_back_exactly_where_the_table_says(_env):
    # MPIR_CVAR_COLLECTIVE_FALLBACK=print: rank 0 prints "<Coll> <algorithm> cannot be applied." and MPICH runs
    # its own selection, as with the default (silent). (=error desynchronises the ranks: only some raise.)
    mpiexec = _mpiexec(MPICH_PYTHON)
    done = subprocess.run([mpiexec, "-n", "3", MPICH_PYTHON, "-c", MPICH_WORKER], capture_output=True, text=True,
                          timeout=600, env=dict(os.environ))
    assert done.returncode == 0, done.stderr[-2000:]
    printed, n = set(), None
    for line in done.stderr.splitlines():
        if line.startswith("COMM SIZE "):
            n = int(line.split()[-1])
        elif line.endswith(" cannot be applied."):
            coll, alg = line.split()[:2]
            printed.add((coll.lower(), alg, n))
    expected = set()
    for coll in COLLECTIVES:
        size = 4 if coll in ("reduce", "allreduce", "scan", "exscan", "reduce_scatter", "reduce_scatter_block") else 1
        msg = 0 if coll == "barrier" else 64
        for alg in mpich.ALGORITHMS[coll]:
            for n in (2, 3):
                first = fallbacks.why("mpich", coll, alg, Call(n, msg // size, size))
                if first is not None and first.source.startswith("src/mpi/coll/coll_algorithms.txt") \
                        and first.runs != fallbacks.ERROR:
                    expected.add((coll, alg, n))   # (ccl returns MPICH's selection itself: nothing printed)
    assert printed == expected


@given(st.integers(1, 2 ** 31 - 1), st.integers(0, 2 ** 40), st.sampled_from([1, 2, 4, 8]), st.booleans(), st.booleans(),
       st.booleans(), st.sampled_from([0, 1, 3, 1024, 65536]), st.data())
@settings(max_examples=300, deadline=None)
def test_each_condition_reads_only_the_fields_it_says(comm, count, size, commutative, built_in, in_place, seg, data):
    """Fallback.reads is what lets ingest ask a condition once per distinct value of those fields: a field left
    out of it must never change the answer."""
    call = Call(comm, count, size, commutative, built_in, in_place, seg)
    other = Call(data.draw(st.integers(1, 2 ** 31 - 1)), data.draw(st.integers(0, 2 ** 40)),
                 data.draw(st.sampled_from([1, 2, 4, 8])), data.draw(st.booleans()), data.draw(st.booleans()),
                 data.draw(st.booleans()), data.draw(st.sampled_from([0, 1, 3, 1024, 65536])))
    for table in fallbacks.TABLES.values():
        for f in table:
            mixed = call._replace(**{name: getattr(other, name) for name in Call._fields if name not in f.reads})
            assert bool(f.applies(mixed)) == bool(f.applies(call)), (f.collective, f.algorithm, f.reads)


def test_a_condition_that_does_not_say_what_it_reads_is_asked_call_by_call(monkeypatch):
    """Fallback.reads left out (None): every call is asked on its own, with every field, and the answers are
    those of the table's own entry."""
    table = [f._replace(reads=None) for f in fallbacks.OPENMPI]
    monkeypatch.setitem(fallbacks.TABLES, "openmpi", table)
    calls = [Call(n, m, t, segsize=s) for n in (2, 3, 4, 7) for m in (0, 1, 5, 64, 4096) for t in (1, 4)
             for s in (0, 1024)]
    for collective in ("allreduce", "bcast", "reduce"):
        for label in sorted({f.algorithm for f in table if f.collective == collective}):
            expected = [_one_by_one("openmpi", collective, label, call) for call in calls]
            assert fallbacks.replacements("openmpi", collective, label, calls) == expected


def test_sizes_past_int64_are_asked_call_by_call():
    """A count no int64 holds (a reader lets it through) is asked as the Python integer it is."""
    calls = [Call(4, 2 ** 70, 4, segsize=1024), Call(4, 3, 4, segsize=1024), Call(2 ** 65, 5, 1)]
    for collective, label in (("bcast", "4"), ("allreduce", "5"), ("reduce", "7")):
        expected = [_one_by_one("openmpi", collective, label, call) for call in calls]
        assert fallbacks.replacements("openmpi", collective, label, calls) == expected
