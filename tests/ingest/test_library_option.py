"""Data from a library quadsel has no tables for (issue 20): `--library NAME` and a .meta.json "library" are
honoured; that library's numeric ids stay its own ids (the C returns them), other libraries' targets refuse the
tree in one line; Intel MPI data is read with Intel MPI's presets."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from quadsel.cli import main
from quadsel.decision.decision_function import DecisionFunction
from quadsel.ingest import read_measurements


def generic_csv(path, ids=range(1, 13), comms=(2, 4, 8, 16), msgs=(1, 64, 4096, 65536, 1 << 20), seed=0):
    """Ids 1-12, each the fastest somewhere (so the tree uses many of them)."""
    rng = np.random.default_rng(seed)
    lines = ["collective,algorithm,segsize,comm_size,msg_size,time_us"]
    for ci, c in enumerate(comms):
        for mi, m in enumerate(msgs):
            winner = list(ids)[(ci * len(msgs) + mi) % len(ids)]
            for a in ids:
                t = 10.0 + rng.uniform(0, 1) if a == winner else 50.0 + rng.uniform(0, 10)
                lines.append(f"allreduce,{a},0,{c},{m},{t:.3f}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_ids_1_to_12_are_refused_as_open_mpi_without_a_library(tmp_path):
    data = generic_csv(tmp_path / "gen.csv")
    done = CliRunner().invoke(main, ["build", str(data), "-o", str(tmp_path / "t.qt.json")])
    assert done.exit_code == 2 and "is not one of Open MPI's allreduce algorithms" in done.output


@pytest.mark.parametrize("how", ["option", "meta"])
def test_other_library_builds_its_c_returns_its_ids_and_other_targets_refuse(tmp_path, how, compile_decision):
    data = generic_csv(tmp_path / "gen.csv")
    args = ["build", str(data), "--max-leaves", "none", "-o", str(tmp_path / "t.qt.json")]
    if how == "option":
        args += ["--library", "other"]
    else:
        (tmp_path / "gen.meta.json").write_text(json.dumps({"library": "other"}))
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    fn = DecisionFunction.load(str(tmp_path / "t.qt.json")).size_tree
    assert fn.provenance["library"] == "other"
    assert {m.algorithm for m in fn.methods} - {"default"} == {str(i) for i in range(1, 13)}   # default: outside
    source = CliRunner().invoke(main, ["codegen", str(tmp_path / "t.qt.json")])
    assert source.exit_code == 0 and "other's own ids" in source.output
    ask = compile_decision(source.output, "quadsel_allreduce_decision")
    points = [(int(c), int(m)) for c in fn.comm_sizes for m in fn.msg_sizes]
    answers = ask(points)
    assert [a[0] for a in answers] == [int(fn.query(c, m).algorithm) for c, m in points]
    assert {a[0] for a in answers} == set(range(1, 13))        # the library's own ids, unchanged
    for target in ("ompi-rules", "ompi-json", "impi-adjust"):
        done = CliRunner().invoke(main, ["codegen", "-t", target, str(tmp_path / "t.qt.json")])
        assert done.exit_code == 2 and len(done.output.strip().splitlines()) == 1, done.output
        assert "built from other measurements" in done.output


def test_library_option_overrides_the_metadata_with_a_note(tmp_path):
    data = generic_csv(tmp_path / "gen.csv")
    (tmp_path / "gen.meta.json").write_text(json.dumps({"library": "openmpi"}))
    rows = read_measurements([str(data)], library="other")
    assert rows.library == "other" and any("read as other (--library)" in n for n in rows.notes)


def test_intel_meta_reads_presets_and_refuses_unknown_ids(tmp_path):
    data = generic_csv(tmp_path / "impi.csv", ids=range(1, 13))
    (tmp_path / "impi.meta.json").write_text(json.dumps({"library": "intelmpi"}))
    assert read_measurements([str(data)]).library == "intelmpi"
    bad = generic_csv(tmp_path / "bad.csv", ids=(1, 40))
    (tmp_path / "bad.meta.json").write_text(json.dumps({"library": "intelmpi"}))
    done = CliRunner().invoke(main, ["build", str(bad), "-o", str(tmp_path / "b.qt.json")])
    assert done.exit_code == 2 and "algorithm id 40 is not one of Intel MPI's allreduce algorithms" in done.output


def test_bad_library_names_are_one_line_errors(tmp_path):
    data = generic_csv(tmp_path / "gen.csv")
    done = CliRunner().invoke(main, ["build", str(data), "--library", "no way!", "-o", str(tmp_path / "t.qt.json")])
    assert done.exit_code == 2 and "is not a library name" in done.output
    (tmp_path / "gen.meta.json").write_text(json.dumps({"library": "../../etc"}))
    done = CliRunner().invoke(main, ["build", str(data), "-o", str(tmp_path / "t.qt.json")])
    assert done.exit_code == 2 and "gen.meta.json" in done.output and len(done.output.strip().splitlines()) == 1


def test_library_option_wins_over_names_of_two_libraries(tmp_path):
    """`--library NAME` says whose the file is, over what its algorithm names say: names that are MPICH's and Open
    MPI's at once (a model's or another library's own names) are no error then; without it they are (they would
    merge two libraries). Found replaying benchmarks/layouts.py's synthetic sweep, whose replayed CSV says
    "library": "replay"."""
    data = tmp_path / "names.csv"
    data.write_text("collective,algorithm,segsize,comm_size,msg_size,time_us\n"
                    "bcast,scatter_ring_allgather,0,2,8,1.0\nbcast,pipeline,0,2,8,2.0\n"
                    "bcast,scatter_ring_allgather,0,4,8,3.0\nbcast,pipeline,0,4,8,2.5\n")
    out = str(tmp_path / "t.qt.json")
    refused = CliRunner().invoke(main, ["build", str(data), "-o", out])
    assert refused.exit_code == 2 and "never merged" in refused.output
    done = CliRunner().invoke(main, ["build", str(data), "--library", "synthetic", "-o", out])
    assert done.exit_code == 0, done.output
    fn = DecisionFunction.load(out).size_tree
    assert fn.query(4, 8).label == "pipeline" and fn.query(2, 8).label == "scatter_ring_allgather"
