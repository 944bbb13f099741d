"""Direct proof that forcing an algorithm really changes the algorithm the library runs.

A reduction with a user operation that *claims* to be commutative but is not,
    inout = (31 * in + inout) mod 2^40,
returns a number that encodes the order in which the ranks' contributions were combined, i.e. the
shape of the algorithm's reduction tree. The result is deterministic (integers, no timing): two
forced algorithms with different trees give different numbers, and if forcing did nothing every
"forced" run would be the library's one choice and give the same number.

    mpiexec -n 4 python -m quadsel.measure.selfcheck reduce 1 5 6

prints JSON {"library": ..., "forced": {alg: fingerprint}, "unforced": {alg: fingerprint}};
"unforced" repeats the runs with the forcing switch off (Open MPI: coll_tuned_use_dynamic_rules=0,
MPICH: the algorithm cvar left at auto) as the control that must show a single value.
"""

import json
import sys

import numpy as np

from ..ingest.table import DEFAULT_ALGORITHM

MODULUS = 1 << 40


def _order_op(invec, inoutvec, datatype):
    a = np.frombuffer(invec, dtype=np.int64)
    b = np.frombuffer(inoutvec, dtype=np.int64)
    b[:] = (a * 31 + b) % MODULUS


def fingerprint(comm, collective, op, count=16):
    """The combination-order number of one reduce/allreduce on `comm` (same on the ranks that get it)."""
    from mpi4py import MPI
    send = np.full(count, comm.Get_rank() + 1, dtype=np.int64)
    recv = np.zeros(count, dtype=np.int64)
    if collective == "reduce":
        comm.Reduce([send, MPI.INT64_T], [recv, MPI.INT64_T], op=op, root=0)
    else:
        comm.Allreduce([send, MPI.INT64_T], [recv, MPI.INT64_T], op=op)
    return int(recv[0]) if comm.Get_rank() == 0 else None


def run(collective, labels):
    from mpi4py import MPI
    from ..libraries import open_library
    from .mpit import MPIT

    world = MPI.COMM_WORLD
    mpit = MPIT(thread_level=MPI.Query_thread())
    library = open_library(MPI.Get_library_version(), mpit)
    op = MPI.Op.Create(_order_op, commute=True)   # the lie that lets the library pick any order
    library.prepare(collective)
    result = {"library": library.name, "ranks": world.Get_size(), "collective": collective,
              "forced": {}, "unforced": {}}
    for control in (False, True):
        for label in labels:
            if control:
                library.switch_off(collective, label)
            else:
                library.activate(collective, label, 0)
            comm = world.Dup()   # Open MPI binds the forced values here; MPICH reads them at the call
            value = fingerprint(comm, collective, op)
            comm.Free()
            result["unforced" if control else "forced"][label] = value
        library.activate(collective, DEFAULT_ALGORITHM, 0)
    op.Free()
    mpit.close()
    return result if world.Get_rank() == 0 else None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    collective, labels = argv[0], argv[1:]
    result = run(collective, labels)
    if result is not None:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
