"""Message sizes: the decision map's one convention, and what each MPI library matches its rules on.

The decision map's message axis is the size the benchmarks print: **bytes per rank** (`PER_RANK`; for
alltoall, per rank and per peer). Every reader converts to it (the benchmarks that print something else
are in `BENCHMARK_TOTALS`), the C function takes it, and every rules-file target converts it to the key its
library computes from the call (`OPENMPI`, `MPICH`), read from Open MPI 5.0.x
ompi/mca/coll/tuned/coll_tuned_decision_dynamic.c and MPICH 5.0.x src/mpi/coll/src/csel.c
(docs/collectives.md has the table and the reasons).

A key is one of three forms of the per-rank size m at communicator size p:
  RANK  key = m           (bcast, reduce, allreduce; Open MPI allgatherv: total / p)
  COMM  key = m * p       (allgather, alltoall, gather, scatter, reduce_scatter(_block), ...)
  NONE  the library matches on no message size (key 0, or one unrelated to m such as Open MPI's
        scan/exscan: datatype size * p): a rules file can choose per communicator size only.
"""

from typing import NamedTuple, Optional

from ..errors import QuadselError, printable

RANK, COMM, NONE = "rank", "comm", "none"

# What the decision map's message size is, per collective (equal counts on every rank for the v-variants).
PER_RANK = {
    "bcast": "the buffer: count x datatype size",
    "reduce": "each rank's vector: count x datatype size",
    "allreduce": "each rank's vector: count x datatype size",
    "scan": "each rank's vector: count x datatype size",
    "exscan": "each rank's vector: count x datatype size",
    "allgather": "the block each rank contributes: sendcount x datatype size",
    "allgatherv": "the block each rank contributes (the mean of the recvcounts x datatype size)",
    "gather": "the block each rank sends to the root: sendcount x datatype size",
    "gatherv": "the block each rank sends to the root (the mean of the recvcounts x datatype size)",
    "scatter": "the block each rank receives from the root: recvcount x datatype size",
    "scatterv": "the block each rank receives (the mean of the sendcounts x datatype size)",
    "alltoall": "the block each rank sends to each peer: sendcount x datatype size",
    "alltoallv": "the block each rank sends to each peer (the mean of the sendcounts x datatype size)",
    "reduce_scatter_block": "the block each rank receives: recvcount x datatype size",
    "reduce_scatter": "the block each rank receives (the mean of the recvcounts x datatype size, rounded down)",
    "barrier": "none: always 0",
}


class Key(NamedTuple):
    form: str                  # RANK, COMM or NONE
    computed: str              # what the library computes from the call, in its own terms
    name: Optional[str] = None  # MPICH: the csel operator ("avg_msg_size", "total_msg_size"); None: no key


# Open MPI 5.0.x coll/tuned dynamic rules (classic and JSON files), *_intra_dec_dynamic.
OPENMPI = {
    "bcast": Key(RANK, "datatype size x count"),
    "reduce": Key(RANK, "datatype size x count"),
    "allreduce": Key(RANK, "datatype size x count"),
    "allgather": Key(COMM, "send datatype size x sendcount x comm size"),
    "alltoall": Key(COMM, "send datatype size x sendcount x comm size"),
    "gather": Key(COMM, "send datatype size x sendcount x comm size"),
    "scatter": Key(COMM, "send datatype size x sendcount x comm size (sendcount is only significant at the root)"),
    "reduce_scatter_block": Key(COMM, "datatype size x recvcount x comm size"),
    "reduce_scatter": Key(COMM, "datatype size x sum of the recvcounts"),
    "allgatherv": Key(RANK, "send datatype size x sum of the recvcounts / comm size (per rank since 2020, "
                            "ompi f670364; the total before)"),
    "scan": Key(NONE, "datatype size x comm size (not the count)"),
    "exscan": Key(NONE, "datatype size x comm size (not the count)"),
    "alltoallv": Key(NONE, "nothing (0)"),
    "barrier": Key(NONE, "nothing (0)"),
}

# MPICH 5.0.x csel: avg_msg_size is defined for these four only (any other collective aborts on it).
MPICH = {
    "bcast": Key(RANK, "count x datatype size", "avg_msg_size"),
    "reduce": Key(RANK, "count x datatype size", "avg_msg_size"),
    "allreduce": Key(RANK, "count x datatype size", "avg_msg_size"),
    "alltoall": Key(RANK, "sendcount x send datatype size", "avg_msg_size"),
    "allgather": Key(COMM, "recvcount x recv datatype size x comm size", "total_msg_size"),
    "allgatherv": Key(COMM, "sum of the recvcounts x recv datatype size", "total_msg_size"),
    "reduce_scatter": Key(COMM, "sum of the recvcounts x datatype size", "total_msg_size"),
    "reduce_scatter_block": Key(COMM, "recvcount x datatype size x comm size", "total_msg_size"),
    "alltoallv": Key(COMM, "sum of the sendcounts x send datatype size", "total_msg_size"),
    "gather": Key(COMM, "sendcount x comm size (csel.c drops the datatype size: bytes for byte data)",
                  "total_msg_size"),
    "scatter": Key(COMM, "recvcount x comm size (csel.c drops the datatype size: bytes for byte data)",
                   "total_msg_size"),
    "barrier": Key(NONE, "nothing (MPICH aborts on a message-size key)"),
    "scan": Key(NONE, "nothing (MPICH aborts on a message-size key)"),
    "exscan": Key(NONE, "nothing (MPICH aborts on a message-size key)"),
    "gatherv": Key(NONE, "nothing (MPICH aborts on a message-size key)"),
    "scatterv": Key(NONE, "nothing (MPICH aborts on a message-size key)"),
}
# Intel MPI 2021.x I_MPI_ADJUST_<COLL> conditions ("messages of size <l>"): the buffer of the call, count x datatype
# size, for the three collectives quadsel measures and verifies on it (docs/deploy.md, Intel MPI).
INTELMPI = {
    "bcast": Key(RANK, "count x datatype size"),
    "reduce": Key(RANK, "count x datatype size"),
    "allreduce": Key(RANK, "count x datatype size"),
}
TABLES = {"openmpi": OPENMPI, "mpich": MPICH, "intelmpi": INTELMPI}
# The largest message key a library's rules file can hold where a total-size key (COMM) may exceed it: Open MPI
# reads keys as a C long (2^63 - 1), which no real call's total reaches, so rules beyond are left out
# (targets/rule_list.py). MPICH reads its keys as a C int, which real calls do reach: mpich_json refuses those.
KEY_MAX = {"openmpi": (1 << 63) - 1}
TITLES = {"openmpi": "Open MPI", "mpich": "MPICH", "intelmpi": "Intel MPI"}

# Benchmarks whose printed size is not per rank: the total vector of reduce_scatter (OSU's osu_reduce_scatter
# prints sum(recvcounts) x 4; IMB-MPI1's Reduce_scatter splits #bytes over the ranks; SKaMPI reports the
# send vector's extent). Everything else they print per rank (per peer for alltoall). Their readers divide.
BENCHMARK_TOTALS = {"osu": {"reduce_scatter", "ireduce_scatter"},
                    "imb": {"reduce_scatter", "ireduce_scatter"},
                    "skampi": {"reduce_scatter"},
                    "detail": {"reduce_scatter"}}     # ompi-collectives-tuning runs OSU


def key(library, collective):
    """The Key `library` matches `collective`'s rules on (QuadselError when its rules files have none)."""
    table = TABLES[library]
    if collective not in table:
        raise QuadselError(f"{TITLES[library]} rules files have no collective {printable(collective)!r} quadsel "
                           f"can write (covered: {', '.join(table)})")
    return table[collective]


def form(library, collective):
    return key(library, collective).form


# Keys that only the root computes from its own arguments: Open MPI's scatter key is the *send* count x type
# x p, and MPI makes the send arguments significant at the root only, so the other ranks of a conforming call
# (mpi4py passes no send buffer there) compute 0. Rules that change with the message size then make the
# root and the other ranks run different algorithms (seen: root linear_nb, others basic_linear; mixing
# binomial and linear would never complete). Such a collective is written like a NONE one: one rule per
# communicator size, at key 0, which every rank matches.
ROOT_ONLY = {("openmpi", "scatter")}


def written_form(library, collective):
    """The form a rules file is written in: the key's form, NONE for a key only the root computes."""
    return NONE if (library, collective) in ROOT_ONLY else form(library, collective)


def per_rank(total, comm_size):
    """A total over the ranks -> bytes per rank (rounded down, as Open MPI's allgatherv per-rank size)."""
    return int(total) // int(comm_size)


def library_size(library, collective, msg_size, comm_size, type_size=1):
    """The key `library` computes for a call of `msg_size` bytes per rank on `comm_size` ranks."""
    kind = form(library, collective)
    if kind == RANK:
        return int(msg_size)
    if kind == COMM:
        if library == "mpich" and collective in ("gather", "scatter"):
            return int(msg_size) // int(type_size) * int(comm_size)    # csel.c: count x comm size
        return int(msg_size) * int(comm_size)
    if library == "openmpi" and collective in ("scan", "exscan"):
        return int(type_size) * int(comm_size)
    return 0


def lower_bound(library, collective, msg_bound, comm_size):
    """A per-rank lower bound (a rule holds from `msg_bound` bytes per rank) in the library's key at `comm_size`:
    exact, `m >= b` holds exactly when `key(m) >= lower_bound(b)` for every integer m."""
    kind = form(library, collective)
    if kind == NONE:
        raise QuadselError(f"{TITLES[library]} matches {collective} on no message size")
    return int(msg_bound) * (int(comm_size) if kind == COMM else 1)


def per_rank_bound(library, collective, key_bound, comm_size):
    """The inverse: the smallest per-rank size whose key at `comm_size` is >= `key_bound` (a file's lower bound)."""
    kind = form(library, collective)
    if kind != COMM:
        return int(key_bound)
    return -(-int(key_bound) // int(comm_size))


def mpich_value(name, collective, msg_size, comm_size, type_size=1):
    """What MPICH's csel computes for operator `name` (avg_msg_size, total_msg_size) on a call of `msg_size` bytes
    per rank; QuadselError where csel.c has no such size for the collective (MPICH aborts there)."""
    entry = MPICH.get(collective)
    if name == "avg_msg_size" and entry is not None and entry.name == name:
        return int(msg_size)
    if name == "total_msg_size" and entry is not None and entry.form != NONE:
        if entry.form == RANK:      # bcast, reduce, allreduce, alltoall: the per-rank size x comm size
            return int(msg_size) * int(comm_size)
        return library_size("mpich", collective, msg_size, comm_size, type_size)
    raise QuadselError(f"MPICH's csel has no {name} for {printable(collective)}: it aborts (MPIR_Assert) on such a key")
