"""The α-tree and multilevel α-tree broadcast on point-to-point MPI, and the paper's ring semi-barrier.

The tree is libraries/alphatree.py (free of MPI); here it runs: a rank receives from its parent, then posts a
send to each of its children in the tree's order and waits for them all (as Open MPI's unsegmented tree
broadcasts do). The levels of a multilevel tree come from MPI_Comm_split_type: node = MPI_COMM_TYPE_SHARED;
socket = MPI_COMM_TYPE_HW_GUIDED with mpi_hw_resource_type "socket" (Open MPI 5 offers it; an MPI that does
not gets one socket per node, and the metadata says so). `blocks:K[,J]` emulates nodes of K consecutive ranks
(and sockets of J) on one host, to exercise the levels where there is one node.
"""

from ..errors import QuadselError
from . import alphatree

TAG = 7311            # the α-tree's messages (each method runs on a communicator of its own)
RING_TAG = 7312       # the ring semi-barrier's
LEVEL_KINDS = ("node", "socket")


def parse_levels(text):
    """`auto` -> "auto"; `blocks:4,2` -> (4, 2): the emulated group sizes, outermost first."""
    text = (text or "auto").strip().lower()
    if text == "auto":
        return "auto"
    kind, _, sizes = text.partition(":")
    try:
        blocks = tuple(int(s) for s in sizes.split(","))
    except ValueError:
        blocks = ()
    if kind != "blocks" or not blocks or len(blocks) > alphatree.MAX_LEVELS - 1 or min(blocks) < 1:
        raise QuadselError(f"--alpha-levels {text!r}: use auto or blocks:K[,J] (ranks per emulated node[, socket])")
    return blocks


def alpha_methods(alphas, levels):
    """The α-tree labels of `--alpha LIST --alpha-depth L`: every L-tuple of the values."""
    import itertools
    percents = [alphatree.percent(a) for a in alphas]
    return [alphatree.label(p) for p in itertools.product(dict.fromkeys(percents), repeat=levels)]


def split_algorithms(collective, names, extra=()):
    """(α-tree labels, the library's names or None) of --algorithms (None = all the library's) and --alpha."""
    alphas = [alphatree.canonical(n) for n in (names or []) if alphatree.is_alpha(n)] + list(extra)
    rest = None if names is None else [n for n in names if not alphatree.is_alpha(n)]
    if alphas and collective != "bcast":
        raise QuadselError(f"α-tree methods are broadcasts; {collective} has none")
    if names is not None and not rest and alphas:
        rest = []          # only α-trees: none of the library's algorithms
    return list(dict.fromkeys(alphas)), rest


def level_keys(MPI, comm, levels, depth):
    """[per rank of comm: its group at each of `depth` outer levels] and a description of each level."""
    rank, size = comm.Get_rank(), comm.Get_size()
    if depth == 0:
        return [()] * size, []
    if levels != "auto":
        keys = [tuple(r // levels[min(i, len(levels) - 1)] for i in range(depth)) for r in range(size)]
        kinds = [f"emulated {LEVEL_KINDS[i]}: blocks of {levels[min(i, len(levels) - 1)]} ranks" for i in range(depth)]
    else:
        mine, kinds, parent = [], [], comm
        for i in range(depth):
            sub, kind = _split(MPI, parent, LEVEL_KINDS[i])
            mine.append(sub.allreduce(rank, op=MPI.MIN))     # a group is named by its first rank in comm
            kinds.append(kind)
            if parent is not comm:
                parent.Free()
            parent = sub
        if parent is not comm:
            parent.Free()
        keys = comm.allgather(tuple(mine))
    described = []
    for i, kind in enumerate(kinds):
        sizes = {}
        for k in keys:
            sizes[k[:i + 1]] = sizes.get(k[:i + 1], 0) + 1
        described.append({"level": LEVEL_KINDS[i], "how": kind, "group_sizes": sorted(sizes.values(), reverse=True)})
    return keys, described


def _split(MPI, comm, kind):
    """(sub-communicator of `comm`, how it was made) for one level of the hierarchy."""
    rank = comm.Get_rank()
    if kind == "node":
        return comm.Split_type(MPI.COMM_TYPE_SHARED, key=rank), "MPI_COMM_TYPE_SHARED"
    hw = getattr(MPI, "COMM_TYPE_HW_GUIDED", None)
    sub = MPI.COMM_NULL
    if hw is not None:
        info = MPI.Info.Create()
        info.Set("mpi_hw_resource_type", kind)
        try:
            sub = comm.Split_type(hw, key=rank, info=info)
        except MPI.Exception:
            sub = MPI.COMM_NULL
        info.Free()
    # MPI_COMM_NULL on any rank means the library does not offer it there: then one group per parent
    offered = comm.allreduce(0 if sub == MPI.COMM_NULL else 1, op=MPI.MIN)
    if offered:
        return sub, f"MPI_COMM_TYPE_HW_GUIDED, mpi_hw_resource_type={kind}"
    if sub != MPI.COMM_NULL:
        sub.Free()
    return comm.Dup(), f"not offered by this MPI (MPI_COMM_TYPE_HW_GUIDED {kind}): one {kind} per node"


class AlphaBcast:
    """One rank's part of one α-tree broadcast on `comm` (collective to build: levels are split there)."""

    def __init__(self, MPI, comm, label, keys, root=0):
        percents = alphatree.parse(label)
        self.MPI = MPI
        tree = alphatree.schedule(comm.Get_size(), root, percents, keys)
        rank = comm.Get_rank()
        self.parent, self.children = tree.parent[rank], tree.children[rank]

    def __call__(self, comm, buffer):
        if self.parent is not None:
            comm.Recv(buffer, source=self.parent, tag=TAG)
        if self.children:
            self.MPI.Request.Waitall([comm.Isend(buffer, dest=c, tag=TAG) for c in self.children])


def ring_semi_barrier(MPI, root=0):
    """The paper's semi-barrier (§4.2): a zero-byte token from the root around the ring in the opposite
    direction (rank r receives from r + 1, then sends to r - 1), ending at the root. Every rank leaves it
    after the previous call is over at its successor; the root leaves last, so the others wait in the next
    call for it rather than in a barrier."""
    import numpy as np
    empty = [np.zeros(1, dtype=np.uint8), 0, MPI.BYTE]

    def sync(comm):
        size = comm.Get_size()
        if size == 1:
            return
        rank = comm.Get_rank()
        left, right = (rank - 1) % size, (rank + 1) % size
        if rank == root:
            comm.Send(empty, dest=left, tag=RING_TAG)
            comm.Recv(empty, source=right, tag=RING_TAG)
        else:
            comm.Recv(empty, source=right, tag=RING_TAG)
            comm.Send(empty, dest=left, tag=RING_TAG)
    sync.origin = root
    return sync
