"""A cluster of N hosts on this machine, made of Linux network namespaces (root only).

Each host is a network namespace with an address in 198.18.0.0/15 (RFC 2544's range for network benchmarks,
the only range used) on its `eth0`, the far end of a veth pair whose other end sits on a bridge in one more
namespace. Processes enter a host through the agent script (the launcher's stand-in for ssh, agent.py) or
`on_host`, which also give them the host's hostname (a UTS namespace) and boot id. Loopback is up in every
host; nothing is added to the machine's own namespace: the veth pairs are made inside the bridge namespace.

Names are unique per run (`quadsel-<pid>-<random>-h1`, `…-br`), so two runs at once never collide (the
addresses may repeat: each run's network is a separate set of namespaces). Everything made is removed by
`down()`: on leaving the `with` block, at exit, and on SIGTERM or SIGHUP when their handler was the default
one. What a SIGKILL leaves behind is removed by the next `up()` on this machine (`sweep_stale`), as its
names carry the pid of a process that no longer exists.
"""

import atexit
import ipaddress
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..errors import QuadselError
from .agent import KEEP_ENV, on_host_argv, write_agent

BENCHMARK_RANGE = ipaddress.ip_network("198.18.0.0/15")
PREFIX = "quadsel"
INTERFACE = "eth0"
_NAME = re.compile(rf"^{PREFIX}-(\d+)-[0-9a-f]{{6}}-(?:h\d+|br)$")
_HOSTNAME = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,40}$")
NETNS_ETC = Path("/etc/netns")   # `ip netns exec NS` bind-mounts /etc/netns/NS/* over /etc/* (our hosts file)


@dataclass(frozen=True)
class Host:
    index: int            # 1-based
    hostname: str         # its UTS hostname, what MPI_Get_processor_name says
    address: str          # on eth0
    netns: str
    boot_id_file: Path


def unavailable():
    """Why a namespace cluster cannot be made here (one line), or None when it can."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "the namespace cluster needs root (network namespaces, bind mounts)"
    for tool in ("ip", "unshare", "mount", "hostname"):
        if shutil.which(tool) is None:
            return f"the namespace cluster needs `{tool}`, which is not installed (iproute2, util-linux)"
    try:
        probe = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"`ip netns list` failed: {exc}"
    if probe.returncode != 0:
        return f"`ip netns` does not work here: {probe.stderr.strip() or probe.returncode}"
    return None


def netns_list():
    """The names of the network namespaces on this machine."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


class NetnsCluster:
    """N hosts, `with NetnsCluster(2) as cluster:` (or `up()` / `down()`).

    cluster.hosts: the Host list; cluster.agent: the agent script's path; cluster.interface: "eth0";
    cluster.network: the hosts' /24; cluster.workdir: the temporary folder holding the agent and boot ids.
    """

    def __init__(self, nodes=2, network="198.18.0.0/24", hostname_prefix="node", keep_env=KEEP_ENV):
        net = ipaddress.ip_network(network)
        if not net.subnet_of(BENCHMARK_RANGE):
            raise QuadselError(f"cluster network {network}: use a part of {BENCHMARK_RANGE} (RFC 2544's "
                               "benchmarking range), the only range this cluster uses")
        if not 1 <= nodes <= net.num_addresses - 2:
            raise QuadselError(f"cluster of {nodes} hosts: {network} holds 1 to {net.num_addresses - 2}")
        if not _HOSTNAME.match(hostname_prefix):
            raise QuadselError(f"hostname prefix {hostname_prefix!r}: letters, digits and '-' only")
        self.nodes, self.network, self.interface = nodes, net, INTERFACE
        self.keep_env = tuple(keep_env)
        self.name = f"{PREFIX}-{os.getpid()}-{secrets.token_hex(3)}"
        self.bridge = f"{self.name}-br"
        self.workdir = None
        self.agent = None
        addresses = list(net.hosts())
        self._planned = [(i, f"{hostname_prefix}{i}", str(addresses[i - 1]), f"{self.name}-h{i}")
                         for i in range(1, nodes + 1)]
        self.hosts = []
        self._made = []       # namespaces made, in order
        self._etc = []        # /etc/netns/NS folders made
        self._live = False

    # --- life cycle -------------------------------------------------------------------------------------------
    def __enter__(self):
        return self.up()

    def __exit__(self, *exc):
        self.down()
        return False

    def up(self):
        reason = unavailable()
        if reason:
            raise QuadselError(reason)
        sweep_stale()
        _register(self)
        try:
            self._build()
        except BaseException:
            self.down()
            raise
        return self

    def _build(self):
        self.workdir = Path(tempfile.mkdtemp(prefix=f"{self.name}-"))
        self._live = True
        _ip("netns", "add", self.bridge)
        self._made.append(self.bridge)
        _ip("-n", self.bridge, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.bridge, "link", "set", "br0", "up")
        _ip("-n", self.bridge, "link", "set", "lo", "up")
        prefix = self.network.prefixlen
        for index, hostname, address, ns in self._planned:
            _ip("netns", "add", ns)
            self._made.append(ns)
            # made inside the bridge namespace, its peer moved straight into the host: no name in the machine's
            # own namespace, where two runs at once could collide
            _ip("-n", self.bridge, "link", "add", f"v{index}", "type", "veth", "peer", "name", self.interface,
                "netns", ns)
            _ip("-n", self.bridge, "link", "set", f"v{index}", "master", "br0", "up")
            _ip("-n", ns, "addr", "add", f"{address}/{prefix}", "dev", self.interface)
            _ip("-n", ns, "link", "set", self.interface, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            boot_id = self.workdir / f"boot_id.{index}"
            boot_id.write_text(f"{uuid.uuid4()}\n")
            self.hosts.append(Host(index, hostname, address, ns, boot_id))
        hosts_file = "".join(f"{h.address}\t{h.hostname}\n" for h in self.hosts) + _machine_hosts()
        for host in self.hosts:
            folder = NETNS_ETC / host.netns
            _makedirs(folder)
            self._etc.append(folder)
            (folder / "hosts").write_text(hosts_file)
        self.agent = write_agent(self.workdir / "agent", self.name, self.hosts, self.keep_env)

    def down(self):
        """Remove everything this cluster made (idempotent): its processes, namespaces, files."""
        if not self._live and not self._made:
            return
        errors = []
        self.kill_strays()
        for ns in reversed(self._made):
            result = subprocess.run(["ip", "netns", "delete", ns], capture_output=True, text=True, timeout=30)
            if result.returncode != 0 and ns in netns_list():
                errors.append(f"ip netns delete {ns}: {result.stderr.strip()}")
        self._made.clear()
        for folder in self._etc:
            shutil.rmtree(folder, ignore_errors=True)
        self._etc.clear()
        _remove_empty(NETNS_ETC)
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
        self._live = False
        _unregister(self)
        if errors:
            raise QuadselError("; ".join(errors))

    def kill_strays(self, grace=3.0):
        """End every process still inside this cluster's hosts (what a killed launcher left): SIGTERM, then
        SIGKILL. Only processes in this run's namespaces, by pid."""
        pids = self.pids()
        _signal_all(pids, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while pids and time.monotonic() < deadline:
            time.sleep(0.05)
            pids = self.pids()
        _signal_all(pids, signal.SIGKILL)

    def pids(self):
        """The processes inside this cluster's namespaces."""
        return _pids_in(self._made)

    @property
    def namespaces(self):
        """The names of every namespace this cluster uses (made or to be made): the bridge's, then the hosts'."""
        return [self.bridge] + [ns for *_, ns in self._planned]

    # --- running on a host ------------------------------------------------------------------------------------
    def host(self, which):
        """A host by index (1-based), hostname or address."""
        for host in self.hosts:
            if which in (host.index, host.hostname, host.address):
                return host
        raise QuadselError(f"{which} is not a host of the namespace cluster {self.name}")

    def on_host(self, which, argv):
        """argv, to run exactly these words on host `which` with the caller's environment."""
        return on_host_argv(self.host(which), argv)

    def run(self, which, argv, timeout=60, env=None, check=False):
        """Run argv on a host and capture its output (text). On timeout the process gets SIGTERM (mpiexec then
        ends its job), then SIGKILL, whatever is left in the hosts is ended, and TimeoutExpired is raised."""
        child = subprocess.Popen(self.on_host(which, argv), env=env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = child.communicate(timeout=timeout)
        except BaseException:
            _stop(child)
            self.kill_strays()
            raise
        result = subprocess.CompletedProcess(child.args, child.returncode, out, err)
        if check and child.returncode != 0:
            raise subprocess.CalledProcessError(child.returncode, argv, out, err)
        return result

    def launcher(self, flavor, mpiexec, ppn, nodes=None, bind=False):
        """(argv, env): this cluster's launcher prefix for `flavor`, started on the first host; append the
        program. nodes: the first `nodes` hosts (default all)."""
        from .launchers import launcher_command
        hosts = [h.address for h in self.hosts[:nodes or len(self.hosts)]]
        argv, env = launcher_command(flavor, mpiexec, hosts, ppn, self.agent, self.interface,
                                     network=str(self.network), bind=bind)
        return self.on_host(1, argv), env


def sweep_stale():
    """Remove the namespaces (and their /etc/netns folders and temporary folders) of runs whose process is gone
    (killed by SIGKILL before it could clean up). A live run's names are never touched."""
    stale = [ns for ns in netns_list() if (m := _NAME.match(ns)) and not _alive(int(m.group(1)))]
    _signal_all(_pids_in(stale), signal.SIGKILL)
    for ns in stale:
        subprocess.run(["ip", "netns", "delete", ns], capture_output=True, timeout=30)
        shutil.rmtree(NETNS_ETC / ns, ignore_errors=True)
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}-*-*-*"):
        m = re.match(rf"^{PREFIX}-(\d+)-[0-9a-f]{{6}}-", folder.name)
        if m and folder.is_dir() and (folder / "agent").exists() and not _alive(int(m.group(1))):
            shutil.rmtree(folder, ignore_errors=True)
    _remove_empty(NETNS_ETC)
    return stale


# --- cleanup when the process ends ----------------------------------------------------------------------------
_LIVE = set()   # strong references: a cluster dropped without down() is still torn down at exit
_LOCK = threading.Lock()
_SIGNALS = ("SIGTERM", "SIGHUP")
_installed = {}


def _register(cluster):
    with _LOCK:
        _LIVE.add(cluster)
        if threading.current_thread() is threading.main_thread():
            for name in _SIGNALS:
                sig = getattr(signal, name)
                if sig not in _installed and signal.getsignal(sig) is signal.SIG_DFL:
                    signal.signal(sig, _on_signal)
                    _installed[sig] = True


def _unregister(cluster):
    with _LOCK:
        _LIVE.discard(cluster)


def down_all():
    """Tear down every cluster of this process that is still up."""
    for cluster in list(_LIVE):
        try:
            cluster.down()
        except Exception:   # at exit: remove what can be removed
            pass


def _on_signal(signum, frame):
    # the default action (end the process) after the teardown; no traceback, the same exit status
    down_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


atexit.register(down_all)


# --- small helpers --------------------------------------------------------------------------------------------
def _ip(*args):
    result = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        raise QuadselError(f"namespace cluster: `ip {' '.join(args)}` failed: {result.stderr.strip()}")


def _pids_in(namespaces):
    pids = set()
    for ns in namespaces:
        out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, timeout=30).stdout
        pids.update(int(p) for p in out.split() if p.isdigit())
    pids.discard(os.getpid())
    return sorted(pids)


def _signal_all(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop(child, grace=10.0):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if child.poll() is not None:
            return
        child.send_signal(sig)
        try:
            child.communicate(timeout=grace)
        except subprocess.TimeoutExpired:
            continue


def _machine_hosts():
    try:
        return Path("/etc/hosts").read_text()
    except OSError:
        return "127.0.0.1\tlocalhost\n"


def _makedirs(folder, attempts=5):
    # another run may remove an empty /etc/netns between our two mkdirs: try again
    for attempt in range(attempts):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            return
        except FileNotFoundError:
            if attempt == attempts - 1:
                raise


def _remove_empty(folder):
    try:
        folder.rmdir()
    except OSError:   # not empty (another run's, or the system's), or absent
        pass
