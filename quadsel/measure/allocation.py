"""The Slurm allocation quadsel runs in (`salloc`, an `sbatch` script): its nodes and tasks per node, read from Slurm's
own variables, and the launcher options that put a job on them (docs/cluster.md, "Slurm").

Inside an allocation `quadsel measure`, `verify` and `tune` need no launcher options: the ranks default to the
allocation's tasks, and on two nodes or more every launch gets the library's host options for the allocation's
nodes (its class's `allocation_args`), so the jobs are the allocation's job steps (Open MPI's mpiexec starts its
daemons with srun, Hydra its proxies) and every layout nodes x ranks per node of the allocation is measured. Facts
measured on the Slurm test bed (docs/cluster.md): SLURM_JOB_NUM_NODES is the node count; tasks per node are only
in SLURM_TASKS_PER_NODE, always set, in Slurm's compressed form (`2(x2)`, `2,1`); `scontrol show hostnames` expands
SLURM_JOB_NODELIST. Outside an allocation, `slurm_seen` tells whether Slurm is there (sinfo, bounded in time: it
takes 9 s to fail when slurmctld is down).
"""

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Optional, Tuple

from ..errors import QuadselError, one_line

_COUNT = re.compile(r"^(\d+)(?:\(x(\d+)\))?$")


@dataclass(frozen=True)
class Allocation:
    job_id: str
    hosts: Tuple[str, ...]
    tasks_per_node: Tuple[int, ...]

    @property
    def nodes(self):
        return len(self.hosts)

    @property
    def ntasks(self):
        return sum(self.tasks_per_node)

    @property
    def ppn(self):
        """Ranks per node every node has (the fewest): the layouts a job of the allocation can form."""
        return min(self.tasks_per_node)

    @property
    def shape(self):
        """`2x2` (nodes x tasks each; `2:2,1` when uneven): what tune's journal records, so that a job requeued or
        submitted again onto other nodes of the same shape continues the run."""
        counts = set(self.tasks_per_node)
        return (f"{self.nodes}x{self.tasks_per_node[0]}" if len(counts) == 1 else
                f"{self.nodes}:{','.join(map(str, self.tasks_per_node))}")

    def describe(self):
        """`Slurm job 42: 2 nodes (node1, node2), 2 tasks each` (what report.md and the notes say)."""
        each = (f"{self.tasks_per_node[0]} tasks each" if len(set(self.tasks_per_node)) == 1 else
                "tasks " + ",".join(map(str, self.tasks_per_node)))
        names = ", ".join(self.hosts[:6]) + (" ..." if self.nodes > 6 else "")
        return f"Slurm job {one_line(self.job_id, 40)}: {self.nodes} node{'s' if self.nodes != 1 else ''} ({names}), {each}"


def tasks_per_node(text):
    """[2, 2, 1] of SLURM_TASKS_PER_NODE's `2(x2),1`; QuadselError on anything else."""
    out = []
    for item in str(text).split(","):
        match = _COUNT.match(item.strip())
        if not match:
            raise QuadselError(f"SLURM_TASKS_PER_NODE {one_line(text, 60)!r}: not Slurm's form (e.g. 2(x2),1)")
        out += [int(match.group(1))] * int(match.group(2) or 1)
    return out


def hostnames(nodelist, env=None):
    """The host names of a Slurm node list (`node[1-2],gpu03`): `scontrol show hostnames`, else expanded here."""
    scontrol = shutil.which("scontrol")
    if scontrol:
        try:
            done = subprocess.run([scontrol, "show", "hostnames", nodelist], capture_output=True, text=True,
                                  timeout=30, env=env)
            names = done.stdout.split()
            if done.returncode == 0 and names:
                return names
        except (OSError, subprocess.SubprocessError):
            pass
    return expand(nodelist)


def expand(nodelist):
    """`node[1-3,7],gpu[01-02]` -> node1 node2 node3 node7 gpu01 gpu02 (Slurm's hostlist form, one bracket level)."""
    out = []
    for prefix, ranges, plain in re.findall(r"([^,\[\]]*)\[([^\]]*)\]|([^,\[\]]+)", str(nodelist)):
        if plain:
            out.append(plain.strip())
            continue
        for part in ranges.split(","):
            lo, _, hi = part.partition("-")
            if not lo.isdigit() or (hi and not hi.isdigit()):
                raise QuadselError(f"SLURM_JOB_NODELIST {one_line(nodelist, 60)!r}: not Slurm's node list form")
            width = len(lo)
            out += [f"{prefix}{n:0{width}d}" for n in range(int(lo), int(hi or lo) + 1)]
    return out


def current(env=None):
    """The Allocation quadsel runs in, or None: outside one, or inside one of its job steps (srun: the launcher is
    the user's then, as under mpiexec)."""
    env = os.environ if env is None else env
    if not env.get("SLURM_JOB_ID") or env.get("SLURM_STEP_ID") or not env.get("SLURM_TASKS_PER_NODE"):
        return None
    counts = tasks_per_node(env["SLURM_TASKS_PER_NODE"])
    hosts = hostnames(env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST") or "", env=dict(env))
    if len(hosts) != len(counts):
        raise QuadselError(f"Slurm job {one_line(env['SLURM_JOB_ID'], 40)}: {len(hosts)} nodes in SLURM_JOB_NODELIST "
                           f"but {len(counts)} in SLURM_TASKS_PER_NODE")
    return Allocation(env["SLURM_JOB_ID"], tuple(hosts), tuple(counts))


def resolve(np_, option="--np", env=None):
    """(ranks, Allocation or None): inside an allocation --np defaults to its tasks, and one that contradicts it
    (another number on two nodes or more, more than its tasks on one) is refused in one line."""
    found = current(env)
    if found is None:
        return np_, None
    if np_ is None:
        return found.ntasks, found
    if (found.nodes > 1 and np_ != found.ntasks) or np_ > found.ntasks:
        raise QuadselError(f"{option} {np_} contradicts the allocation ({found.describe()}: {found.ntasks} tasks): "
                           f"leave {option} out, or ask Slurm for what you want (salloc -N NODES "
                           "--ntasks-per-node PPN)")
    return np_, found


def launcher(np_, mpiexec_args, mpiexec=None, option="--np", env=None):
    """(ranks, launcher options, Allocation or None) of a command that starts its own jobs (measure --np, verify,
    tune). Outside an allocation (or inside an MPI job) they are the user's. Inside one --np defaults to its tasks,
    and without --mpiexec-args a job on two nodes or more gets the host options of the launcher's library for the
    allocation's nodes (`allocation_args`), so that it spans them as Slurm placed the tasks."""
    import shlex
    from . import launch
    if launch.inside_mpi_job(env):
        return np_, mpiexec_args, None
    np_, found = resolve(np_, option, env)
    if found is None or mpiexec_args is not None or found.nodes < 2:
        return np_, mpiexec_args, found
    from ..libraries import get
    found_mpiexec = launch.find_mpiexec(mpiexec)
    flavor = launch.mpiexec_flavor(found_mpiexec)
    if flavor == "unknown":
        raise QuadselError(f"{found.describe()}: quadsel cannot tell whose launcher {one_line(found_mpiexec)} is, so "
                           "not which host options place a job on the allocation's nodes: give them with "
                           "--mpiexec-args")
    library = get(flavor)
    return np_, shlex.join(library.allocation_args(found)), found


def slurm_seen(timeout=5):
    """`sinfo`'s count of nodes when Slurm answers here (outside an allocation), else None."""
    sinfo = shutil.which("sinfo")
    if not sinfo:
        return None
    try:
        done = subprocess.run([sinfo, "-h", "-o", "%D"], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    counts = [int(w) for w in done.stdout.split() if w.isdigit()]
    return sum(counts) if done.returncode == 0 and counts else None


def outside_note(np_, env=None):
    """tune's one line when Slurm is there and unused: outside an allocation, more ranks than this host's cores,
    and sinfo answers here; else None."""
    env = os.environ if env is None else env
    if env.get("SLURM_JOB_ID") or np_ <= (os.cpu_count() or 1):
        return None
    nodes = slurm_seen()
    if not nodes:
        return None
    return (f"note: Slurm is here (sinfo: {nodes} node{'s' if nodes != 1 else ''}) but tune runs outside an "
            f"allocation: its {np_} ranks all run on this host; to tune the cluster run it inside one (salloc -N "
            "NODES --ntasks-per-node PPN quadsel tune ...) or write its batch job (quadsel tune --sbatch)")
