"""Where a library silently runs another algorithm than the one forced: its internal fallbacks.

Read from the sources (never measured into existence): Open MPI 5.0.x `ompi/mca/coll/base/coll_base_*.c`
(the `switching to ...` branches at the top of each algorithm) and MPICH 5.0.x
`src/mpi/coll/coll_algorithms.txt` (an algorithm's `restrictions:`; maint/gen_coll.py turns each into
MPII_COLLECTIVE_FALLBACK_CHECK, which with the default MPIR_CVAR_COLLECTIVE_FALLBACK=silent runs
MPIR_<Coll>_allcomm_auto, i.e. MPICH's own selection). docs/collectives.md has the table.

`replacement(library, collective, label, call)` says what really runs for a forced (label, call):
None (the forced algorithm), another label, DEFAULT_ALGORITHM (the library's own selection) or ERROR
(the library returns an error: Open MPI's two_proc algorithms on any other size than 2). Chains are
followed (segmented ring -> ring -> recursive doubling).
"""

from typing import Callable, NamedTuple, Optional, Tuple

import numpy as np

from .base import DEFAULT_ALGORITHM

ERROR = "error"


class Call(NamedTuple):
    """What a fallback condition may look at in one call."""
    comm_size: int
    count: int                  # elements per rank (the convention's bytes per rank / type size)
    type_size: int = 1
    commutative: bool = True    # quadsel's calls: MPI_SUM (built in, commutative)
    built_in_op: bool = True
    in_place: bool = False      # quadsel's calls never use MPI_IN_PLACE
    segsize: int = 0


class Fallback(NamedTuple):
    collective: str
    algorithm: str              # the forced label (Open MPI id as text, MPICH name)
    when: str                   # the condition, as the docs print it
    runs: str                   # the label that runs instead, DEFAULT_ALGORITHM or ERROR
    source: str                 # file and function of the library that does it
    applies: Callable[[Call], bool]
    reads: Optional[Tuple[str, ...]] = None     # the Call fields `applies` looks at (None: not said -- call by call)


def _pow2(n):
    return n > 0 and n & (n - 1) == 0


def _pof2_below(n):
    """The largest power of two <= n (MPICH's MPL_pof2, Open MPI's nprocs_pof2)."""
    return 1 << (max(n, 1).bit_length() - 1)


def _segcount(call):
    """COLL_BASE_COMPUTED_SEGCOUNT of coll_base_functions.h: elements per segment of a segmented run."""
    t, seg = call.type_size, call.segsize
    if t <= seg < t * call.count:
        segcount, residual = seg // t, seg - (seg // t) * t
        return segcount + (1 if residual > t >> 1 else 0)
    return call.count


def _split_bintree_too_small(call):
    first = (call.count + 1) // 2
    second = call.count - first
    return first == 0 or second == 0 or call.segsize > first * call.type_size or call.segsize > second * call.type_size


_OB = "ompi/mca/coll/base/"
OPENMPI = [
    Fallback("allgather", "3", "comm size not a power of two", "2", _OB + "coll_base_allgather.c "
             "ompi_coll_base_allgather_intra_recursivedoubling", lambda c: not _pow2(c.comm_size),
             reads=("comm_size",)),
    Fallback("allgather", "5", "odd comm size", "4", _OB + "coll_base_allgather.c "
             "ompi_coll_base_allgather_intra_neighborexchange", lambda c: c.comm_size % 2 == 1, reads=("comm_size",)),
    Fallback("allgather", "6", "comm size not 2", ERROR, _OB + "coll_base_allgather.c "
             "ompi_coll_base_allgather_intra_two_procs (MPI_ERR_UNSUPPORTED_OPERATION)", lambda c: c.comm_size != 2,
             reads=("comm_size",)),
    Fallback("allgatherv", "4", "odd comm size", "3", _OB + "coll_base_allgatherv.c "
             "ompi_coll_base_allgatherv_intra_neighborexchange", lambda c: c.comm_size % 2 == 1, reads=("comm_size",)),
    Fallback("allgatherv", "5", "comm size not 2", ERROR, _OB + "coll_base_allgatherv.c "
             "ompi_coll_base_allgatherv_intra_two_procs (MPI_ERR_UNSUPPORTED_OPERATION)", lambda c: c.comm_size != 2,
             reads=("comm_size",)),
    Fallback("allreduce", "4", "count < comm size", "3", _OB + "coll_base_allreduce.c "
             "ompi_coll_base_allreduce_intra_ring", lambda c: c.count < c.comm_size, reads=("comm_size", "count")),
    Fallback("allreduce", "5", "count < comm size x segment count (segment count = count without a segment "
             "size)", "4", _OB + "coll_base_allreduce.c ompi_coll_base_allreduce_intra_ring_segmented",
             lambda c: c.count < c.comm_size * _segcount(c), reads=("comm_size", "count", "type_size", "segsize")),
    Fallback("allreduce", "6", "count < largest power of two <= comm size, or a non-commutative op", "1",
             _OB + "coll_base_allreduce.c ompi_coll_base_allreduce_intra_redscat_allgather",
             lambda c: c.count < _pof2_below(c.comm_size) or not c.commutative,
             reads=("comm_size", "count", "commutative")),
    Fallback("alltoall", "5", "comm size not 2", ERROR, _OB + "coll_base_alltoall.c "
             "ompi_coll_base_alltoall_intra_two_procs (MPI_ERR_UNSUPPORTED_OPERATION)", lambda c: c.comm_size != 2,
             reads=("comm_size",)),
    Fallback("barrier", "5", "comm size not 2", ERROR, _OB + "coll_base_barrier.c "
             "ompi_coll_base_barrier_intra_two_procs (MPI_ERR_UNSUPPORTED_OPERATION)", lambda c: c.comm_size > 2,
             reads=("comm_size",)),
    Fallback("bcast", "4", "a half of the buffer smaller than the segment size (or empty)", "3",
             _OB + "coll_base_bcast.c ompi_coll_base_bcast_intra_split_bintree (chain of fan-out 1 = pipeline)",
             _split_bintree_too_small, reads=("count", "type_size", "segsize")),
    Fallback("bcast", "8", "count < comm size", "1", _OB + "coll_base_bcast.c "
             "ompi_coll_base_bcast_intra_scatter_allgather", lambda c: c.count < c.comm_size,
             reads=("comm_size", "count")),
    Fallback("bcast", "9", "count < comm size", "1", _OB + "coll_base_bcast.c "
             "ompi_coll_base_bcast_intra_scatter_allgather_ring", lambda c: c.count < c.comm_size,
             reads=("comm_size", "count")),
    Fallback("reduce", "7", "count < largest power of two <= comm size, or a non-commutative op", "1",
             _OB + "coll_base_reduce.c ompi_coll_base_reduce_intra_redscat_gather",
             lambda c: c.count < _pof2_below(c.comm_size) or not c.commutative or c.comm_size < 2,
             reads=("comm_size", "count", "commutative")),
    Fallback("reduce_scatter_block", "2", "count x comm size > INT_MAX", "1", _OB + "coll_base_reduce_scatter_block.c "
             "ompi_coll_base_reduce_scatter_block_intra_recursivedoubling", lambda c: c.count * c.comm_size > 2**31 - 1,
             reads=("comm_size", "count")),
    Fallback("reduce_scatter_block", "3", "a non-commutative op", "1", _OB + "coll_base_reduce_scatter_block.c "
             "ompi_coll_base_reduce_scatter_block_intra_recursivehalving", lambda c: not c.commutative,
             reads=("commutative",)),
]

_MT = "src/mpi/coll/coll_algorithms.txt"


def _mpich(collective, algorithm, restriction, test, reads):
    return Fallback(collective, algorithm, restriction, DEFAULT_ALGORITHM,
                    f"{_MT} {collective}-intra {algorithm} restrictions: {restriction} (gen_coll.py: "
                    f"MPIR_{collective.capitalize()}_allcomm_auto)", test, reads)


_NOT_POW2 = ("power-of-two", lambda c: not _pow2(c.comm_size), ("comm_size",))
_NON_COMMUTATIVE = ("commutative", lambda c: not c.commutative, ("commutative",))
_IN_PLACE = ("noinplace", lambda c: c.in_place, ("in_place",))
_NOT_IN_PLACE = ("inplace", lambda c: not c.in_place, ("in_place",))
_SIZE_GE_POF2 = ("size-ge-pof2, builtin-op", lambda c: c.count < _pof2_below(c.comm_size) or not c.built_in_op,
                 ("comm_size", "count", "built_in_op"))
MPICH = [
    _mpich("allgather", "recursive_doubling", *_NOT_POW2),
    _mpich("allgatherv", "recursive_doubling", *_NOT_POW2),
    *[_mpich("alltoall", a, *_IN_PLACE) for a in ("brucks", "k_brucks", "pairwise", "scattered")],
    _mpich("alltoall", "pairwise_sendrecv_replace", *_NOT_IN_PLACE),
    _mpich("alltoallv", "pairwise_sendrecv_replace", *_NOT_IN_PLACE),
    _mpich("alltoallv", "scattered", *_IN_PLACE),
    *[Fallback(c, "smp", "a communicator that is not a parent communicator (one with node sub-communicators): "
               "every communicator quadsel measures on (a Split of MPI_COMM_WORLD, Dup'ed) is not one in MPICH 5.0.2",
               DEFAULT_ALGORITHM, f"{_MT} {c}-intra smp restrictions: parent-comm (seen with "
               "MPIR_CVAR_COLLECTIVE_FALLBACK=print: tests/libraries/test_fallbacks.py)", lambda c: True, ())
      for c in ("allreduce", "barrier", "bcast", "reduce", "scan")],
    Fallback("reduce_scatter", "noncommutative", "comm size not a power of two", ERROR,
             "src/mpi/coll/reduce_scatter/reduce_scatter_intra_noncommutative.c MPIR_Reduce_scatter_intra_noncommutative "
             "(MPIR_Assert(MPL_is_pof2(comm_size)): MPICH aborts; no restriction guards it)",
             lambda c: not _pow2(c.comm_size), ("comm_size",)),
    _mpich("reduce", "smp", *_NON_COMMUTATIVE),
    _mpich("reduce", "reduce_scatter_gather", *_SIZE_GE_POF2),
    _mpich("allreduce", "smp", *_NON_COMMUTATIVE),
    *[_mpich("allreduce", a, *_NON_COMMUTATIVE) for a in ("recursive_multiplying", "ring", "k_reduce_scatter_allgather")],
    _mpich("allreduce", "reduce_scatter_allgather", *_SIZE_GE_POF2),
    Fallback("allreduce", "ccl", "always without an external CCL (NCCL, RCCL, oneCCL)", DEFAULT_ALGORITHM,
             "src/mpi/coll/allreduce/allreduce_intra_ccl.c MPIR_Allreduce_intra_ccl", lambda c: True, ()),
    *[_mpich("reduce_scatter", a, *_NON_COMMUTATIVE) for a in ("pairwise", "recursive_halving")],
    _mpich("reduce_scatter_block", "noncommutative", *_NOT_POW2),
    *[_mpich("reduce_scatter_block", a, *_NON_COMMUTATIVE) for a in ("pairwise", "recursive_halving")],
    _mpich("scan", "smp", *_NON_COMMUTATIVE),
]
# scan smp is also restricted to node-consecutive ranks (one node: always holds).

TABLES = {"openmpi": OPENMPI, "mpich": MPICH}


def known(library, collective=None):
    """The fallbacks of a library (of one collective)."""
    return [f for f in TABLES.get(library, []) if collective is None or f.collective == collective]


def replacement(library, collective, label, call):
    """What really runs when `label` is forced for `call`: None (the forced one), a label, DEFAULT_ALGORITHM or
    ERROR. Follows chains (at most a few steps: every step is another algorithm)."""
    return replacements(library, collective, label, [call])[0]


def fails(library, collective, label, segsize, comm_size, msg):
    """Does the library fail the call (ERROR: Open MPI's two_proc algorithms at another size than 2) when `label`
    is forced for `msg` bytes per rank at `comm_size` ranks? Measure leaves those points untimed (its `# replaced`
    lines); verify times no arm there and the follow check forces none there: one such call ends the whole job."""
    call = Call(comm_size, max(1, msg), 1, segsize=segsize)
    return replacement(library, collective, str(label), call) == ERROR


def replacements(library, collective, label, calls):
    """[replacement(library, collective, label, call) for call in calls], each fallback's condition asked of the
    calls still at its algorithm (ingest/replaced.py asks it of every point of a sweep)."""
    return list(replacements_of_columns(library, collective, label,
                                        {f: [getattr(c, f) for c in calls] for f in Call._fields}, len(calls)))


def replacements_of_columns(library, collective, label, columns, n):
    """replacements of `n` calls given as columns ({Call field: n values}; a field left out takes Call's
    default), as an object array, each condition asked once per distinct value of the fields it reads
    (Fallback.reads)."""
    steps = {}
    for f in known(library, collective):
        steps.setdefault(f.algorithm, []).append(f)
    columns = {name: _column(values) for name, values in columns.items()}
    out = np.full(n, None, dtype=object)
    _follow(steps, str(label), columns, np.arange(n), str(label), {str(label)}, out)
    return out


def _column(values):
    """The values as int64 when they all fit, else as Python objects (asked call by call)."""
    try:
        return np.asarray(values, dtype=np.int64)
    except OverflowError:
        return np.asarray(values, dtype=object)


def _follow(steps, label, columns, at, current, seen, out):
    """out[i] for the calls at `at`, which the chain from `label` has brought to `current` through `seen`."""
    for step in steps.get(current, ()):          # the first that applies
        applies = _asked(step, columns, at)
        taken, at = at[applies], at[~applies]
        if step.runs in (DEFAULT_ALGORITHM, ERROR) or step.runs in seen:
            out[taken] = step.runs
        elif taken.size:
            _follow(steps, label, columns, taken, step.runs, seen | {step.runs}, out)
    out[at] = None if current == label else current


def _asked(step, columns, at):
    """step.applies of each call at `at` (a bool array): once per distinct value of the fields it reads."""
    fields = Call._fields if step.reads is None else step.reads
    cols = [columns[f][at] if f in columns else np.full(at.size, Call._field_defaults[f]) for f in fields]
    if not fields:
        return np.full(at.size, bool(step.applies(Call(0, 0))))
    if step.reads is None or any(c.dtype == object for c in cols):
        return np.array([bool(step.applies(_call(fields, row))) for row in zip(*(c.tolist() for c in cols))],
                        dtype=bool).reshape(at.size)
    key = np.zeros(at.size, dtype=np.int64)       # one integer per distinct combination of the fields' values
    for col in cols:
        values, codes = np.unique(col, return_inverse=True)
        key = key * values.size + codes.reshape(-1)
    first, back = np.unique(key, return_index=True, return_inverse=True)[1:]
    rows = zip(*(c[first].tolist() for c in cols))
    answers = np.array([bool(step.applies(_call(fields, row))) for row in rows], dtype=bool)
    return answers[back.reshape(-1)]


def _call(fields, values):
    """A Call with these fields' values (the others: 0 or Call's defaults -- the condition does not read them)."""
    given = dict(zip(fields, values))
    return Call(given.pop("comm_size", 0), given.pop("count", 0), **given)


def why(library, collective, label, call):
    """The first fallback that applies to a forced `label` (for messages), or None."""
    return next((f for f in known(library, collective) if f.algorithm == str(label) and f.applies(call)), None)
