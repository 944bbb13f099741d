"""A real Slurm cluster on this machine (root only): Debian's slurmctld, one slurmd per host and one munged, on
the hosts of a NetnsCluster (network namespaces, docs/cluster.md).

Everything lives in one scratch folder of the run (`<NetnsCluster workdir>/slurm`: slurm.conf, munge key and
socket, state, spool, logs, the nodes' TmpFS, batch scripts and their output), and every daemon runs inside one
of the run's network namespaces, so two runs at once do not collide: their TCP ports are in separate namespaces,
their unix sockets and state in separate folders, and their job ids start at a random FirstJobId (job ids end
up in names outside the namespaces: PMIx's and the MPI libraries' files in /dev/shm and /tmp).

Every daemon's PID is recorded; `down()` ends those PIDs (SIGTERM, then SIGKILL; munged last), then the
NetnsCluster's teardown ends whatever is left in the namespaces (slurmstepd, job tasks) and removes namespaces and
folder. It runs on leaving the `with` block, at exit, and on SIGTERM/SIGHUP, as for NetnsCluster; after a
SIGKILL the next run's `sweep_stale` removes it all (the daemons are in the stale namespaces, the folder in its
workdir).
"""

import glob
import os
import random
import secrets
import shutil
import signal
import subprocess
import time

from ..errors import QuadselError
from . import netns
from .netns import NetnsCluster

PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge", "libpmix-dev")
TOOLS = ("munged", "slurmctld", "slurmd", "sinfo", "squeue", "srun", "salloc", "sbatch", "scancel", "scontrol")
SBIN_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
# Slurm's mpi/pmix plugin dlopens the unversioned libpmix.so, which only libpmix-dev installs
LIBPMIX = ("/usr/lib/*/libpmix.so", "/usr/lib/libpmix.so", "/usr/lib/*/pmix2/lib/libpmix.so")
FINAL_STATES = {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
                "BOOT_FAIL", "DEADLINE"}

SLURM_CONF = """\
# slurm.conf of the quadsel test cluster {name} (quadsel/testbed/slurm.py); BASE = {base}
ClusterName=quadsel
SlurmctldHost={ctld_host}({ctld_addr})
AuthType=auth/munge
AuthInfo=socket={base}/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={base}/state/ctld
SlurmdSpoolDir={base}/state/%n
SlurmctldPidFile={base}/run/slurmctld.pid
SlurmdPidFile={base}/run/slurmd-%n.pid
SlurmctldLogFile={base}/log/slurmctld.log
SlurmdLogFile={base}/log/slurmd-%n.log
PlugStackConfig={base}/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
MinJobAge=300
KillWait={kill_wait}
FirstJobId={first_job_id}
TmpFS={base}/tmp/%n
{nodes}
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def unavailable():
    """Why a Slurm cluster cannot be made here (one line), or None when it can."""
    reason = netns.unavailable()
    if reason:
        return reason.replace("namespace cluster", "Slurm cluster")
    missing = [tool for tool in TOOLS if shutil.which(tool, path=SBIN_PATH) is None]
    if missing or not any(glob.glob(pattern) for pattern in LIBPMIX):
        return (f"the Slurm cluster needs Debian's {' '.join(PACKAGES)} "
                f"({', '.join(missing) or 'libpmix.so'} not installed)")
    return None


class SlurmCluster:
    """`with SlurmCluster(2) as cluster:` (or `up()` / `down()`): N hosts of `cpus` CPUs each, all idle.

    cluster.net: the NetnsCluster of the hosts; cluster.base: the scratch folder; cluster.conf: slurm.conf's
    path; cluster.pids: {daemon name: pid}; cluster.timings: {"up": s, "down": s} of the last up/down.
    """

    def __init__(self, nodes=2, cpus=2, kill_wait=5, network="198.18.0.0/24", hostname_prefix="node",
                 up_timeout=60, conf_extra=""):
        self.net = NetnsCluster(nodes, network=network, hostname_prefix=hostname_prefix)
        self.nodes, self.cpus, self.kill_wait, self.up_timeout = nodes, cpus, kill_wait, up_timeout
        self.conf_extra = conf_extra   # more slurm.conf lines, {base} = the scratch folder; a later line wins
        self.first_job_id = random.randrange(1000, 60_000_000)
        self.base = self.conf = None
        self.pids = {}
        self.timings = {}
        self._daemons = {}    # name: Popen, in start order
        self._live = False

    @property
    def name(self):
        return self.net.name

    @property
    def hosts(self):
        return self.net.hosts

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
        start = time.monotonic()
        netns._register(self)   # torn down at exit and on SIGTERM/SIGHUP, as a NetnsCluster is
        self._live = True
        try:
            self.net.up()
            netns._unregister(self.net)   # its teardown is ours: daemons first, then the namespaces
            self._configure()
            self._start_daemons()
            self.wait_idle(self.up_timeout)
        except BaseException:
            self.down()
            raise
        self.timings["up"] = time.monotonic() - start
        return self

    def _configure(self):
        base = self.base = self.net.workdir / "slurm"
        if len(str(base / "munge" / "munge.socket")) > 100:   # sun_path holds 108 bytes
            raise QuadselError(f"Slurm cluster: scratch folder {base} too long for a unix socket path; "
                               "set TMPDIR to a shorter folder")
        for sub in ["munge", "state/ctld", "run", "log", "jobs"] + \
                [f"{kind}/{h.hostname}" for h in self.hosts for kind in ("state", "tmp")]:
            (base / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(base / "munge", 0o711)   # munged refuses a socket folder others may write to
        key = base / "munge" / "munge.key"
        key.write_bytes(secrets.token_bytes(1024))
        os.chmod(key, 0o600)
        nodes = "\n".join(f"NodeName={h.hostname} NodeAddr={h.address} CPUs={self.cpus} State=UNKNOWN"
                          for h in self.hosts)
        ctld = self.hosts[0]
        self.conf = base / "slurm.conf"
        self.conf.write_text(SLURM_CONF.format(name=self.name, base=base, ctld_host=ctld.hostname,
                                               ctld_addr=ctld.address, kill_wait=self.kill_wait,
                                               first_job_id=self.first_job_id, nodes=nodes)
                             + self.conf_extra.replace("{base}", str(base)))
        # `ip netns exec` remounts /sys, so there is no cgroup file system to find: v1 needs none mounted
        (base / "cgroup.conf").write_text("CgroupPlugin=cgroup/v1\n")
        (base / "plugstack.conf").write_text("")   # not the machine's /etc/slurm/plugstack.conf

    def _start_daemons(self):
        base = self.base
        munge = base / "munge"
        self._spawn("munged", 1, ["munged", "-F", "-f", f"--socket={munge}/munge.socket",
                                  f"--key-file={munge}/munge.key", f"--log-file={base}/log/munged.log",
                                  f"--pid-file={base}/run/munged.pid", f"--seed-file={munge}/munged.seed"])
        _wait_for(lambda: (munge / "munge.socket").exists(), 10, "munged's socket", self._logs)
        self._spawn("slurmctld", 1, ["slurmctld", "-D", "-i", "-f", str(self.conf)])
        for host in self.hosts:   # slurmd retries its registration until slurmctld listens
            self._spawn(f"slurmd-{host.hostname}", host.index,
                        ["slurmd", "-D", "-N", host.hostname, "-f", str(self.conf)])

    def _spawn(self, name, host, argv):
        # ip netns exec, unshare and sh all exec: the Popen's pid is the daemon's own (checked below)
        argv = [shutil.which(argv[0], path=SBIN_PATH) or argv[0]] + argv[1:]
        with open(self.base / "log" / f"{name}.out", "ab") as out:
            child = subprocess.Popen(self.net.on_host(host, argv), env=self.env(), stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self._daemons[name] = child
        self.pids[name] = child.pid

    def wait_idle(self, timeout=60):
        """Wait until every node is idle in `sinfo`."""
        def idle():
            for name, child in self._daemons.items():
                if child.poll() is not None:
                    raise QuadselError(f"Slurm cluster: {name} ended ({child.returncode}) before the nodes "
                                       f"were idle\n{self._logs()}")
            result = self.run(["sinfo", "-h", "-N", "-o", "%N %t"], timeout=30)   # fails until slurmctld answers
            states = [line.split()[-1] for line in result.stdout.splitlines() if line.strip()]
            return result.returncode == 0 and states == ["idle"] * self.nodes
        _wait_for(idle, timeout, "every node idle in sinfo", self._logs)

    def down(self):
        """End this cluster's daemons (by their PIDs), its namespaces and its folder (idempotent)."""
        if not self._live:
            return
        start = time.monotonic()
        try:
            # munged last: a Slurm daemon told to stop while munged is gone waits seconds for it (2-5 s, measured)
            _end([c for name, c in self._daemons.items() if name != "munged"], grace=2.0)
            _end([c for name, c in self._daemons.items() if name == "munged"], grace=2.0)
            self._daemons.clear()
            # what jobs left (slurmstepd and srun outlive SIGTERM): everything is deleted, so no long grace
            self.net.kill_strays(grace=0.5)
        finally:
            try:
                self.net.down()
            finally:
                self._live = False
                netns._unregister(self)
                self.timings["down"] = time.monotonic() - start

    # --- running on a host ------------------------------------------------------------------------------------
    def env(self, env=None):
        """The environment of a command on a host: `env` (default the caller's) with SLURM_CONF. The nodes share
        this machine's cores, so Open MPI's ranks yield when idle (OMPI_MCA_mpi_yield_when_idle=1, unless the
        caller set it): its busy polling made a 2 x 2 tune of bcast 3.2 times slower (212.7 s against 66.7 s,
        docs/cluster.md, Slurm) -- on a real cluster each node has its own cores and nothing is set."""
        env = dict(os.environ if env is None else env)
        env["SLURM_CONF"] = str(self.conf)
        env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
        return env

    def on_host(self, argv, host=1):
        """argv, to run these words on `host` (index, hostname or address); give it the env of `env()`."""
        return self.net.on_host(host, argv)

    def run(self, argv, host=1, timeout=120, env=None, check=False):
        """Run argv on a host as a submit host (SLURM_CONF exported) and capture its output (text). On timeout
        the command gets SIGTERM (salloc and srun then end their job), then SIGKILL, every job still in the
        queue is cancelled, and TimeoutExpired is raised; the daemons stay up."""
        child = subprocess.Popen(self.on_host(argv, host), env=self.env(env), stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = child.communicate(timeout=timeout)
        except BaseException:
            netns._stop(child)
            if self._live:
                self._scancel_all()
            raise
        if check and child.returncode != 0:
            raise subprocess.CalledProcessError(child.returncode, argv, out, err)
        return subprocess.CompletedProcess(argv, child.returncode, out, err)

    def _slurm(self, argv, host=1, timeout=30):
        result = self.run(argv, host=host, timeout=timeout)
        if result.returncode != 0:
            raise QuadselError(f"Slurm cluster: `{' '.join(map(str, argv))}` failed ({result.returncode}): "
                               f"{result.stderr.strip()}")
        return result.stdout

    def sinfo(self):
        """{node: state} (idle, alloc, mix, down, …; a trailing `*` means not responding)."""
        out = self._slurm(["sinfo", "-h", "-N", "-o", "%N %t"])
        return dict(line.split() for line in out.splitlines() if line.strip())

    def squeue(self):
        """The jobs in the queue: [{"jobid", "state", "name", "nodes", "nodelist"}]."""
        out = self._slurm(["squeue", "-h", "-o", "%i|%T|%j|%D|%N"])
        keys = ("jobid", "state", "name", "nodes", "nodelist")
        return [dict(zip(keys, line.split("|"))) for line in out.splitlines() if line.strip()]

    def job(self, jobid):
        """`scontrol show job` as a dict (JobState, ExitCode, Restarts, …); {} once Slurm forgot the job."""
        result = self.run(["scontrol", "show", "job", "-o", str(jobid)], timeout=30)
        if result.returncode != 0:
            return {}
        return dict(word.split("=", 1) for word in result.stdout.split() if "=" in word)

    def sbatch(self, script, *args, host=1):
        """Submit `script` (its text) with sbatch's `args`; return the job id (int). Its output goes to
        `self.output(jobid)` unless args name another."""
        path = self.base / "jobs" / f"job-{secrets.token_hex(4)}.sh"
        path.write_text(script)
        options = list(map(str, args))
        if not any(a in ("-o", "--output") or a.startswith("--output=") for a in options):
            options = ["-o", str(self.base / "jobs" / "slurm-%j.out")] + options
        out = self._slurm(["sbatch", "--parsable", *options, str(path)], host=host)
        return int(out.strip().split(";")[0])

    def output(self, jobid):
        """The default output file of a batch job."""
        return self.base / "jobs" / f"slurm-{jobid}.out"

    def scancel(self, jobid, *args):
        self._slurm(["scancel", *map(str, args), str(jobid)])

    def wait(self, jobid, timeout=120, poll=0.1):
        """Wait until the job has ended; its final `scontrol show job` dict."""
        info = {}

        def ended():
            nonlocal info
            info = self.job(jobid)
            return info.get("JobState") in FINAL_STATES
        _wait_for(ended, timeout, lambda: f"job {jobid} to end (last state: {info.get('JobState')})", self._logs,
                  poll)
        return info

    def _scancel_all(self):
        result = self.run(["squeue", "-h", "-o", "%i"], timeout=30)
        ids = result.stdout.split()
        if ids:
            self.run(["scancel", *ids], timeout=30)

    def _logs(self, tail=3000):
        if self.base is None:
            return ""
        text = []
        for log in sorted((self.base / "log").glob("*")):
            text.append(f"--- {log.name}\n{log.read_text(errors='replace')[-tail:]}")
        return "\n".join(text)


def _wait_for(condition, timeout, what, logs=lambda: "", poll=0.05):
    """Poll until condition() holds; `what` (text, or a function giving it) names it in the timeout's error."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            what = what() if callable(what) else what
            raise QuadselError(f"Slurm cluster: timed out after {timeout} s waiting for {what}\n{logs()}")
        time.sleep(poll)


def _end(children, grace):
    """SIGTERM to every child at once, SIGKILL to those still there after `grace` s; only these PIDs."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for child in children:
            if child.poll() is None:
                child.send_signal(sig)
        deadline = time.monotonic() + grace
        while any(c.poll() is None for c in children) and time.monotonic() < deadline:
            time.sleep(0.02)
