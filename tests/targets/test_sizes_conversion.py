"""The decision map's message size (bytes per rank) converted to what each library matches on, and back.

The oracle keys below are written from the libraries' sources (docs/collectives.md), apart from
quadsel/libraries/sizes.py on purpose: a wrong factor there cannot hide itself.
"""

import re

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from quadsel.cli import main
from quadsel.libraries import mpich, sizes
from quadsel.targets import emit, mpich_json, ompi_json, ompi_rules
from quadsel.targets.c import generate_c
from quadsel.targets.rules_file import read_rules_file

from helpers import probe_points, random_fn, tree_choosing
from library_readers import MpichSelection, OmpiClassicRules, OmpiJsonRules

OMPI_COLL_ID = {"allgather": 0, "allgatherv": 1, "allreduce": 2, "alltoall": 3, "alltoallv": 4, "barrier": 6,
                "bcast": 7, "exscan": 8, "gather": 9, "reduce": 11, "reduce_scatter": 12, "reduce_scatter_block": 13,
                "scan": 14, "scatter": 15}
# What coll/tuned 5.0.x computes for a call of m bytes per rank on p ranks (coll_tuned_decision_dynamic.c).
OMPI_KEY = {"allgather": lambda m, p: m * p, "alltoall": lambda m, p: m * p, "gather": lambda m, p: m * p,
            "scatter": lambda m, p: m * p, "reduce_scatter_block": lambda m, p: m * p,
            "reduce_scatter": lambda m, p: m * p, "allgatherv": lambda m, p: m * p // p,
            "bcast": lambda m, p: m, "reduce": lambda m, p: m, "allreduce": lambda m, p: m}
OMPI_NO_KEY = ("barrier", "alltoallv", "scan", "exscan")
# What MPICH 5.0.x csel computes (byte data): avg_msg_size or total_msg_size.
MPICH_KEY = {"bcast": lambda m, p: m, "reduce": lambda m, p: m, "allreduce": lambda m, p: m,
             "alltoall": lambda m, p: m, "allgather": lambda m, p: m * p, "allgatherv": lambda m, p: m * p,
             "reduce_scatter": lambda m, p: m * p, "reduce_scatter_block": lambda m, p: m * p,
             "alltoallv": lambda m, p: m * p, "gather": lambda m, p: m * p, "scatter": lambda m, p: m * p}
MPICH_NO_KEY = ("barrier", "scan", "exscan", "gatherv", "scatterv")
IDS = ["1", "2", "3"]          # ids every coll/tuned collective has


def test_the_size_tables_cover_the_same_collectives_as_the_oracles():
    assert set(sizes.OPENMPI) == set(OMPI_KEY) | set(OMPI_NO_KEY)
    assert set(sizes.MPICH) == set(MPICH_KEY) | set(MPICH_NO_KEY)
    assert {c for c, k in sizes.OPENMPI.items() if k.form == sizes.NONE} == set(OMPI_NO_KEY)
    assert {c for c, k in sizes.MPICH.items() if k.form == sizes.NONE} == set(MPICH_NO_KEY)
    assert set(sizes.PER_RANK) >= set(sizes.OPENMPI) | set(sizes.MPICH)


def allgather_tree():
    # per rank: method 1 below 1 KiB, method 2 from 1 KiB, at every communicator size
    comm, msg = [2, 4, 8], [256, 512, 1024, 2048, 4096]
    return tree_choosing("allgather", comm, msg, [[("1" if m < 1024 else "2", 0) for m in msg] for _ in comm])


def test_allgather_at_4_ranks_and_1_kib_per_rank_is_an_open_mpi_boundary_at_4_kib_total(compile_decision, tmp_path):
    fn = allgather_tree()
    text = ompi_rules.emit([fn])
    block = re.search(r"^4 2 #.*\n(.*)\n(.*)\n", text, re.M)
    assert block.group(2).split()[:2] == ["4096", "2"]          # 1 KiB per rank x 4 ranks = 4 KiB total
    assert "message keys are send datatype size x sendcount x comm size" in text
    json_rules = OmpiJsonRules(ompi_json.emit([fn]))
    classic = OmpiClassicRules(text)
    assert classic.lookup(0, 4, 4095)[0] == 1 and classic.lookup(0, 4, 4096)[0] == 2
    assert classic.lookup(0, 8, 8191)[0] == 1 and classic.lookup(0, 8, 8192)[0] == 2
    assert classic.lookup(0, 6, 6143)[0] == 1 and classic.lookup(0, 6, 6144)[0] == 2   # between measured sizes too
    # converted back (total -> per rank), the boundary agrees with the C function and `quadsel query`
    tree = tmp_path / "allgather.qt.json"
    fn.save(tree)
    rules = tmp_path / "allgather.rules"
    rules.write_text(text)
    ask = compile_decision(generate_c(fn), "quadsel_allgather_decision")
    points = [(c, m) for c in range(2, 9) for m in sorted({0, 1, 1023, 1024, 1025} | {int(x) for x in fn.msg_sizes})]
    c_answers = ask(points)
    stdin = "".join(f"{c} {m}\n" for c, m in points)
    query = CliRunner().invoke(main, ["query", str(tree)], input=stdin)
    assert query.exit_code == 0, query.output
    cli_answers = [line.split()[2] for line in query.output.strip().splitlines()]
    verify_reader = read_rules_file(str(rules), library_version="Open MPI v5.0.11")
    for (comm, msg), (c_alg, _), cli_alg in zip(points, c_answers, cli_answers):
        want = fn.query(comm, msg).algorithm
        assert str(c_alg) == cli_alg == want == str(classic.lookup(0, comm, msg * comm)[0]), (comm, msg)
        assert str(json_rules.lookup("allgather", comm, msg * comm)[0]) == want
        assert verify_reader.pick("allgather", comm, msg).label == want
    assert "bytes per rank" in generate_c(fn)


def between_fn(seed, n_comm, n_msg, n_methods, coll, between, names=IDS, outside="extrapolate"):
    """A random tree of the default build (between rule, cuts at measured sizes) or the paper's (floor)."""
    from quadsel.decision.builder import build_size_tree
    from quadsel.decision.decision_map import build_decision_map
    from helpers import random_table
    rows, _, _ = random_table(np.random.default_rng(seed), n_comm, n_msg, n_methods, names=names, collective=coll)
    split = "measured" if between == "least-bad" else "midpoint"
    return build_size_tree(build_decision_map(rows, coll), split=split, between=between, outside=outside)


@pytest.mark.parametrize("coll", sorted(set(OMPI_KEY) - {"scatter"}))   # scatter: below
@given(seed=st.integers(0, 10**6), n_comm=st.integers(1, 5), n_msg=st.integers(1, 7), n_methods=st.integers(1, 3),
       between=st.sampled_from(["floor", "least-bad"]), outside=st.sampled_from(["extrapolate", "default"]))
@settings(max_examples=8, deadline=None)
def test_open_mpi_rules_follow_the_tree_at_every_measured_comm_size(tmp_path_factory, coll, seed, n_comm, n_msg,
                                                                    n_methods, between, outside):
    fn = between_fn(seed, n_comm, n_msg, n_methods, coll, between, outside=outside)
    text = ompi_rules.emit([fn])
    classic, json_rules = OmpiClassicRules(text), OmpiJsonRules(ompi_json.emit([fn]))
    assert not classic.ignored
    path = tmp_path_factory.mktemp("rules") / "r.rules"
    path.write_text(text)
    verify_reader = read_rules_file(str(path), library_version="Open MPI v5.0.11")
    key = OMPI_KEY[coll]
    for comm, msg in probe_points(fn):
        if not fn.comm_sizes[0] <= comm <= fn.comm_sizes[-1] and outside == "extrapolate":
            continue            # exact at every communicator size of the measured range (docs/collectives.md)
        chosen = fn.query(comm, msg).algorithm
        want = 0 if chosen == "default" else int(chosen)       # handed back to the library: algorithm 0
        assert classic.lookup(OMPI_COLL_ID[coll], comm, key(msg, comm))[0] == want, (comm, msg)
        assert json_rules.lookup(coll, comm, key(msg, comm))[0] == want, (comm, msg)
        assert verify_reader.pick(coll, comm, msg).label == (chosen if want == 0 else str(want)), (comm, msg)


@pytest.mark.parametrize("coll", OMPI_NO_KEY)
def test_open_mpi_collectives_keyed_on_no_message_size_get_the_tree_s_majority_per_comm_size(coll):
    comm, msg = [2, 4], [8, 64, 512]
    fn = tree_choosing(coll, comm, msg, [[("1", 0), ("2", 0), ("2", 0)], [("1", 0), ("1", 0), ("1", 0)]])
    text = ompi_rules.emit([fn])
    classic = OmpiClassicRules(text)
    for m in (0, 8, 64, 512, 1 << 20):
        assert classic.lookup(OMPI_COLL_ID[coll], 2, m)[0] == 2 and classic.lookup(OMPI_COLL_ID[coll], 4, m)[0] == 1
    assert "cannot change with the message size: at comm sizes 2 the method" in text
    json_rules = OmpiJsonRules(ompi_json.emit([fn]))
    assert json_rules.lookup(coll, 3, 0)[0] == 2 and json_rules.lookup(coll, 9, 0)[0] == 1


def test_open_mpi_scatter_rules_are_the_same_for_the_root_and_the_other_ranks():
    # Open MPI keys scatter on the send count, significant at the root only: the other ranks of a conforming
    # call (mpi4py's) compute 0. Rules by message size would split the ranks over two algorithms (the follow
    # check saw root linear_nb, others basic_linear), so one rule per communicator size is written, at key 0
    comm, msg = [2, 4], [8, 64, 512]
    fn = tree_choosing("scatter", comm, msg, [[("1", 0), ("2", 0), ("2", 0)], [("3", 0), ("3", 0), ("1", 0)]])
    text = ompi_rules.emit([fn])
    classic, json_rules = OmpiClassicRules(text), OmpiJsonRules(ompi_json.emit([fn]))
    for p, want in ((2, 2), (4, 3)):
        for m in (0, 8, 64, 512, 1 << 20):
            root, others = OMPI_KEY["scatter"](m, p), 0
            assert classic.lookup(OMPI_COLL_ID["scatter"], p, root)[0] == want
            assert classic.lookup(OMPI_COLL_ID["scatter"], p, others)[0] == want
            assert json_rules.lookup("scatter", p, root)[0] == json_rules.lookup("scatter", p, others)[0] == want
    assert "which the other ranks compute as 0, so the choice cannot change with the message size" in text


def test_codegen_says_on_stderr_where_a_file_cannot_follow_the_message_size(tmp_path):
    fn = tree_choosing("barrier", [2, 4], [0, 64], [[("1", 0), ("2", 0)], [("2", 0), ("2", 0)]])
    tree = tmp_path / "barrier.qt.json"
    fn.save(tree)
    result = CliRunner().invoke(main, ["codegen", str(tree), "-t", "ompi-rules", "-o", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert "note: barrier: Open MPI matches it on nothing (0), so the choice cannot change" in result.stderr


def mpich_names(coll):
    if coll not in mpich.ALGORITHMS:
        pytest.skip(f"no MPICH algorithm table for {coll} yet")
    return [n for n in mpich.ALGORITHMS[coll] if (coll, n) not in mpich.GUARDS and n not in ("smp", "ccl")][:3]


@pytest.mark.parametrize("coll", sorted(MPICH_KEY))
@pytest.mark.parametrize("seed", range(4))
def test_mpich_selection_follows_the_tree_in_its_own_key(coll, seed):
    names = mpich_names(coll)
    fn = random_fn(seed, 1 + seed, 2 + seed, len(names), None, names=names, collective=coll)
    text = mpich_json.emit([fn])
    name = sizes.MPICH[coll].name
    assert f'"{name}<=' in text or f'"{name}=any"' in text
    assert ("avg_msg_size" in text) == (name == "avg_msg_size")       # csel aborts on avg_msg_size elsewhere
    selection = MpichSelection(text)
    for comm, msg in probe_points(fn):
        if not fn.comm_sizes[0] <= comm <= fn.comm_sizes[-1]:
            continue
        container, _ = selection.lookup(coll, comm, MPICH_KEY[coll](msg, comm))
        assert container == mpich.container(coll, fn.query(comm, msg).algorithm)[1], (comm, msg)


@pytest.mark.parametrize("coll", MPICH_NO_KEY)
def test_mpich_collectives_keyed_on_no_message_size_carry_no_message_key(coll):
    names = mpich_names(coll)
    fn = tree_choosing(coll, [2, 4], [0, 64], [[(names[0], 0), (names[0], 0)], [(names[-1], 0), (names[-1], 0)]])
    text = mpich_json.emit([fn])
    assert "msg_size" not in text
    selection = MpichSelection(text)
    assert selection.lookup(coll, 2, 0)[0] == mpich.container(coll, names[0])[1]
    assert selection.lookup(coll, 5, 0)[0] == mpich.container(coll, names[-1])[1]


def test_emit_tells_a_collective_no_rules_file_has():
    fn = random_fn(1, 2, 2, 1, None, names=["1"], collective="gatherv")
    with pytest.raises(Exception, match="Open MPI rules files have no collective 'gatherv'"):
        emit("ompi-rules", [fn])


def test_library_sizes_invert_exactly():
    for library, table in sizes.TABLES.items():
        for coll, key in table.items():
            if key.form == sizes.NONE:
                continue
            for p in (1, 3, 4, 17):
                for b in (0, 1, 1000, 1024, 1 << 20):
                    lo = sizes.lower_bound(library, coll, b, p)
                    assert sizes.per_rank_bound(library, coll, lo, p) == b
                    for m in (b - 1, b, b + 1):
                        if m >= 0:
                            assert (m >= b) == (sizes.library_size(library, coll, m, p) >= lo)


def test_verify_refuses_an_mpich_size_key_csel_lacks_for_the_collective(tmp_path):
    path = tmp_path / "sel.json"
    path.write_text('{"collective=allgather": {"comm_type=intra": {\n'
                    '  "avg_msg_size<=1024": {"algorithm=MPIR_Allgather_intra_ring": {}},\n'
                    '  "avg_msg_size=any": {"algorithm=MPIR_Allgather_intra_ring": {}}}}}\n')
    from quadsel.errors import InputError
    with pytest.raises(InputError, match=r"sel.json:2: MPICH's csel has no avg_msg_size for allgather"):
        read_rules_file(str(path))


@pytest.mark.parametrize("coll", sorted(set(sizes.PER_RANK) - {"barrier"}))
def test_the_c_function_says_it_takes_bytes_per_rank_for_every_collective(coll):
    fn = tree_choosing(coll, [2, 4], [64, 1024], [[("1", 0), ("2", 0)], [("2", 0), ("1", 0)]])
    for source in (generate_c(fn), emit("c", [fn], flavor="table")):
        assert f"msg_size: bytes per rank, as the benchmarks print it -- {sizes.PER_RANK[coll]}" in source
        assert "int quadsel_" + coll + "_decision(int comm_size, size_t msg_size, int *segsize)" in source


def test_beyond_the_expansion_cap_the_keys_stay_exact_at_measured_comm_sizes(monkeypatch):
    from quadsel.targets import rule_list
    monkeypatch.setattr(rule_list, "EXPAND_MAX", 2)
    fn = allgather_tree()                                     # comm sizes 2, 4, 8: 7 sizes > 2
    classic = OmpiClassicRules(ompi_rules.emit([fn]))
    assert [comm for comm, _ in classic.collectives[0]] == [2, 4, 8]
    for comm in (2, 4, 8):
        assert classic.lookup(0, comm, 1023 * comm)[0] == 1 and classic.lookup(0, comm, 1024 * comm)[0] == 2
