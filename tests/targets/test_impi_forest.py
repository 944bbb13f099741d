"""A layout forest as Intel MPI's JSON tuning file: one `ppn=P` block per member, read back under the matching Intel
MPI 2021.18.1 was measured to use across hosts (docs/cluster.md, "Intel MPI's ppn level": per level the first entry
>= the call's value or -1, none: the last; ppn = comm_size // nodes), answers as `quadsel query --ppn/--nodes`."""

import json

from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from quadsel.cli import main
from quadsel.decision.decision_function import query_ppn
from quadsel.targets import emit, impi_json

from layout_helpers import forest_of, layout_rows, probe_sizes

NAMES = ("1", "2", "3", "7", "8")      # Intel MPI bcast presets


def intel_forest(seed, ppns, nodes=(1, 2, 4), depth=None):
    forest = forest_of(layout_rows(seed, ppns=ppns, nodes=nodes, names=NAMES), max_depth=depth)
    for member in forest.layers:
        member.tree.provenance["library"] = "intelmpi"
    return forest


def read(forest):
    return impi_json.read(emit("impi-json", [forest]), "tuning.json")["bcast"]


def inside(fn, comm, msg):
    """Inside the member's measured range: outside it the file takes the nearest measured size's rules (as for
    2-D trees, impi_json), the forest's tree extrapolates."""
    return (int(fn.comm_sizes[0]) <= comm <= int(fn.comm_sizes[-1])
            and int(fn.msg_sizes[0]) <= msg <= int(fn.msg_sizes[-1]))


def test_one_ppn_block_per_member_in_order_the_last_minus_one():
    forest = intel_forest(3, (1, 2, 8))
    doc = json.loads(emit("impi-json", [forest]))
    blocks = list(doc["coll=Bcast"])
    assert blocks == [f"ppn={m.ppn}" for m in forest.layers[:-1]] + ["ppn=-1"]
    assert len(blocks) == len(forest.layers) > 1
    assert all(next(iter(b)).startswith("comm_size=") for b in doc["coll=Bcast"].values())


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10 ** 6), st.sampled_from([(1, 2, 4), (1, 8), (4,), (2, 3, 16)]),
       st.sampled_from([(1, 2, 4), (1, 3), (2, 16)]), st.sampled_from([None, 1, 2]))
def test_reader_answers_as_the_forest_query_at_every_layout_and_boundary(seed, ppns, nodes, depth):
    forest = intel_forest(seed, ppns, nodes, depth)
    ppns_read = read(forest)
    node_counts = sorted({n + d for n in nodes for d in (-1, 0, 1) if n + d >= 1} | {64})
    msgs, comms = set(), set()
    for member in forest.layers:
        msgs |= set(probe_sizes(member.tree.msg_sizes, int(member.tree.msg_sizes[-1])))
        comms |= set(probe_sizes(member.tree.comm_sizes, int(member.tree.comm_sizes[-1])))
        comms |= {n * b + d for n in node_counts for b in forest.bounds.tolist() for d in (-1, 0, 1)}
    msgs = sorted(m for m in msgs if m < 2 ** 31)
    ppn_probes = sorted({1, 2 ** 20} | {b + d for b in forest.bounds.tolist() for d in (-1, 0, 1) if b + d >= 1})
    checked = uneven = 0
    for c in sorted(comms):
        if c < 1:
            continue
        layouts = [("ppn", p, p) for p in ppn_probes]                        # quadsel query --ppn P
        layouts += [("nodes", n, query_ppn(c, nodes=n)) for n in node_counts if n <= c]   # --nodes N
        for how, value, forest_ppn in layouts:
            member = forest.layers[int(forest.layer_index([forest_ppn])[0])]
            intel_ppn = value if how == "ppn" else c // value        # measured: comm_size // nodes
            if intel_ppn != forest_ppn:         # an uneven spread (c not a multiple of nodes): Intel takes the
                uneven += 1                     # floor, the --nodes query the ceiling (docs/formats-output.md)
                member = forest.layers[int(forest.layer_index([intel_ppn])[0])]
                forest_ppn = intel_ppn
            for m in msgs:
                if not inside(member.tree, c, m):
                    continue
                want = forest.query(c, m, ppn=forest_ppn).algorithm
                got, _ = impi_json.lookup(ppns_read, c, m, **{how: value})
                assert str(got) == want, (how, value, c, m)
                checked += 1
    assert checked > 100


def test_an_even_layout_matches_the_nodes_query_and_an_uneven_one_takes_the_floor():
    forest = intel_forest(5, (1, 4), nodes=(2,), depth=0)
    ppns_read = read(forest)
    low, high = (m.tree.query(8, 64).algorithm for m in forest.layers)
    # 8 ranks on 2 nodes: ppn 4 both ways; 6 ranks on 4 nodes: Intel's 6 // 4 = 1, the query's ceil(6 / 4) = 2
    assert str(impi_json.lookup(ppns_read, 8, 64, nodes=2)[0]) == forest.query(8, 64, ppn=query_ppn(8, nodes=2)).algorithm
    assert str(impi_json.lookup(ppns_read, 6, 64, nodes=4)[0]) == forest.layers[0].tree.query(6, 64).algorithm
    assert forest.layer_index([query_ppn(6, nodes=4)])[0] == 1 and low is not None and high is not None


def test_codegen_writes_the_forest_and_quadsel_query_agrees(tmp_path):
    forest = intel_forest(9, (1, 2, 4), nodes=(1, 2))
    tree = tmp_path / "f.qt.json"
    tree.write_text(forest_document(forest))
    out = tmp_path / "tuning.json"
    result = CliRunner().invoke(main, ["codegen", str(tree), "-t", "impi-json", "-o", str(out)])
    assert result.exit_code == 0, result.output
    ppns_read = impi_json.read(out.read_text(), str(out))["bcast"]
    for member in forest.layers:
        for c in member.tree.comm_sizes.tolist():
            for m in member.tree.msg_sizes.tolist()[:3]:
                for opt, value in (("--ppn", member.ppn), ("--nodes", max(c // member.ppn, 1))):
                    asked = CliRunner().invoke(main, ["query", str(tree), "--comm", str(c), "--msg", str(m),
                                                      opt, str(value)])
                    assert asked.exit_code == 0, asked.output
                    how = opt.lstrip("-")
                    got, _ = impi_json.lookup(ppns_read, c, m, **{how: value})
                    if how == "nodes" and impi_json.intel_ppn(c, value) != query_ppn(c, nodes=value):
                        continue
                    assert asked.stdout.split()[0] == str(got), (opt, value, c, m, asked.stdout)


def forest_document(forest):
    return forest.dumps()
