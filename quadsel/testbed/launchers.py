"""The launcher command of each MPI library for a multi-host job started through an ssh stand-in (the agent).

`launcher_command(flavor, mpiexec, hosts, ppn, agent, interface)` → (argv, env): the mpiexec prefix of a job of
len(hosts) × ppn ranks, ppn consecutive ranks on each host (ranks 0..ppn-1 on hosts[0]), and the environment
variables it needs on top of the caller's. Append the program and its arguments to argv. Each library's class
writes its own (libraries/: `host_launcher`); each option is explained in docs/cluster.md ("A cluster on one
machine").

bind=False (the default) leaves the ranks unbound: the namespace cluster's hosts share the machine's cores,
and each library would otherwise pin rank k of every host to the same core k, so that a ping-pong between
ranks 0 and ppn of two hosts ran on one core. On a real cluster pass bind=True (the libraries' default binding).
"""

import ipaddress

from ..errors import QuadselError
from ..libraries import CLASSES, get as get_library

FLAVORS = tuple(cls.name for cls in CLASSES)


def launcher_command(flavor, mpiexec, hosts, ppn, agent, interface, network=None, bind=False):
    """(argv, env) of `flavor`'s mpiexec for ppn ranks on each of `hosts` (addresses or hostnames).

    agent: the executable that stands in for ssh (one file path). interface: the hosts' network interface
    (Hydra's -iface). network: the hosts' subnet (CIDR) for Open MPI's interface selection; default: interface.
    """
    hosts = [str(h) for h in hosts]
    if flavor not in FLAVORS:
        raise QuadselError(f"launcher flavor {flavor!r}: one of {', '.join(FLAVORS)}")
    if not hosts or any(not h or "," in h or ":" in h or h.startswith("-") for h in hosts):
        raise QuadselError(f"launcher hosts {hosts!r}: one or more host names or IPv4 addresses")
    if not isinstance(ppn, int) or ppn < 1:
        raise QuadselError(f"ranks per host {ppn!r}: a positive integer")
    if network is not None:
        ipaddress.ip_network(network)   # ValueError on a malformed subnet
    return get_library(flavor).host_launcher(mpiexec, hosts, ppn, agent, interface, network, bind)


def host_options(flavor, mpiexec, cluster, ppn):
    """(the host options of a job of `ppn` ranks on each of the cluster's hosts, without `-n N`, as one shell-quoted
    string for quadsel's --mpiexec-args; the job's environment)."""
    import shlex
    argv, env = launcher_command(flavor, mpiexec, [h.address for h in cluster.hosts], ppn, cluster.agent,
                                 cluster.interface, network=str(cluster.network))
    options = argv[1:]
    at = options.index("-n")
    del options[at:at + 2]
    return shlex.join(options), env
