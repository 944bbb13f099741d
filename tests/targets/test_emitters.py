import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from quadsel.libraries import mpich, openmpi
from quadsel.targets import mpich_json, ompi_json, ompi_rules, ompi_tuned
from quadsel.targets.rule_list import build_rule_list
from quadsel.cli import main
from quadsel.errors import QuadselError

from library_readers import MpichSelection, OmpiClassicRules, OmpiJsonRules
from helpers import COLL_ID, MPICH_BASE, OMPI_IDS, mpich_fns, ompi_fns, probe_points, random_fn

HERE = Path(__file__).resolve().parent


def expected_ompi(fn, comm, msg):
    method = fn.query(comm, msg)
    alg = 0 if method.algorithm == "default" else int(method.algorithm)   # a region handed back: coll/tuned's own
    faninout = 4 if alg == 2 and fn.collective in ("bcast", "reduce") else 0
    return alg, faninout, method.segsize


# -- every emitter agrees with `quadsel query` at every probe point --------------------------------------------
@given(st.integers(0, 10**6), st.sampled_from([["bcast"], ["reduce"], ["bcast", "reduce"], ["bcast", "reduce", "allreduce"]]),
       st.integers(1, 6), st.integers(1, 8), st.integers(1, 5), st.sampled_from([None, 1, 2]), st.sampled_from([None, 0, 8]),
       st.booleans())
@settings(max_examples=40, deadline=None)
def test_ompi_classic_rules_follow_the_tree(seed, collectives, n_comm, n_msg, n_methods, max_depth, max_requests,
                                            library_default):
    fns = ompi_fns(seed, collectives, n_comm, n_msg, n_methods, max_depth, library_default)
    rules = OmpiClassicRules(ompi_rules.emit(fns, max_requests=max_requests))
    assert rules.version == (1 if max_requests is None else 2)
    assert not rules.ignored                       # every first message rule is for size 0
    assert sorted(rules.collectives) == sorted(COLL_ID[c] for c in collectives)
    for fn in fns:
        for comm, msg in probe_points(fn):
            got = rules.lookup(COLL_ID[fn.collective], comm, msg)
            assert got == expected_ompi(fn, comm, msg) + (max_requests or 0,), (fn.collective, comm, msg)


@given(st.integers(0, 10**6), st.sampled_from([["bcast"], ["bcast", "reduce", "allreduce"]]),
       st.integers(1, 6), st.integers(1, 8), st.integers(1, 5), st.sampled_from([None, 1]), st.booleans())
@settings(max_examples=30, deadline=None)
def test_ompi_json_rules_follow_the_tree(seed, collectives, n_comm, n_msg, n_methods, max_depth, library_default):
    fns = ompi_fns(seed, collectives, n_comm, n_msg, n_methods, max_depth, library_default)
    rules = OmpiJsonRules(ompi_json.emit(fns))
    for fn in fns:
        for comm, msg in probe_points(fn):
            assert rules.lookup(fn.collective, comm, msg)[:3] == expected_ompi(fn, comm, msg), (comm, msg)


@given(st.integers(0, 10**6), st.sampled_from([["bcast"], ["reduce"], ["bcast", "reduce", "allreduce"]]),
       st.integers(1, 6), st.integers(1, 8), st.integers(1, 4), st.sampled_from([None, 1]), st.booleans())
@settings(max_examples=30, deadline=None)
def test_mpich_selection_follows_the_tree(seed, collectives, n_comm, n_msg, n_methods, max_depth, library_default):
    fns = mpich_fns(seed, collectives, n_comm, n_msg, n_methods, max_depth, library_default)
    selection = MpichSelection(mpich_json.emit(fns, base=MPICH_BASE if library_default else None))
    for fn in fns:
        for comm, msg in probe_points(fn):
            name, params = selection.lookup(fn.collective, comm, msg)
            algorithm = fn.query(comm, msg).algorithm
            if algorithm == "default":     # handed back: MPICH's own selection (the test base: binomial)
                algorithm = "binomial"
            if algorithm == "smp" and comm == 1:   # no node hierarchy: the documented guard's fallback
                algorithm = mpich.HIERARCHY_FALLBACK[fn.collective]
            assert name == f"MPIR_{fn.collective.capitalize()}_intra_{algorithm}", (comm, msg)
            if name == "MPIR_Bcast_intra_pipelined_tree":
                assert params == {"tree_type": "kary", "k": "2", "is_non_blocking": "1", "chunk_size": "8192",
                                  "recv_pre_posted": "0"}


# -- names ------------------------------------------------------------------------------------------------------
def test_named_open_mpi_algorithms_map_to_coll_tuned_ids():
    assert openmpi.algorithm_id("bcast", "Basic Linear") == 1
    assert openmpi.algorithm_id("bcast", "split-binary") == 4
    assert openmpi.algorithm_id("bcast", "SCATTER_ALLGATHER_RING") == 9
    assert openmpi.algorithm_id("reduce", "in-order binary") == 6
    assert openmpi.algorithm_id("reduce", "7") == 7
    assert openmpi.algorithm_id("allreduce", "segmented ring") == 5
    fn = random_fn(5, 3, 4, 2, None, names=["binomial", "Basic Linear"])
    assert {r[1] for comm in OmpiClassicRules(ompi_rules.emit([fn])).collectives[7] for r in comm[1]} <= {1, 6}


@pytest.mark.parametrize("coll, name", [("bcast", "hyperspace"), ("bcast", "12"), ("bcast", "0"), ("reduce", "knomial")])
def test_unknown_open_mpi_algorithms_are_refused(coll, name):
    with pytest.raises(QuadselError, match="coll/tuned"):
        openmpi.algorithm_id(coll, name)


def test_unknown_collective_is_refused_for_open_mpi():
    fn = random_fn(1, 2, 2, 1, None, names=["1"], collective="frobnicate")
    with pytest.raises(QuadselError, match="no collective"):
        ompi_rules.emit([fn])


@pytest.mark.parametrize("name, match", [("6", "Open MPI ids"), ("binomial\"}, {\"x", "not an MPICH"),
                                         ("Binomial Tree", "not an MPICH"), ("knomial", "not an MPICH")])
def test_mpich_emitter_refuses_names_that_are_not_mpich_algorithms(name, match):
    fn = random_fn(2, 2, 3, 1, None, names=[name])
    with pytest.raises(QuadselError, match=match):
        mpich_json.emit([fn])


def test_mpich_accepts_full_container_names_and_refuses_segment_sizes():
    assert mpich.container("bcast", "MPIR_Bcast_intra_scatter_ring_allgather")[1] == \
        "MPIR_Bcast_intra_scatter_ring_allgather"
    assert mpich.container("reduce", "nb")[1] == "MPIR_Reduce_allcomm_nb"
    fn = random_fn(2, 2, 3, 2, None, names=["binomial"])   # the second method is binomial at seg 1024
    with pytest.raises(QuadselError, match="segment size"):
        mpich_json.emit([fn])


def test_two_trees_of_one_collective_are_refused():
    fns = ompi_fns(1, ["bcast", "bcast"])
    with pytest.raises(QuadselError, match="one tree per collective"):
        ompi_rules.emit(fns)


# -- MPICH base selection ----------------------------------------------------------------------------------------
BASE = {"collective=bcast": {"comm_type=intra": {"algorithm=MPIR_Bcast_intra_binomial": {}}},
        "collective=barrier": {"comm_type=intra": {"algorithm=MPIR_Barrier_intra_k_dissemination": {}}}}


def test_mpich_base_keeps_other_collectives_and_replaces_ours():
    fn = random_fn(4, 2, 3, 2, None, names=["binomial", "scatter_ring_allgather"])
    doc = json.loads(mpich_json.emit([fn], base=BASE))
    assert list(doc) == ["collective=bcast", "collective=barrier"]
    assert doc["collective=barrier"] == BASE["collective=barrier"]
    assert doc["collective=bcast"] == mpich_json.selection(build_rule_list(fn))


def test_a_base_key_spelled_with_spaces_is_the_same_key_and_the_tree_replaces_it(tmp_path):
    """issue 32: `collective = bcast` in the base shadowed the tree's own `collective=bcast` (MPICH read the first)."""
    spaced = {"collective = bcast": {"comm_type = intra": {"algorithm=MPIR_Bcast_intra_binomial": {}}},
              "collective=barrier": BASE["collective=barrier"]}
    (tmp_path / "base.json").write_text(json.dumps(spaced))
    base = mpich_json.load_base(str(tmp_path / "base.json"))
    assert list(base) == ["collective=bcast", "collective=barrier"] and "comm_type=intra" in base["collective=bcast"]
    fn = random_fn(4, 2, 3, 2, None, names=["binomial", "scatter_ring_allgather"])
    doc = json.loads(mpich_json.emit([fn], base=base))
    assert [k for k in doc if k.replace(" ", "") == "collective=bcast"] == ["collective=bcast"]
    assert doc["collective=bcast"] == json.loads(mpich_json.emit([fn]))["collective=bcast"]


def test_mpich_base_is_read_from_json_or_from_a_library_that_embeds_it(tmp_path):
    (tmp_path / "base.json").write_text(json.dumps(BASE))
    assert mpich_json.load_base(str(tmp_path / "base.json")) == BASE
    blob = b"\x7fELF\x00junk{\"collective=x\": 1\x00" + json.dumps(BASE, separators=(",", ":")).encode() + b"\x00tail"
    (tmp_path / "libmpi.so").write_bytes(blob)
    assert mpich_json.load_base(str(tmp_path / "libmpi.so")) == BASE
    (tmp_path / "empty.so").write_bytes(b"\x7fELF nothing here")
    with pytest.raises(QuadselError, match="no MPICH collective selection"):
        mpich_json.load_base(str(tmp_path / "empty.so"))


# -- the ompi-tuned C flavour, compiled against a minimal header ----------------------------------------------------
STUB_DRIVER = r"""
#include <stdio.h>
#include <stddef.h>
struct ompi_datatype_t { size_t size; };
struct ompi_communicator_t { int size; };
struct ompi_op_t { int commute; };
typedef struct mca_coll_base_module_2_4_0_t mca_coll_base_module_t;
int ompi_comm_size(const struct ompi_communicator_t *comm) { return comm->size; }
int ompi_datatype_type_size(const struct ompi_datatype_t *type, size_t *size) { *size = type->size; return 0; }
int ompi_op_is_commute(const struct ompi_op_t *op) { return op->commute; }
static void record(int alg, int faninout, int segsize) { printf("%d %d %d\n", alg, faninout, segsize); }
int ompi_coll_tuned_bcast_intra_do_this(void *buf, int count, struct ompi_datatype_t *dtype, int root,
    struct ompi_communicator_t *comm, mca_coll_base_module_t *module, int algorithm, int faninout, int segsize)
{ (void)buf; (void)count; (void)dtype; (void)root; (void)comm; (void)module; record(algorithm, faninout, segsize); return 0; }
int ompi_coll_tuned_reduce_intra_do_this(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
    struct ompi_op_t *op, int root, struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
    int algorithm, int faninout, int segsize, int max_requests)
{ (void)sbuf; (void)rbuf; (void)count; (void)dtype; (void)op; (void)root; (void)comm; (void)module; (void)max_requests;
  record(algorithm, faninout, segsize); return 0; }
int ompi_coll_tuned_allreduce_intra_do_this(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
    struct ompi_op_t *op, struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
    int algorithm, int faninout, int segsize)
{ (void)sbuf; (void)rbuf; (void)count; (void)dtype; (void)op; (void)comm; (void)module; record(algorithm, faninout, segsize); return 0; }
int DECISION(DECL);
int main(void)
{
    long comm_size, count, dsize; int commute;
    while (scanf("%ld %ld %ld %d", &comm_size, &count, &dsize, &commute) == 4) {
        struct ompi_communicator_t comm; struct ompi_datatype_t type; struct ompi_op_t op;
        comm.size = (int)comm_size; type.size = (size_t)dsize; op.commute = commute;
        CALL;
    }
    return 0;
}
"""
CALLS = {
    "bcast": ("void *, int, struct ompi_datatype_t *, int, struct ompi_communicator_t *, mca_coll_base_module_t *",
              "(void)op; DECISION(NULL, (int)count, &type, 0, &comm, NULL)"),
    "reduce": ("const void *, void *, int, struct ompi_datatype_t *, struct ompi_op_t *, int, "
               "struct ompi_communicator_t *, mca_coll_base_module_t *",
               "DECISION(NULL, NULL, (int)count, &type, &op, 0, &comm, NULL)"),
    "allreduce": ("const void *, void *, int, struct ompi_datatype_t *, struct ompi_op_t *, "
                  "struct ompi_communicator_t *, mca_coll_base_module_t *",
                  "DECISION(NULL, NULL, (int)count, &type, &op, &comm, NULL)"),
}


@pytest.mark.parametrize("collective", ["bcast", "reduce", "allreduce"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ompi_tuned_flavour_compiles_and_calls_do_this_like_the_query(gcc, tmp_path, collective, seed):
    from conftest import GCC_FLAGS
    fn = random_fn(seed, 4, 6, 5, None if seed != 2 else 1, names=OMPI_IDS[collective], collective=collective)
    source = ompi_tuned.generate(fn)
    name = f"ompi_coll_tuned_{collective}_intra_dec_fixed"
    assert f"int {name}(" in source
    (tmp_path / "decision.c").write_text(source)
    decl, call = CALLS[collective]
    (tmp_path / "driver.c").write_text(STUB_DRIVER.replace("CALL", call).replace("DECL", decl).replace("DECISION", name))
    subprocess.run([gcc, *GCC_FLAGS, f"-I{HERE}", '-DQUADSEL_OMPI_HEADER="ompi_tuned_stub.h"', "-o",
                    str(tmp_path / "decide"), str(tmp_path / "decision.c"), str(tmp_path / "driver.c")],
                   check=True, capture_output=True, text=True)
    points = probe_points(fn)
    # message size = datatype size x count: use 4-byte elements where the size allows it
    lines = [f"{c} {m // 4 if m % 4 == 0 else m} {4 if m % 4 == 0 else 1} 1" for c, m in points]
    expected = [expected_ompi(fn, c, m) for c, m in points]
    if collective != "bcast":   # a non-commutative op falls back to an order-keeping algorithm
        keep = {"reduce": ({1, 6}, 6), "allreduce": ({1, 2, 3}, 3)}[collective]
        lines += [f"{c} {m} 1 0" for c, m in points]
        for c, m in points:
            alg, fan, seg = expected_ompi(fn, c, m)
            alg = alg if alg in keep[0] else keep[1]
            expected.append((alg, 4 if alg == 2 and collective == "reduce" else 0, seg))
    out = subprocess.run([str(tmp_path / "decide")], input="\n".join(lines) + "\n", check=True,
                         capture_output=True, text=True).stdout
    assert [tuple(int(v) for v in line.split()) for line in out.splitlines()] == expected


def test_ompi_tuned_flavour_compiles_with_size_t_count_for_main(gcc, tmp_path):
    from conftest import GCC_FLAGS
    (tmp_path / "d.c").write_text(ompi_tuned.generate(ompi_fns(7, ["bcast"])[0]))
    header = (HERE / "ompi_tuned_stub.h").read_text()
    (tmp_path / "stub.h").write_text(header)
    subprocess.run([gcc, *GCC_FLAGS, "-c", f"-I{tmp_path}", '-DQUADSEL_OMPI_HEADER="stub.h"',
                    "-DQUADSEL_OMPI_COUNT_T=size_t", "-o", str(tmp_path / "d.o"), str(tmp_path / "d.c")],
                   check=True, capture_output=True, text=True)


def test_ompi_tuned_flavour_refuses_other_collectives():
    fn = random_fn(1, 2, 2, 1, None, names=["1"], collective="gather")
    with pytest.raises(QuadselError, match="ompi-tuned supports"):
        ompi_tuned.generate(fn)


# -- the CLI ---------------------------------------------------------------------------------------------------
@pytest.fixture
def trees(tmp_path):
    paths = []
    for fn in ompi_fns(21, ["bcast", "reduce"]):
        path = tmp_path / f"{fn.collective}.qt.json"
        fn.save(path)
        paths.append(str(path))
    return paths


def test_cli_codegen_writes_one_rules_file_for_several_collectives(trees, tmp_path):
    out = tmp_path / "rules.conf"
    result = CliRunner().invoke(main, ["codegen", "--target", "ompi-rules", *trees, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(OmpiClassicRules(out.read_text()).collectives) == [7, 11]
    result = CliRunner().invoke(main, ["codegen", "-t", "ompi-rules", "--max-requests", "2", trees[0]])
    assert result.output.startswith("rule-file-version-2\n")
    result = CliRunner().invoke(main, ["codegen", "-t", "ompi-json", *trees])
    assert set(json.loads(result.output)["collectives"]) == {"bcast", "reduce"}


def test_cli_codegen_c_flavours(trees):
    result = CliRunner().invoke(main, ["codegen", trees[0]])
    assert "int quadsel_bcast_decision(int comm_size, size_t msg_size, int *segsize)" in result.output
    result = CliRunner().invoke(main, ["codegen", "--flavor", "ompi-tuned", trees[1]])
    assert "ompi_coll_tuned_reduce_intra_do_this(" in result.output


@pytest.mark.parametrize("args, message", [
    (["--target", "c"], "exactly one TREE"),
    (["--target", "ompi-rules", "--flavor", "ompi-tuned"], "--target c only"),
    (["--target", "mpich-json"], "--mpich-base"),
    (["--target", "mpich-json", "--mpich-base", "none"], "Open MPI ids"),
    (["--target", "c", "--max-requests", "3"], "--max-requests"),
])
def test_cli_codegen_errors_are_one_line_exit_2(trees, args, message):
    result = CliRunner().invoke(main, ["codegen", *args, *trees])
    assert result.exit_code == 2 and message in result.output


def test_mpich_guards_restricted_algorithms_like_mpich_does():
    fn = random_fn(8, 2, 3, 2, None, names=["reduce_scatter_gather", "binomial"], collective="reduce")
    text = mpich_json.emit([fn])
    assert '"is_op_built_in=no"' in text and '"count<pow2"' in text
    guarded = mpich_json._leaf("bcast", "scatter_recursive_doubling_allgather", guarded=True)
    assert list(guarded) == ["comm_size=pow2", "comm_size=any"]


def test_mpich_smp_runs_only_on_parent_communicators():
    # MPICH 5.0.2 asserts MPIR_Comm_is_parent_comm inside smp: its own selection guards it, and so must we
    for coll, fallback in (("bcast", "binomial"), ("reduce", "binomial")):
        guarded = mpich_json._leaf(coll, "smp", guarded=True)
        assert list(guarded) == ["comm_hierarchy=parent", "comm_hierarchy=any"]
        assert list(guarded["comm_hierarchy=any"]) == [f"algorithm=MPIR_{coll.capitalize()}_intra_{fallback}"]
    assert "is_commutative=yes" in mpich_json._leaf("reduce", "smp", guarded=True)["comm_hierarchy=parent"]
