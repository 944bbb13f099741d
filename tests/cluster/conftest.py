"""The namespace cluster as a fixture: `make_cluster(nodes)` (each torn down when its test ends, passed or failed)
and `cluster2`, two hosts shared by a module's tests. Skipped, with one reason, without root, `ip netns`,
`unshare` or `mount`."""

import pytest

from netns_helpers import REASON
from quadsel.cluster import NetnsCluster, netns_list


@pytest.fixture
def make_cluster(request):
    """make_cluster(nodes=2, **options) -> a NetnsCluster that is up; torn down after the test, whatever happened,
    and the test fails if any of its namespaces is still there."""
    if REASON:
        pytest.skip(REASON)
    made = []

    def make(nodes=2, **options):
        cluster = NetnsCluster(nodes, **options)
        made.append(cluster)
        return cluster.up()

    def teardown():
        for cluster in made:
            cluster.down()
            left = set(cluster.namespaces) & set(netns_list())
            assert not left, f"namespaces left after teardown: {sorted(left)}"
    request.addfinalizer(teardown)
    return make


@pytest.fixture(scope="module")
def cluster2():
    """Two hosts (node1 198.18.0.1, node2 198.18.0.2) for a module's tests."""
    if REASON:
        pytest.skip(REASON)
    with NetnsCluster(2) as cluster:
        yield cluster
    assert not set(cluster.namespaces) & set(netns_list())
