"""The namespace cluster itself: its hosts, their network, and a teardown that leaves nothing behind (after a
passing body, a failing one, SIGTERM, and — through the next run's sweep — SIGKILL)."""

import ipaddress
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from netns_helpers import REPO, needs_netns
from quadsel.testbed import NetnsCluster, netns_list, sweep_stale
from quadsel.testbed.netns import NETNS_ETC
from quadsel.errors import QuadselError

pytestmark = needs_netns


def gone(cluster):
    """Nothing of the cluster is left: namespaces, /etc/netns folders, temporary folder."""
    assert not set(cluster.namespaces) & set(netns_list())
    assert not any((NETNS_ETC / ns).exists() for ns in cluster.namespaces)
    assert cluster.workdir is None or not cluster.workdir.exists()


def test_hosts_have_their_names_addresses_and_loopback(make_cluster):
    cluster = make_cluster(3)
    assert set(cluster.namespaces) <= set(netns_list())
    boot_ids = set()
    for host in cluster.hosts:
        assert ipaddress.ip_address(host.address) in ipaddress.ip_network("198.18.0.0/15")
        out = cluster.run(host.index, ["sh", "-c", "hostname; cat /proc/sys/kernel/random/boot_id; "
                                       "ip -o -4 addr show; getent hosts node1 node3"], check=True).stdout
        lines = out.splitlines()
        assert lines[0] == host.hostname == f"node{host.index}"
        boot_ids.add(lines[1])
        assert "lo    inet 127.0.0.1/8" in out and f"eth0    inet {host.address}/24" in out
        assert "198.18.0.1      node1" in out and "198.18.0.3      node3" in out
        assert len([line for line in lines if " inet " in line]) == 2   # lo and eth0, nothing else
    machine = open("/proc/sys/kernel/random/boot_id").read().strip()
    assert len(boot_ids) == 3 and machine not in boot_ids   # UCX sees three machines


def test_hosts_reach_each_other_over_tcp_and_only_through_the_bridge(make_cluster):
    cluster = make_cluster(2)
    server = subprocess.Popen(cluster.on_host(2, [sys.executable, "-c", textwrap.dedent("""
        import socket
        s = socket.create_server(("198.18.0.2", 45678))
        print("ready", flush=True)
        c, peer = s.accept()
        c.sendall(socket.gethostname().encode() + b" " + peer[0].encode())
        """)]), stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline() == "ready\n"
        out = cluster.run(1, [sys.executable, "-c", "import socket; c = socket.create_connection(('node2', 45678),"
                              " timeout=10); print(c.recv(100).decode())"], check=True).stdout
        assert out.strip() == "node2 198.18.0.1"
    finally:
        server.kill()
        server.wait()
    # the machine's own namespace has no route into the cluster
    assert "198.18.0." not in subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True).stdout


def test_teardown_removes_everything_and_its_processes():
    with NetnsCluster(2) as cluster:
        background = subprocess.Popen(cluster.on_host(2, ["sleep", "300"]))
        time.sleep(0.2)
        assert background.pid in cluster.pids()
    gone(cluster)
    assert background.wait(timeout=10) != 0   # ended by the teardown
    cluster.down()                            # twice is fine


def test_teardown_after_a_failing_body():
    cluster = NetnsCluster(2)
    with pytest.raises(RuntimeError, match="the test failed"):
        with cluster:
            assert set(cluster.namespaces) <= set(netns_list())
            raise RuntimeError("the test failed")
    gone(cluster)


def test_two_clusters_at_once_do_not_collide(make_cluster):
    a, b = make_cluster(2), make_cluster(2)
    assert not set(a.namespaces) & set(b.namespaces)
    assert [h.address for h in a.hosts] == [h.address for h in b.hosts]
    assert a.run(2, ["hostname"]).stdout == b.run(2, ["hostname"]).stdout == "node2\n"


CHILD = textwrap.dedent("""
    import sys, time
    from quadsel.testbed import NetnsCluster
    cluster = NetnsCluster(2).up()
    print(" ".join(cluster.namespaces), cluster.workdir, flush=True)
    time.sleep(120)
""")


def start_child():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True, env=env)
    *names, workdir = child.stdout.readline().split()
    assert names and set(names) <= set(netns_list())
    return child, names, workdir


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_terminated_run_tears_its_cluster_down(sig):
    child, names, workdir = start_child()
    child.send_signal(sig)
    assert child.wait(timeout=30) == -sig     # still ends as the signal says
    assert not set(names) & set(netns_list())
    assert not os.path.exists(workdir)


def test_a_killed_runs_namespaces_are_swept_by_the_next():
    child, names, workdir = start_child()
    child.kill()
    child.wait(timeout=30)
    assert set(names) <= set(netns_list())    # SIGKILL: nothing could run
    assert set(sweep_stale()) >= set(names)
    assert not set(names) & set(netns_list())
    assert not os.path.exists(workdir)


def test_only_the_benchmark_range_is_used():
    with pytest.raises(QuadselError, match="198.18.0.0/15"):
        NetnsCluster(2, network="10.0.0.0/24")
    with pytest.raises(QuadselError, match="1 to 2"):
        NetnsCluster(3, network="198.19.255.252/30")


def test_the_agent_enters_the_host_with_a_login_environment(make_cluster):
    cluster = make_cluster(2)
    env = dict(os.environ, QUADSEL_PROBE="set", PATH=os.environ["PATH"])
    out = subprocess.run([str(cluster.agent), "-x", "-o", "BatchMode=yes", "198.18.0.2",
                          'hostname; echo "probe=${QUADSEL_PROBE-unset}"; test -n "$PATH" && echo path'],
                         capture_output=True, text=True, env=env, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["node2", "probe=unset", "path"]   # as over ssh: only the login's variables


def test_a_job_past_its_timeout_is_ended_with_everything_it_started(make_cluster):
    cluster = make_cluster(2)
    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        cluster.run(2, ["sh", "-c", "sleep 100 & sleep 100 & wait"], timeout=1)
    assert time.monotonic() - start < 30
    assert cluster.pids() == []
