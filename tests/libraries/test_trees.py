"""The spanning trees of quadsel/libraries/trees.py against Open MPI's documented examples and invariants."""

from hypothesis import given, strategies as st

from quadsel.libraries import trees


def test_known_shapes_of_coll_base_topo():
    # coll_base_topo.c's comments: kmtree of 10 ranks, radix 4: 0 -> 4 8 1 2 3; 4 -> 5 6 7; 8 -> 9
    assert trees.kmtree(10, 4) == [-1, 0, 0, 0, 0, 4, 4, 4, 0, 8]
    # radix 3: 0 -> 9 3 6 1 2; 3 -> 4 5; 6 -> 7 8
    assert trees.kmtree(10, 3) == [-1, 0, 0, 0, 3, 3, 0, 6, 6, 0]
    # in-order bmtree of 8: 0 -> 1 2 4; 2 -> 3; 4 -> 5 6; 6 -> 7
    assert trees.in_order_bmtree(8) == [-1, 0, 0, 2, 0, 4, 4, 6]
    # bmtree of 8: 0 -> 1 2 4; 1 -> 3 5; 2 -> 6; 3 -> 7
    assert trees.bmtree(8) == [-1, 0, 0, 1, 0, 1, 2, 3]
    # binary tree (build_tree fanout 2) numbers level by level: 0 -> 1 2; 1 -> 3 5; 2 -> 4 6
    assert trees.kary_tree(7, 2) == [-1, 0, 0, 1, 2, 1, 2]
    # chain of 10 ranks, 4 chains: lengths 3 2 2 2
    assert trees.chain(10, 4) == [-1, 0, 1, 2, 0, 4, 0, 6, 0, 8]
    assert trees.chain(4, 1) == [-1, 0, 1, 2]
    # in-order binary tree of 7: root 6; right part 0..2 under 2, left part 3..5 under 5
    assert trees.in_order_bintree(7) == [2, 2, 6, 5, 5, 6, -1]
    assert trees.in_order_bintree(4) == [1, 3, 3, -1]          # docs/trace.md's table


def test_root_shift():
    assert trees.bmtree(4, root=2) == [2, 3, -1, 2]     # vranks 0..3 are ranks 2, 3, 0, 1: 3 -> 1


def test_algorithm_shapes():
    s = trees.algorithm_shape("openmpi", "bcast", "6", 4)
    assert s.parents == [-1, 0, 0, 1] and s.flow == "down"
    assert trees.algorithm_shape("openmpi", "reduce", "5", 4).flow == "up"
    assert trees.algorithm_shape("openmpi", "allreduce", "3", 4) is None      # recursive doubling: no tree
    assert trees.algorithm_shape("openmpi", "bcast", "default", 4) is None
    assert trees.algorithm_shape("mpich", "bcast", "binomial", 8).parents == trees.in_order_bmtree(8)


BUILDERS = [lambda n: trees.bmtree(n), lambda n: trees.in_order_bmtree(n), lambda n: trees.kary_tree(n, 2),
            lambda n: trees.kary_tree(n, 3), lambda n: trees.kmtree(n, 4), lambda n: trees.chain(n, 4),
            lambda n: trees.chain(n, 1), lambda n: trees.in_order_bintree(n), lambda n: trees.flat(n)]


@given(st.integers(1, 300), st.sampled_from(range(len(BUILDERS))))
def test_every_builder_spans_all_ranks(n, which):
    parents = BUILDERS[which](n)
    depth = trees.depths(parents)            # raises unless one tree
    assert len(parents) == n and all(d is not None for d in depth)
    desc = trees.descendants(parents)
    root = parents.index(-1)
    assert sorted(desc[root] + [root]) == list(range(n))


@given(st.integers(2, 300))
def test_binomial_properties(n):
    # bmtree depth = number of set bits of the virtual rank; kmtree radix 2 = the in-order bmtree
    assert trees.depths(trees.bmtree(n)) == [bin(v).count("1") for v in range(n)]
    assert trees.kmtree(n, 2) == trees.in_order_bmtree(n)
    assert trees.chain(n, n - 1) == trees.flat(n) == trees.kary_tree(n, n - 1) if n > 1 else True
