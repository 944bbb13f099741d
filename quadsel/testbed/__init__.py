"""A cluster of hosts on one machine (Linux network namespaces), a real Slurm on those hosts, and the launcher
commands that run MPI jobs across hosts: the test fixtures of the multi-host work (docs/cluster.md, "A cluster on
one machine", "A Slurm cluster on one machine")."""

from .agent import KEEP_ENV, agent_script, remote_command, write_agent
from .launchers import FLAVORS, host_options, launcher_command
from .netns import Host, NetnsCluster, down_all, netns_list, sweep_stale, unavailable
from .slurm import SlurmCluster

__all__ = ["FLAVORS", "KEEP_ENV", "Host", "NetnsCluster", "SlurmCluster", "agent_script", "down_all", "host_options", "launcher_command",
           "netns_list", "remote_command", "sweep_stale", "unavailable", "write_agent"]
