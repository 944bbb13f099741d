"""Layout forests in Open MPI's files, read back under Open MPI's own matching: the 5.0.x classic file (-t ompi-rules),
the JSON rules with comm_rank_distribution (-t ompi-json, main / 6.x) and coll/han's dynamic rules (-t ompi-han)
with the tuned file its global level calls. Each must answer what `quadsel query` answers for the layout the file
can see: the forest itself where the file can tell the layout, else the packed layout of the comm size
(targets/layout_rules.py; docs/formats-output.md, "Layout forests in Open MPI's files")."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_function import query_ppn
from quadsel.decision.layouts import build_from_groups, layout_groups
from quadsel.errors import InputError, QuadselError
from quadsel.ingest.table import Measurement
from quadsel.json_lines import parse_json_lines
from quadsel.libraries import openmpi, sizes
from quadsel.targets import emit, ompi_han, ompi_json, ompi_rules
from quadsel.targets.layout_rules import member_ranges, reference_ppn

from layout_helpers import probe_sizes

BCAST = ("1", "6", "8")
ALLGATHER = ("1", "2", "4")


def forest(seed, collective="bcast", ppns=(1, 2, 4), nodes=(1, 2, 4), default=False, names=BCAST):
    rng = np.random.default_rng(seed)
    msgs = sorted(rng.choice(np.arange(1, 1 << 20), size=5, replace=False).tolist())
    rows = []
    for p in ppns:
        for n in nodes:
            for m in msgs:
                for name in names + (("default",) if default else ()):
                    rows.append(Measurement(collective, name, 0, n * p, int(m), float(rng.uniform(1, 100)),
                                            source=f"x.csv:{len(rows) + 2}", nodes=n, ppn=p))
    build = lambda d: build_size_tree(d, outside="extrapolate", keep_default=default)  # noqa: E731
    return build_from_groups(layout_groups(rows), collective, build)[0]


def alg(collective, method):
    return openmpi.algorithm_id(collective, method.algorithm)


def grid(f):
    msgs, comms = set(), set()
    for m in f.layers:
        msgs |= set(probe_sizes(m.tree.msg_sizes, int(m.tree.msg_sizes[-1])))
        comms |= set(probe_sizes(m.tree.comm_sizes, int(m.tree.comm_sizes[-1])))
    comms |= {lo + d for lo, hi, _ in member_ranges(f, 1) + member_ranges(f, 2) for d in (-1, 0, 1)}
    return sorted(c for c in comms if c >= 1), sorted(msgs)


SEEDS = st.integers(0, 10 ** 6)
SHAPES = st.sampled_from([((1, 2, 4), (1, 2, 4)), ((1, 8), (1, 3)), ((2, 3, 16), (2, 16)), ((4,), (1, 2))])


@settings(max_examples=20, deadline=None)
@given(SEEDS, SHAPES, st.sampled_from(["bcast", "allgather"]))
def test_classic_file_answers_the_packed_layout_of_every_comm_size(seed, shape, collective):
    f = forest(seed, collective, *shape, names=BCAST if collective == "bcast" else ALLGATHER)
    text = emit("ompi-rules", [f])
    assert "cannot tell 8 ranks on 1 node from 8 nodes x 1" in text
    _, data, ignored, warnings = ompi_rules.read(text, "f.rules")
    assert ignored is None and warnings == []
    comms, msgs = grid(f)
    top = f.layers[-1].ppn
    largest = max(int(m.tree.comm_sizes[-1]) for m in f.layers)
    for c in comms:
        if collective == "allgather" and c > largest:
            continue          # a total key beyond the measured sizes is scaled by the largest (docs/formats-output.md)
        for m in msgs:
            key = sizes.library_size("openmpi", collective, m, c)       # total for allgather: m x c
            rule = ompi_rules.lookup(data[openmpi.COLLECTIVE_IDS[collective]], c, key)
            assert rule.alg == alg(collective, f.query(c, m, ppn=reference_ppn(c, top))), (c, m)


@settings(max_examples=20, deadline=None)
@given(SEEDS, SHAPES)
def test_json_rules_answer_the_forest_on_one_node_and_one_per_node_and_the_packed_layout_elsewhere(seed, shape):
    f = forest(seed, "bcast", *shape)
    doc = parse_json_lines(emit("ompi-json", [f]), "f.json")
    data, warnings = ompi_json.read(doc, "f.json")
    assert warnings == []
    assert [e.distribution for e in data["bcast"]][0] == "single-node"
    comms, msgs = grid(f)
    top = f.layers[-1].ppn
    for nodes in (1, 2, 3, 4, 64):
        for c in comms:
            if c < nodes:
                continue
            ppn = query_ppn(c, nodes=nodes)
            exact = nodes == 1 or ppn == 1
            at = ppn if exact else reference_ppn(c, top, 2)
            for m in msgs:
                rule = ompi_json.lookup(data["bcast"], c, m, layout=(nodes, ppn))
                assert rule.alg == alg("bcast", f.query(c, m, ppn=at)), (nodes, c, m)


def test_one_per_node_rules_need_the_disjoint_flag():
    f = forest(3, "bcast", (1, 4), (1, 2))
    data, _ = ompi_json.read(parse_json_lines(emit("ompi-json", [f]), "f.json"), "f.json")
    # MPI_COMM_WORLD carries no disjointness flag in Open MPI main: a 2 x 1 world takes the `any` entries
    rule = ompi_json.lookup(data["bcast"], 2, 0, layout=(2, 1), disjoint_set=False)
    assert rule.alg == alg("bcast", f.query(2, 0, ppn=reference_ppn(2, 4, 2)))


@settings(max_examples=20, deadline=None)
@given(SEEDS, SHAPES, st.sampled_from(["bcast", "allgather"]), st.booleans())
def test_han_and_tuned_files_together_run_what_the_forest_says(seed, shape, collective, default):
    f = forest(seed, collective, *shape, default=default, names=BCAST if collective == "bcast" else ALLGATHER)
    han = ompi_han.read(emit("ompi-han", [f]), "han.rules")
    assert han.ignored is None and han.warnings == []
    _, data, _, _ = ompi_rules.read(emit("ompi-rules", [f]), "tuned.rules")
    tuned = data[openmpi.COLLECTIVE_IDS[collective]]
    comms, msgs = grid(f)
    top = f.layers[-1].ppn
    largest = max(int(m.tree.comm_sizes[-1]) for m in f.layers)
    for nodes in (1, 2, 4):
        for c in comms:
            if c < nodes or (collective == "allgather" and c > largest):
                continue
            for m in msgs:
                component, rule = ompi_han.decide(han, tuned, collective, nodes, c, m,
                                                  sizes.library_size("openmpi", collective, m, c))
                method = f.query(c, m, ppn=reference_ppn(c, top))
                if nodes > 1 and c > 1 and method.algorithm == "default":
                    assert (component, rule) == ("han", None), (nodes, c, m)
                else:
                    assert component == "tuned" and rule.alg == alg(collective, method), (nodes, c, m)


def test_han_keys_bytes_per_rank_where_tuned_keys_the_total_of_a_gather_type_collective():
    rows = [Measurement("allgather", name, 0, n * 2, m, 1.0 if (name == "default") == (m >= 4096) else 9.0,
                        source=f"x.csv:{i}", nodes=n, ppn=2)
            for i, (n, m, name) in enumerate((n, m, name) for n in (1, 2) for m in (1024, 4096) for name in ("2", "default"))]
    build = lambda d: build_size_tree(d, outside="extrapolate", keep_default=True)  # noqa: E731
    f = build_from_groups(layout_groups(rows), "allgather", build)[0]
    han = ompi_han.read(emit("ompi-han", [f]), "han.rules")
    confs = dict(han.collectives)["allgather"]["global_communicator"]
    assert [(r.msg, r.component) for r in confs[0].rules] == [(0, "tuned"), (4096, "han")]   # per rank
    _, data, _, _ = ompi_rules.read(emit("ompi-rules", [f]), "tuned.rules")
    at4 = next(c for c in data[openmpi.COLLECTIVE_IDS["allgather"]] if c.comm == 4)
    assert [(r.msg, r.alg) for r in at4.rules] == [(0, 2), (4096 * 4, 0)]                      # total = x 4


GOOD = "1\nbcast\n1\nglobal_communicator\n1\n1 2\n0 tuned\n8192 han @simple\n"


def test_han_reader_follows_open_mpis_grammar():
    han = ompi_han.read(GOOD, "h")
    assert han.ignored is None
    assert ompi_han.lookup(han, "bcast", "global_communicator", 4, 8191).component == "tuned"
    rule = ompi_han.lookup(han, "bcast", "global_communicator", 4, 8192)
    assert (rule.component, rule.algorithm) == ("han", "simple")
    assert ompi_han.lookup(han, "bcast", "intra_node", 4, 0) is None             # MCA default (tuned)
    assert ompi_han.read(GOOD.replace("bcast", "7").replace("global_communicator", "2"), "h").ignored is None


@pytest.mark.parametrize("text, why", [
    (GOOD.replace("1 2\n", "2 2\n"), "first configuration size"),
    (GOOD.replace("0 tuned", "2 tuned"), "first message size"),
    (GOOD.replace("tuned", "tunned"), "unknown component"),
    (GOOD.replace("@simple", "@fast"), "no bcast algorithm"),
    (GOOD.replace("global_communicator", "global"), "unknown level"),
    (GOOD.replace("bcast", "bcst"), "unknown collective"),
    (GOOD.replace("8192 han @simple\n", ""), "ends"),
])
def test_han_files_open_mpi_drops_whole_are_reported(text, why):
    assert why in ompi_han.read(text, "h").ignored


@pytest.mark.parametrize("text", [GOOD.replace("0 tuned", "0x0 tuned"), GOOD.replace("tuned", "tuned#x"),
                                  GOOD.replace("8192", "08192")])
def test_han_words_open_mpi_would_misread_are_refused_naming_the_line(text):
    with pytest.raises(InputError) as err:
        ompi_han.read(text, "h.rules")
    assert "h.rules:" in str(err.value)


def test_han_refuses_a_collective_it_does_not_decide():
    f = forest(1, "bcast", (1, 2), (1, 2))
    f.collective = "scan"
    with pytest.raises(QuadselError, match="coll/han does not decide scan"):
        emit("ompi-han", [f])
