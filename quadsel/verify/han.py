"""Open MPI's coll/han in verify across hosts: its default is the library's default there, and a measured choice.

On 2+ nodes Open MPI 5.0.x hands bcast, reduce, allreduce, allgather(v), gather, scatter and barrier to coll/han
(priority 35, above coll/tuned's 30; main also alltoall(v), gatherv, scatterv), unless the user switched it off
(OMPI_MCA_coll, OMPI_MCA_coll_han_priority): the facts are the Open MPI class's (libraries/openmpi.py
`multinode_collectives`, HAN_OFF). quadsel measure times coll/han's default as the library's default there and
coll/tuned's forced algorithms on communicators coll/han may not take (measure/multinode.py), so a tree keeps
`default` where coll/han wins and names a coll/tuned algorithm elsewhere. The deployment is that pair of files per
ranks-per-node: coll/han's rules file (targets/ompi_han.py: `han` where the tree keeps the default, `tuned`
elsewhere) and coll/tuned's rules file, which then runs the tree's algorithm. So at a point of such a collective
whose communicator spans 2+ nodes (a layout's, or the first n ranks of a 2-D tree's grid: decided in the timing job,
which then `mark`s the points):

- the **default** arm, and the selection where it keeps the default, run on a communicator coll/han takes;
- every other arm runs on a duplicate created with the info key `ompi_comm_coll_preference=^han` (coll/han
  disqualified for it: coll/tuned decides, as coll/han's file routes it), in the same launch, interleaved;
- the follow check's file launch loads coll/han's file (`write_han_file`) beside coll/tuned's, with coll/han on, through
  the library's `rules_environment` as tune's tuned.env does; its forced launch runs the default with coll/han and
  the forced algorithms without it. Where the file keeps coll/han the check proves that coll/han's algorithm ran
  (the probe counts coll/han's functions, verify/probe.py), elsewhere that coll/tuned ran the tree's algorithm.
  pml/monitoring (the traffic counter) is not loaded there: Open MPI 5.0.11 crashes in coll/han's bcast with it.

Not modelled: coll/han's steps inside a node follow coll/tuned's rules file in the deployment (its sub-communicators
are coll/tuned's) and coll/tuned's fixed decision in verify's timing; and a nested call inside a flat algorithm
(the bcast of a composed allreduce) goes to coll/han in the deployment, to coll/tuned in verify's timing
(docs/cluster.md).
"""

import os

from ..libraries import get as get_library


def collectives(library, library_version):
    """The collectives a multi-node component (coll/han) takes on this library across nodes; () for libraries
    without one or when the user decided about it."""
    return get_library(library).multinode_collectives(library_version)


def mark(points):
    """Mark the points of one communicator that spans nodes (a spec of `han`): their default is coll/han's, and so
    is the selection's where it keeps the default. Returns the points."""
    for p in points:
        p["han"] = True
    return points


def han_text(fns, han_collectives):
    """coll/han's rules file for the decision functions (one layer each: a forest's member) of the collectives it
    takes, or None when it takes none of them (targets/ompi_han.py)."""
    from ..targets import ompi_han
    mine = [fn for fn in fns if fn.collective in set(han_collectives)]
    return ompi_han.emit(mine) if mine else None


def write_han_file(workdir, fns, han_collectives):
    """han_text written to `workdir`: its absolute path, or None."""
    from ..output import write_text
    text = han_text(fns, han_collectives)
    if text is None:
        return None
    path = os.path.join(workdir, "han.rules")
    write_text(path, text)
    return os.path.abspath(path)


def note(rows):
    """One line for verify's table when some rows' default is coll/han's, else None."""
    marked_rows = [r for r in rows if r.get("han")]
    if not marked_rows:
        return None
    colls = sorted({r["collective"] for r in marked_rows})
    return (f"coll/han: at {len(marked_rows)} point(s) of {', '.join(colls)} on 2+ nodes the default is Open MPI's "
            "own choice with coll/han, as jobs run it; the selection keeps it where it keeps the default and runs "
            "coll/tuned's algorithm elsewhere (coll/han's rules file routes each size)")
