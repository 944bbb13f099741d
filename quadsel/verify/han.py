"""Open MPI's coll/han in verify across hosts: the library default as users run it, the selection as tune deploys it.

On 2+ nodes Open MPI 5.0.x hands bcast, reduce, allreduce, allgather(v), gather, scatter and barrier to coll/han
(priority 35, above coll/tuned's 30; main also alltoall(v), gatherv, scatterv), unless the user switched it off
(OMPI_MCA_coll, OMPI_MCA_coll_han_priority): the facts are the Open MPI class's (libraries/openmpi.py
`multinode_collectives`, HAN_OFF). quadsel measures and forces coll/tuned's
algorithms, and `quadsel tune` deploys them across hosts by handing each deployed collective from coll/han to
coll/tuned (a coll/han rules file that says `tuned` for every size, targets/ompi_han.route_to_tuned) whose own
rules file then decides it whole. The other collectives keep coll/han. So at a point of such a collective whose
communicator spans 2+ nodes (a layout's, or the first n ranks of a 2-D tree's grid: `spans_nodes`, decided in the
timing job, which then `mark`s the points):

- the **default** arm runs on a communicator coll/han may take: the library's default as the user runs it today;
- every other arm runs on a communicator created with the info key `ompi_comm_coll_preference=^han` (coll/han
  disqualified for it: coll/tuned decides, as in the deployment), in the same launch, interleaved with the default;
- where the selection hands the size back to the library it runs coll/tuned's own decision there
  (forcing.TUNED_DEFAULT_ARM, shown as `default (han=0)`): a change from the default like any other, timed and
  judged as one;
- the follow check's file launch loads the routing file (`write_route`) beside coll/tuned's rules file, with
  coll/han on, through the library's `rules_environment` as tune's tuned.env does, so the proof is of the mechanism
  the deployment uses. Its forced launches keep coll/han
  off (flat coll/tuned algorithms to compare with).

Not modelled: a nested call inside a flat algorithm (the bcast of a composed allreduce) goes to coll/han in the
deployment when its collective is not deployed, to coll/tuned in verify's timing (docs/cluster.md).
"""

import os

from ..libraries import get as get_library

INFO_KEY = "ompi_comm_coll_preference"
WITHOUT_HAN = "^han"
ROUTE_FILE = "han-route.rules"


def collectives(library, library_version):
    """The collectives a multi-node component (coll/han) takes on this library across nodes; () for libraries
    without one or when the user decided about it."""
    return get_library(library).multinode_collectives(library_version)


def spans_nodes(MPI, comm):
    """The communicator has ranks on 2+ nodes (collective over `comm`): coll/han would take it."""
    local = comm.Split_type(MPI.COMM_TYPE_SHARED, 0)
    try:
        return comm.allreduce(1 if local.Get_size() < comm.Get_size() else 0, op=MPI.MAX) == 1
    finally:
        local.Free()


def mark(points):
    """Mark the points of one communicator that spans nodes (a spec of `han`): `han` on each, and a hand-back to the
    library timed as coll/tuned's own decision (forcing.TUNED_DEFAULT_ARM). Returns the points."""
    from .forcing import DEFAULT_ARM, TUNED_DEFAULT_ARM, json_arm, norm_arm
    for p in points:
        p["han"] = True
        if norm_arm(p["quadsel"]) == DEFAULT_ARM:
            p["quadsel"] = json_arm(TUNED_DEFAULT_ARM)
    return points


def without_han(MPI, base):
    """A duplicate of `base` that coll/han may not take (Open MPI reads the info key when it selects the
    communicator's collective components; other libraries ignore an unknown key)."""
    info = MPI.Info.Create()
    info.Set(INFO_KEY, WITHOUT_HAN)
    try:
        return base.Dup_with_info(info)
    finally:
        info.Free()


def write_route(workdir, han_collectives):
    """coll/han's routing file for `han_collectives`, written to `workdir`: its absolute path."""
    from ..output import write_text
    from ..targets.ompi_han import route_to_tuned
    path = os.path.join(workdir, ROUTE_FILE)
    write_text(path, route_to_tuned(han_collectives))
    return os.path.abspath(path)


def note(rows):
    """One line for verify's table when some rows' default is coll/han's, else None."""
    marked_rows = [r for r in rows if r.get("han")]
    if not marked_rows:
        return None
    colls = sorted({r["collective"] for r in marked_rows})
    return (f"coll/han: at {len(marked_rows)} point(s) of {', '.join(colls)} on 2+ nodes the default is Open MPI's "
            "own choice with coll/han, as jobs run it; the selection is timed as tune deploys it, handed to "
            "coll/tuned (`default (han=0)`: coll/tuned's own decision there)")
