"""Which algorithm did the library run? Deterministic fingerprints of one collective call.

  traffic  Open MPI: per-rank, per-peer messages and bytes of the call (pml/monitoring, MPI_T pvars).
  order    the reductions (reduce, allreduce, scan, exscan, reduce_scatter, reduce_scatter_block), any
           library: a user operation that claims to be commutative but is not encodes the order in which
           the ranks' data were combined, i.e. the reduction tree (quadsel.measure.selfcheck); message
           sizes that are multiples of 8 bytes. Every rank's result counts (scan, reduce_scatter).

  sends    the probe's part only, of verify's own call (MPI_SUM on floats for the reductions): MPICH reductions
           whose selection needs a built-in operation, which the order call's user operation would turn away.
  probe    the same, for Open MPI where coll/han runs (across nodes; verify/han.py): pml/monitoring, the traffic
           counter, crashes coll/han's bcast on Open MPI 5.0.11, and the function probe names coll/han's algorithm
           functions as well as coll/tuned's.
  probe    added to any of them where the launch preloads quadsel.verify.probe (QUADSEL_PROBE_SO): Open MPI's
           coll/base algorithm functions that ran, MPICH's messages per peer (UCX); the fingerprint is then
           [traffic or order (None where that kind has none), probe].

A fingerprint of a run that loads the rules file is compared with fingerprints of runs that force each
method through MPI_T: equal to the tree's method (and different from the library's own choice) proves the
library followed the file at that point.

Run inside an MPI job:  python -m quadsel.verify.fingerprint SPEC.json OUT.json
SPEC: {"collective", "kind", "points": [[comm, msg], ...], "forced": [arm, ...] or null, "identify": bool,
"han": bool, "flat_library": bool}
(arms as in quadsel.verify.forcing: [label, segsize] or [label, segsize, [[param, value], ...]];
null: no forcing, the library decides, e.g. from OMPI_MCA_coll_tuned_dynamic_rules_filename; identify: force
every algorithm of the library at segment size 0 as well, to name the one the default runs; han: on a communicator
of 2+ nodes the forced arms run where the multi-node component (coll/han) may not take them, the default and the
library's own decision where it may (measure/multinode.py), and the point says `han`; flat_library: the library's
own decision too runs where coll/han may not take it (a launch forced through its environment)).
OUT (rank 0): {"points": [{"comm", "msg", "arms": {arm_key or "library": fingerprint}, "han": true (if so)}]}.
SPEC {"batch": [SPEC, ...]}: each in turn in the one launch; OUT {"batch": [OUT, ...]} (verify/follow.py
ForcedLaunches: the forced side of every collective's check in one launch).
"""

import hashlib
import os
import sys

import numpy as np

from ..libraries.base import is_reduction
from .forcing import DEFAULT_ARM, Forcing, arm_key, norm_arm, worker_main
from ..measure.multinode import flat_dup, spans_nodes
from .probe import SHIM_ENV

KINDS = ("traffic", "order", "sends", "probe")
MODULUS = 1 << 40


def _order_op(invec, inoutvec, datatype):
    a = np.frombuffer(invec, dtype=np.int64)
    b = np.frombuffer(inoutvec, dtype=np.int64)
    b[:] = (a * 31 + b) % MODULUS


def _calls(MPI, collective, msg, kind, op, comm_size):
    """call(comm) of one collective of `msg` bytes per rank (quadsel.measure.calls: measure's own call)."""
    from ..measure.calls import buffer_bytes, call_for
    if kind == "order":
        count = msg // 8
        send_bytes, recv_bytes = buffer_bytes(collective, msg, comm_size)

        recv = np.zeros(recv_bytes // 8, dtype=np.int64)

        def call(comm):
            send = np.full(send_bytes // 8, comm.Get_rank() + 1, dtype=np.int64)
            recv[:] = 0
            call_for(MPI, collective, send.view(np.uint8), recv.view(np.uint8), count * 8, MPI.INT64_T, 8,
                     comm.Get_size(), op=op)(comm)

        def digest(comm):
            # every rank's whole result: block-wise algorithms combine blocks in different orders
            from ..measure import exchange
            digests = exchange.gather(comm, hashlib.sha1(recv.tobytes()).hexdigest()[:16])
            return "/".join(digests) if comm.Get_rank() == 0 else None
        call.digest = digest
        return call
    reduction = is_reduction(collective)
    size, mpitype = (4, MPI.FLOAT) if reduction and msg % 4 == 0 else (1, MPI.UINT8_T if reduction else MPI.BYTE)
    send_bytes, recv_bytes = buffer_bytes(collective, msg, comm_size)
    send, recv = np.zeros(send_bytes, dtype=np.uint8), np.zeros(recv_bytes, dtype=np.uint8)
    return call_for(MPI, collective, send, recv, msg, mpitype, size, comm_size)


def checkable(kind, collective, msg):
    if kind == "order":
        return is_reduction(collective) and msg > 0 and msg % 8 == 0
    return True


def _observe(comm, call, traffic, probe):
    """The fingerprint of one call(comm) (rank 0; None elsewhere): traffic, order, and the probe's part."""
    from .traffic import gather_pattern
    comm.Barrier()   # earlier messages and calls stay out
    traffic_before = traffic.read() if traffic is not None else None
    probe_before = probe.snapshot() if probe is not None else None
    if call is not None:
        call(comm)
    seen = probe.since(probe_before) if probe is not None else None
    if traffic is not None:
        base = gather_pattern(comm, traffic_before, traffic.read())
        base = [list(row) for row in base] if base is not None else None
    else:
        digest = getattr(call, "digest", None)
        base = digest(comm) if digest is not None else None
        comm.Barrier()
    if probe is None:
        return base
    from ..measure import exchange
    seen = exchange.gather(comm, seen)     # point to point: the forced collective may be gather itself
    return [base, [[rank, part] for rank, part in enumerate(seen)]] if comm.Get_rank() == 0 else None


def run(spec):
    """One launch: the spec's points, or (ForcedLaunches, verify/follow.py) each spec of {"batch": [spec, ...]} in
    turn; rank 0 returns {"points"} or {"batch": [{"points"}, ...]}."""
    if "batch" in spec:
        outs = [run_one(part) for part in spec["batch"]]
        return {"batch": outs} if all(out is not None for out in outs) else None
    return run_one(spec)


def run_one(spec):
    from mpi4py import MPI
    from ..libraries.fallbacks import fails
    from ..libraries import open_library
    from ..measure.mpit import MPIT
    from ..measure.timing import wait_quietly

    world = MPI.COMM_WORLD
    rank = world.Get_rank()
    collective, kind = spec["collective"], spec["kind"]
    mpit = MPIT()
    library = open_library(MPI.Get_library_version(), mpit)
    traffic = None
    if kind == "traffic":
        from .traffic import Traffic
        traffic = Traffic(mpit)
    op = MPI.Op.Create(_order_op, commute=True) if kind == "order" else None
    probe = None
    if os.environ.get(SHIM_ENV):
        from .probe import Probe
        probe = Probe(world)
    forced = [norm_arm(f) for f in spec["forced"]] if spec.get("forced") else None
    if forced and spec.get("identify"):   # every algorithm too: which one did the default run? (default_ran.py)
        forced += [a for a in ((label, 0, ()) for label in library.default_algorithms(collective)) if a not in forced]
    forcing = Forcing(library, collective)
    if forced:
        library.prepare(collective)
    results = []
    from .layouts import split_unit, units_of
    units, groups = units_of(MPI, world, spec["points"], MPI.Get_processor_name())
    for n, layout in units:
        member, base = split_unit(MPI, world, n, layout, groups)
        msgs = [p[1] for p in spec["points"] if p[0] == n and tuple(p[2:4]) == layout]
        if member:
            arms, arm_of = {}, {}
            spans = bool(spec.get("han")) and spans_nodes(MPI, base)   # coll/han's: the default, not the forced
            for arm in forced or [None]:
                if arm is not None:
                    forcing.activate(arm)
                name = arm_key(arm) if arm is not None else "library"
                flat = spans and (norm_arm(arm) != DEFAULT_ARM if arm is not None else bool(spec.get("flat_library")))
                arms[name] = flat_dup(MPI, base, library) if flat else base.Dup()   # forcing is bound at creation
                arm_of[name] = arm
            if forced and library.carries_forcing:
                forcing.activate(DEFAULT_ARM)
            for k, m in enumerate(msgs):
                row = {"comm": n, "msg": m, "arms": {}, **({"layout": list(layout)} if layout else {}),
                       **({"han": True} if spans else {})}
                if checkable(kind, collective, m) or probe is not None:
                    call = _calls(MPI, collective, m, kind, op, n) if checkable(kind, collective, m) else None
                    if call is None:   # the probe alone: the collective with measure's own call
                        call = _calls(MPI, collective, m, "traffic", None, n)
                    for name, comm in arms.items():
                        if arm_of[name] is not None and fails(library.name, collective, arm_of[name][0], arm_of[name][1], n, m):
                            continue     # an algorithm the library refuses at this size (an error, not a fallback)
                        if forced and not library.carries_forcing:   # MPICH reads its cvar at the call
                            forcing.activate(arm_of[name])
                        if k == 0 and spans:   # coll/han makes its sub-communicators at its first call (their
                            _observe(comm, call, traffic, probe)   # allreduce and allgather): not in the print
                        row["arms"][name] = _observe(comm, call, traffic, probe)
                    if forced and not library.carries_forcing:
                        forcing.activate(DEFAULT_ARM)
                results.append(row)
            for comm in arms.values():
                comm.Free()
            base.Free()
        wait_quietly(world)
    if groups is not None:
        groups.free()
    if traffic is not None:
        traffic.close()
    if op is not None:
        op.Free()
    return {"points": results} if rank == 0 else None



if __name__ == "__main__":
    worker_main(run, sys.argv[1:])
