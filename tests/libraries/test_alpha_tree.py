"""The α-tree (libraries/alphatree.py, no MPI): α = 0 sends what the flat tree sends, α = 0.5 what the binomial
tree sends (counted per rank, against constructions written independently here); the multilevel tree; the
method names and the ids the C returns."""

import pytest
from hypothesis import given, strategies as st

from quadsel.errors import QuadselError
from quadsel.libraries import alphatree


def flat_sends(n, root=0):
    """Flat tree (Open MPI basic_linear): the root sends to every other rank."""
    return [n - 1 if r == root else 0 for r in range(n)]


def binomial_edges(n, root=0):
    """MPICH's binomial bcast (MPIR_Bcast_intra_binomial): relative rank r receives from r - lowbit(r) and
    sends to r + mask for the masks below lowbit(r), largest first (the root: below the next power of two)."""
    edges, top = [], 1
    while top < n:
        top <<= 1
    for rel in range(n):
        low = rel & -rel if rel else top
        mask = low >> 1
        while mask:
            if rel + mask < n:
                edges.append(((rel + root) % n, (rel + mask + root) % n))
            mask >>= 1
    return edges


def sends_of(edges, n):
    counts = [0] * n
    for sender, _ in edges:
        counts[sender] += 1
    return counts


def is_spanning_tree(tree, n, root):
    """Every rank but the root has one parent, and following parents reaches the root."""
    assert tree.parent[root] is None
    for r in range(n):
        seen, x = set(), r
        while x != root:
            assert x not in seen and tree.parent[x] is not None
            seen.add(x)
            x = tree.parent[x]
    return sorted(c for kids in tree.children for c in kids) == sorted(set(range(n)) - {root})


@pytest.mark.parametrize("n", range(1, 40))
def test_alpha_zero_is_the_flat_tree(n):
    for root in {0, n // 2, n - 1}:
        tree = alphatree.schedule(n, root, [0])
        assert tree.sends() == flat_sends(n, root)
        assert is_spanning_tree(tree, n, root)


@pytest.mark.parametrize("n", [1, 2, 4, 8, 16, 32, 64, 128])
def test_alpha_half_is_mpichs_binomial_tree_edge_for_edge_at_powers_of_two(n):
    for root in {0, min(1, n - 1), n - 1}:
        tree = alphatree.schedule(n, root, [50])
        assert sorted(tree.edges()) == sorted(binomial_edges(n, root))
        assert tree.sends() == sends_of(binomial_edges(n, root), n)
        # and in the same order: the largest subtree first
        assert tree.children[root] == [c for s, c in binomial_edges(n, root) if s == root]


def rounds(tree, root):
    """Steps of the broadcast when every rank sends one message per step, in its order."""
    ready = {root: 0}
    pending = [root]
    while pending:
        r = pending.pop()
        for step, c in enumerate(tree.children[r], start=1):
            ready[c] = ready[r] + step
            pending.append(c)
    return max(ready.values())


@pytest.mark.parametrize("n", range(2, 70))
def test_alpha_half_is_a_binomial_tree_at_every_size(n):
    """Between powers of two the libraries' binomial trees differ from each other (Open MPI's bmtree, MPICH's);
    the α-tree halves every range: ⌈log2 n⌉ rounds like both, the root sends ⌈log2 n⌉ times, n - 1 messages."""
    tree = alphatree.schedule(n, 0, [50])
    log2 = (n - 1).bit_length()
    assert rounds(tree, 0) == log2 and tree.sends()[0] == log2 and sum(tree.sends()) == n - 1


@given(st.integers(1, 200), st.integers(0, 50), st.data())
def test_every_alpha_tree_is_a_spanning_tree_between_flat_and_binomial(n, pct, data):
    root = data.draw(st.integers(0, n - 1))
    tree = alphatree.schedule(n, root, [pct])
    assert is_spanning_tree(tree, n, root) and sum(tree.sends()) == n - 1
    assert (n - 1).bit_length() <= rounds(tree, root) <= n - 1


@given(st.integers(1, 60), st.integers(1, 8), st.integers(0, 50), st.integers(0, 50), st.data())
def test_multilevel_tree_crosses_each_node_once_and_each_node_is_an_alpha_tree(n, per_node, outer, inner, data):
    root = data.draw(st.integers(0, n - 1))
    keys = [(r // per_node,) for r in range(n)]
    tree = alphatree.schedule(n, root, [outer, inner], keys)
    assert is_spanning_tree(tree, n, root)
    crossing = [(s, c) for s, c in tree.edges() if keys[s] != keys[c]]
    nodes = len({k for k in keys})
    assert len(crossing) == nodes - 1                      # one message into each node but the root's
    leaders = [s for s, _ in crossing] + [c for _, c in crossing]
    assert all(r == root or min(x for x in range(n) if keys[x] == keys[r]) == r or keys[r] == keys[root]
               for r in leaders)
    # the cross-node messages come first at every leader
    for r in range(n):
        kinds = [keys[c] != keys[r] for c in tree.children[r]]
        assert kinds == sorted(kinds, reverse=True)


def test_multilevel_tree_with_one_node_is_the_inner_alpha_tree_and_the_papers_multilevel_tree():
    assert alphatree.schedule(8, 0, [0, 50], [(0,)] * 8) == alphatree.schedule(8, 0, [50])
    # Karonis' multilevel tree = flat across nodes, binomial inside (the paper: α = 0, then 0.5)
    tree = alphatree.schedule(8, 0, [0, 50], [(r // 2,) for r in range(8)])
    assert tree.children[0] == [6, 4, 2, 1] and tree.sends() == [4, 0, 1, 0, 1, 0, 1, 0]


def test_three_levels_group_by_node_then_socket():
    keys = [(r // 4, r // 2) for r in range(8)]
    tree = alphatree.schedule(8, 0, [0, 0, 0], keys)
    assert tree.children[0] == [4, 2, 1] and tree.children[4] == [6, 5] and tree.children[2] == [3]


def test_names_and_c_ids_round_trip():
    assert alphatree.label([25]) == "alpha-0.25" and alphatree.parse("alpha-0.25") == (25,)
    assert alphatree.canonical("ALPHA-.1-0.35") == "alpha-0.10-0.35"
    for bad in ("alpha-0.6", "alpha-0.125", "alpha", "alpha-0.1-0.2-0.3-0.4", "6", "binomial", "alpha-x"):
        assert alphatree.parse(bad) is None
    for percents in [(0,), (50,), (10, 35), (0, 50, 25), (50, 50, 50)]:
        number = alphatree.method_id(percents)
        assert 1000 <= number < 2**31 and alphatree.percents_of_id(number) == percents
    assert alphatree.method_id((25,)) == 1025 and alphatree.method_id((10, 35)) == 101035
    assert alphatree.percents_of_id(6) is None and alphatree.percents_of_id(1051) is None
    with pytest.raises(QuadselError):
        alphatree.percent("0.55")


@pytest.mark.parametrize("args,message", [
    (["-c", "reduce", "--alpha", "0.5"], "α-tree methods are broadcasts"),
    (["-c", "bcast", "--alpha", "0.7"], "must lie in [0, 0.5]"),
    (["-c", "bcast", "--alpha-depth", "2"], "--alpha-depth needs --alpha"),
    (["-c", "bcast", "--alpha", "0", "--alpha-levels", "blocks:0"], "use auto or blocks:K[,J]"),
    (["-c", "bcast", "--replay", "x.csv", "--alpha", "0"], "--alpha and --sync only apply to real runs"),
])
def test_alpha_options_fail_before_anything_runs(tmp_path, args, message):
    from click.testing import CliRunner
    from quadsel.cli import main
    (tmp_path / "x.csv").write_text("collective,algorithm,segsize,comm_size,msg_size,time_us\n")
    out = tmp_path / "out.csv"
    done = CliRunner().invoke(main, ["measure", "--np", "2", "-o", str(out)] + [
        str(tmp_path / a) if a == "x.csv" else a for a in args])
    assert done.exit_code == 2 and message in done.output and not out.exists()
