"""Layouts of a multi-host job: nodes x ranks per node (ppn), each formed on purpose from the node groups.

The node groups come from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): the ranks that share memory, i.e. one
host. Nodes are numbered by their lowest world rank (node 0 holds world rank 0); within a node the ranks keep
their world order (local rank 0, 1, ...). Layout (nodes, ppn) = the first `nodes` node groups, the first `ppn`
ranks of each, in node-major ("block") order: rank r of the layout's communicator is local rank r % ppn of node
r // ppn. That is the order launchers give by default (--map-by slot/core, Hydra's -ppn), so the layout's
communicator looks like a job of nodes x ppn ranks started alone.
"""

from ..errors import QuadselError
from . import exchange
from ..layout import Layout, parse_layouts  # noqa: F401 (measure's layouts are quadsel.layout's)
def _powers_and(top):
    values, v = [], 1
    while v < top:
        values.append(v)
        v *= 2
    return values + [top]


def default_layouts(nodes, ppn, comm_sizes=None):
    """Every (n, p) with n in 1..nodes and p in 1..ppn, each a power of two or the maximum, n x p >= 2 (and in
    `comm_sizes` when given), ordered by communicator size, then by nodes."""
    out = [Layout(n, p) for n in _powers_and(nodes) for p in _powers_and(ppn)
           if n * p >= 2 and (comm_sizes is None or n * p in comm_sizes)]
    return sorted(out, key=lambda lp: (lp[0] * lp[1], lp[0]))


class NodeGroups:
    """This rank's place among the job's node groups (collective over `world` to build)."""

    def __init__(self, MPI, world, hostname):
        local = world.Split_type(MPI.COMM_TYPE_SHARED, 0)
        self.local_rank, local_size = local.Get_rank(), local.Get_size()
        leader = local.allreduce(world.Get_rank(), op=MPI.MIN)
        self.node_comm = local
        table = exchange.allgather(world, (leader, self.local_rank, hostname))
        leaders = sorted({entry[0] for entry in table})
        self.node = leaders.index(leader)
        self.leaders = leaders                                   # world rank of local rank 0 of each node
        self.sizes = [sum(1 for entry in table if entry[0] == lead) for lead in leaders]
        self.hostnames = [next(entry[2] for entry in table if entry[0] == lead) for lead in leaders]
        self.count = len(leaders)
        assert local_size == self.sizes[self.node]

    @property
    def min_ppn(self):
        return min(self.sizes)

    def check(self, layouts):
        """QuadselError naming the first layout this job cannot form."""
        for nodes, ppn in layouts:
            if nodes > self.count or ppn > min(self.sizes[:nodes]):
                raise QuadselError(f"layout {nodes}x{ppn} does not fit this job: {self.count} node(s) with "
                                   f"{', '.join(map(str, self.sizes))} rank(s) each")

    def place(self, layout):
        """(member?, rank in the layout's communicator) of this rank: node-major (block) order."""
        nodes, ppn = layout
        member = self.node < nodes and self.local_rank < ppn
        return member, self.node * ppn + self.local_rank

    def hosts(self, layout):
        return self.hostnames[:layout[0]]

    def free(self):
        self.node_comm.Free()

