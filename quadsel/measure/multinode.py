"""A library's multi-node component (Open MPI's coll/han) in a measurement: its default timed as the library's
default, the forced algorithms on communicators it may not take.

On a communicator whose ranks span 2+ nodes Open MPI 5.0.x hands bcast, reduce, allreduce, allgather(v), gather,
scatter and barrier to coll/han (the library class's `multinode_collectives`), whose default is then what users
run there. coll/tuned's algorithms, which quadsel forces, run only where coll/han is out of the way: on a duplicate
created with the library's `multinode_info` (Open MPI: `ompi_comm_coll_preference=^han`, which coll/han itself
sets on its sub-communicators). So at such a point the `default` method runs on a communicator coll/han takes and
every forced method on one it may not take, interleaved in the same launch (measure's MethodComms, verify's timing
and fingerprint jobs). A user who decided about coll/han (OMPI_MCA_coll, OMPI_MCA_coll_han_priority) gets none of
this: their default is what they run, and `multinode_collectives` is empty.
"""


def taken(library, collective):
    """Does the library's multi-node component take `collective` across nodes here (the user not having decided)?"""
    return library.multinode_info is not None and collective in library.multinode_collectives(library.version)


def spans_nodes(MPI, comm):
    """The communicator has ranks on 2+ nodes (collective over `comm`): a multi-node component would take it."""
    local = comm.Split_type(MPI.COMM_TYPE_SHARED, 0)
    try:
        return comm.allreduce(1 if local.Get_size() < comm.Get_size() else 0, op=MPI.MAX) == 1
    finally:
        local.Free()


def flat_dup(MPI, base, library):
    """A duplicate of `base` that the library's multi-node component may not take (the info it reads when it selects
    the communicator's collective components)."""
    key, value = library.multinode_info
    info = MPI.Info.Create()
    info.Set(key, value)
    try:
        return base.Dup_with_info(info)
    finally:
        info.Free()


def record(library, collective, layouts):
    """The metadata's `multinode` entry of a sweep over `layouts` [(nodes, ppn)]: which layouts' `default` rows are
    the multi-node component's choice (the forced methods ran on communicators it may not take); None where none
    is (one node, another collective, a library without one, a user who decided)."""
    across = [f"{n}x{p}" for n, p in layouts or () if n >= 2]
    if not across or not taken(library, collective):
        return None
    key, value = library.multinode_info
    return {"component": library.multinode_component, "default_layouts": across,
            "forced_on": f"duplicates with the info {key}={value}"}
