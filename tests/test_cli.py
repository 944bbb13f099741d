"""The CLI end to end with real files: build → codegen → compiled C → query, report; and bad input."""

import json
import os

import numpy as np
import pytest
from click.testing import CliRunner

from quadsel.cli import main
from quadsel.decision.decision_function import DecisionFunction
from quadsel.libraries import openmpi

COMM = [2, 3, 4, 6, 8]
MSG = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536]
ALGS = ["1", "3", "6"]


def cube(seed=0):
    """A cost cube with structure (linear wins small, binomial large) plus noise, so maps are non-trivial."""
    rng = np.random.default_rng(seed)
    P = np.array(COMM, float)[:, None]
    m = np.array(MSG, float)[None, :]
    costs = [2 + (P - 1) * (1 + m / 2000), 5 + np.log2(P) * (2 + m / 900), 3 + np.log2(P) * (1 + m / 1000)]
    return np.stack(costs, axis=2) * rng.uniform(0.85, 1.15, size=(len(COMM), len(MSG), len(ALGS)))


def write_generic(path, t):
    lines = ["collective,algorithm,segsize,comm_size,msg_size,time_us,stddev_us,reps"]
    for ci, p in enumerate(COMM):
        for mi, m in enumerate(MSG):
            for k, a in enumerate(ALGS):
                lines.append(f"bcast,{a},0,{p},{m},{t[ci, mi, k]:.4f},0.1,10")
            lines.append(f"bcast,default,0,{p},{m},{t[ci, mi].max():.4f},0.1,10")
    path.write_text("\n".join(lines) + "\n")
    return [str(path)]


def write_skampi(folder, t):
    out = ["# SKaMPI Version 5.0.4 rev. 355", ""]
    for k, a in enumerate(ALGS):
        out.append(f'# begin result "MPI_Bcast-alg{a}-procs-length"')
        for ci, p in enumerate(COMM):
            for mi, m in enumerate(MSG):
                out.append(f"procs= {p} {m} {t[ci, mi, k]:.4f} 0.1 32")
        out.append(f'# end result "MPI_Bcast-alg{a}-procs-length"')
    path = folder / "bcast.sko"
    path.write_text("\n".join(out) + "\n")
    return [str(path)]


def write_osu(folder, t):
    paths = []
    for k, a in enumerate(ALGS):
        for ci, p in enumerate(COMM):
            path = folder / f"osu_bcast_np{p}_alg{a}.txt"
            rows = "".join(f"{m:<10d}{t[ci, mi, k]:>20.4f}\n" for mi, m in enumerate(MSG))
            path.write_text("# OSU MPI Broadcast Latency Test v7.3\n# Size       Avg Latency(us)\n" + rows)
            paths.append(str(path))
    return paths


def write_imb(folder, t):
    paths = []
    for k, a in enumerate(ALGS):
        out = ["#    Intel(R) MPI Benchmarks 2021.7, MPI-1 part", ""]
        for ci, p in enumerate(COMM):
            out += ["#----------------------------------------------------------------",
                    "# Benchmarking Bcast", f"# #processes = {p}",
                    "#----------------------------------------------------------------",
                    "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]"]
            out += [f"{m:>13d} {1000:>12d} {t[ci, mi, k] * 0.9:>12.2f} {t[ci, mi, k] * 1.1:>12.2f} {t[ci, mi, k]:>12.4f}"
                    for mi, m in enumerate(MSG)]
            out.append("")
        path = folder / f"imb_bcast_alg{a}.txt"
        path.write_text("\n".join(out) + "\n")
        paths.append(str(path))
    return paths


WRITERS = {"csv": lambda f, t: write_generic(f / "bcast.csv", t), "skampi": write_skampi, "osu": write_osu,
           "imb": write_imb}


def run(args, ok=True):
    result = CliRunner().invoke(main, [str(a) for a in args])
    if ok:
        assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_exact_tree_c_returns_the_best_measured_algorithm_everywhere(fmt, tmp_path, compile_decision):
    t = cube()
    files = WRITERS[fmt](tmp_path, t)
    tree = tmp_path / "bcast.qt.json"
    run(["build", *files, "--max-leaves", "none", "--tolerance", "0", "-o", tree])
    source, table = tmp_path / "bcast.c", tmp_path / "bcast_table.c"
    run(["codegen", tree, "-o", source])
    run(["codegen", tree, "--flavor", "table", "-o", table])
    run(["codegen", tree, "--order", "tree", "-o", tmp_path / "tree_order.c"])
    queries = [(p, m) for p in COMM for m in MSG]
    answers = compile_decision(source.read_text(), "quadsel_bcast_decision")(queries)
    assert compile_decision(table.read_text(), "quadsel_bcast_decision")(queries) == answers
    assert compile_decision((tmp_path / "tree_order.c").read_text(), "quadsel_bcast_decision")(queries) == answers
    for (ci, mi), (alg, seg) in zip(np.ndindex(len(COMM), len(MSG)), answers):
        assert str(alg) == ALGS[int(np.argmin(t[ci, mi]))] and seg == 0
    for (p, m), (alg, _) in zip(queries, answers):   # and the CLI query agrees
        assert run(["query", tree, "--comm", p, "--msg", m]).output.split()[:2] == [str(alg), "0"]


def test_build_with_constraints_and_query_json(tmp_path):
    files = write_generic(tmp_path / "b.csv", cube(1))
    tree = tmp_path / "t.json"
    result = run(["build", *files, "--paper", "--max-depth", "1", "--pad", "edge", "-o", tree])
    # the deployed tree (4 quadrants inside, the sizes outside handed back) and the paper's padded count
    assert "tree: 8 leaves (the paper's padded tree: 4), 11 nodes" in result.output
    fn = DecisionFunction.load(tree).size_tree
    assert (fn.max_depth, fn.options.pad, fn.stats()["leaves"], fn.stats()["paper"]["leaves"]) == (1, "edge", 8, 4)
    import hashlib
    assert fn.provenance["inputs"] == [{"path": "b.csv",             # relative to the tree file: they move together
                                        "sha256": hashlib.sha256(open(files[0], "rb").read()).hexdigest()}]
    answer = json.loads(run(["query", tree, "--comm", "5", "--msg", "1K", "--json"]).output)
    method = fn.query(5, 1024)
    assert answer == {"collective": "bcast", "comm_size": 5, "msg_size": 1024, "algorithm": method.algorithm,
                      "algorithm_name": openmpi.algorithm_name("bcast", method.algorithm),
                      "segsize": method.segsize, "outside_measured_range": {}}
    run(["build", *files, "--paper", "--threshold", "0.6", "-o", tmp_path / "t2.json"])
    assert DecisionFunction.load(tmp_path / "t2.json").size_tree.accuracy_threshold == 0.6
    run(["build", *files, "--paper", "--max-depth", "2", "--leaf-rule", "penalty", "-o", tmp_path / "t3.json"])
    again = DecisionFunction.load(tmp_path / "t3.json").size_tree
    assert (again.leaf_rule, again.constraint) == ("penalty", "max_depth=2,leaf=penalty,outside=default")


def test_build_default_output_name_and_stdout(tmp_path, monkeypatch):
    files = write_generic(tmp_path / "b.csv", cube(2))
    monkeypatch.chdir(tmp_path)
    run(["build", *files])
    assert (tmp_path / "bcast.qt.json").exists()
    result = run(["build", *files, "-o", "-"])
    assert json.loads(result.stdout)["format"] == "quadsel-quadtree"


@pytest.mark.parametrize("out_format", ["md", "csv", "json"])
def test_report_formats(tmp_path, out_format):
    files = write_generic(tmp_path / "b.csv", cube(3))
    result = run(["report", *files, "--format", out_format, "--thresholds", "0.5,0.9"])
    if out_format == "json":
        rows = json.loads(result.output)["rows"]
        paper = [r for r in rows if r["method"] == "quadtree"]
        assert [r["constraint"] for r in paper][:5] == ["max_depth=1", "max_depth=2", "max_depth=3", "max_depth=4",
                                                         "exact"]
        assert any(r["method"] == "default" for r in rows) and paper[4]["penalty_max"] == 0
    elif out_format == "csv":
        assert result.output.startswith("constraint,depth_min,depth_max,depth_mean,penalty_min")
    else:
        assert "| exact |" in result.output and "| default |" in result.output


def test_help_and_version():
    assert "build" in run(["--help"]).output
    for command in ("build", "codegen", "report", "query"):
        assert "Usage" in run([command, "--help"]).output
    assert run(["--version"]).output.startswith("quadsel, version")


BAD_CALLS = [
    (["build", "missing.csv"], "missing.csv"),
    (["report", "BAD", "--thresholds", "x"], "--thresholds"),
    (["build", "BAD", "--map", "nofield"], "--map"),
    (["query", "TREE", "--comm", "4", "--msg", "12Q"], "--msg"),
    (["codegen", "TREE", "--name", "not-an-identifier"], "--name"),
    (["codegen", "BAD"], "bad.csv"),
]


@pytest.mark.parametrize("args, needle", BAD_CALLS)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, args, needle):
    bad = tmp_path / "bad.csv"
    bad.write_text("procs,size,algorithm,latency\n2,8,1,-3\n")
    good = write_generic(tmp_path / "g.csv", cube(4))
    tree = tmp_path / "t.json"
    run(["build", *good, "-o", tree])
    out = tmp_path / "out.file"
    args = [{"BAD": bad, "TREE": tree}.get(a, a) for a in args] + (["-o", out] if args[0] != "query" else [])
    result = run(args, ok=False)
    assert result.exit_code == 2, result.output
    assert needle in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert not out.exists()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".out.file")]   # no temp file left


def test_negative_time_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("procs,size,algorithm,latency\n2,8,1,1.5\n2,16,1,-3\n")
    result = run(["build", bad, "-c", "bcast", "-o", tmp_path / "t.json"], ok=False)
    assert result.exit_code == 2 and "bad.csv:3:" in result.output


def test_readme_main_job_runs_on_the_shipped_example(tmp_path, compile_decision):
    """The README's first command: build → codegen → report on examples/ompi5-bcast.csv."""
    import re
    from helpers import REPO
    readme = (REPO / "README.md").read_text()
    command = re.search(r"```sh\n(pip install [^\n]*quadsel build [^\n]*)\n```", readme).group(1)
    steps = [part.strip() for part in command.split("&&")][1:]
    assert steps[0] == "mkdir -p out"            # the outputs go to out/, which git ignores (tests/test_docs.py)
    steps = steps[1:]
    (tmp_path / "out").mkdir()
    assert [s.split()[1] for s in steps] == ["build", "codegen", "report"]
    for step in steps:
        args = [a if not a.startswith("examples/") else str(REPO / a) for a in step.split()[1:]]
        args = [str(tmp_path / a) if a.endswith((".json", ".c")) else a for a in args]
        result = run(args)
    assert "quadsel default build" in result.output and "paper quadtree, exact" in result.output
    ask = compile_decision((tmp_path / "out" / "bcast_decision.c").read_text(), "quadsel_bcast_decision")
    fn = DecisionFunction.load(tmp_path / "out" / "bcast.qt.json").size_tree
    assert fn.options.is_default and fn.options.size_rule == "auto"
    assert ask([(4, 4096)]) == [(int(fn.query(4, 4096).algorithm), fn.query(4, 4096).segsize)]


def test_query_lists_stdin_pairs_and_out_of_range_warnings(tmp_path, monkeypatch):
    files = write_generic(tmp_path / "b.csv", cube(2))
    measured = files[0]
    files = [str(tmp_path / "n.csv")]        # without the default's rows: no evidence, every side handed back
    (tmp_path / "n.csv").write_text("".join(line for line in open(measured) if ",default," not in line))
    tree = tmp_path / "t.qt.json"
    run(["build", *files, "-o", tree])
    fn = DecisionFunction.load(tree).size_tree
    quiet = CliRunner().invoke(main, ["query", str(tree), "--comm", "3", "--msg", "100"])
    assert quiet.exit_code == 0 and quiet.stderr == ""                 # inside the measured range: no word
    far = CliRunner().invoke(main, ["query", str(tree), "--comm", "1000", "--msg", "1G", "--json"])
    answer = json.loads(far.stdout)
    assert answer["outside_measured_range"] == {"comm_size": 8, "msg_size": 65536}
    assert answer["algorithm"] == "default"                            # handed back to the library
    assert "outside the measured range" in far.stderr and "library's default decides" in far.stderr
    # issue 39: with a measured default (the slowest everywhere here) the folds decide each side: extrapolated
    evidence = tmp_path / "e.qt.json"
    run(["build", measured, "-o", evidence])
    record = DecisionFunction.load(evidence).provenance["outside"]
    assert record["handed_back"] == [] and len(record["extrapolated"]) == 4
    far = CliRunner().invoke(main, ["query", str(evidence), "--comm", "1000", "--msg", "1G", "--json"])
    assert json.loads(far.stdout)["algorithm"] != "default"
    extrapolated = tmp_path / "x.qt.json"
    run(["build", *files, "--extrapolate", "-o", extrapolated])
    far = CliRunner().invoke(main, ["query", str(extrapolated), "--comm", "1000", "--msg", "1G", "--json"])
    assert json.loads(far.stdout)["algorithm"] == fn.query(8, 65536).algorithm != "default"
    assert "outside the measured range" in far.stderr and "comm 8, msg 65536" in far.stderr
    grid = CliRunner().invoke(main, ["query", str(tree), "--comm", "2-4", "--msg", "1,4K"])
    lines = [line.split() for line in grid.stdout.splitlines()]
    assert [(int(c), int(m)) for c, m, _, _, _ in lines] == [(c, m) for c in (2, 3, 4) for m in (1, 4096)]
    assert all(a == fn.query(int(c), int(m)).algorithm for c, m, a, _, _ in lines)
    piped = CliRunner().invoke(main, ["query", str(tree)], input="2 1\n# comment\n4 4K\n")
    assert piped.stdout.split("\n")[:2] == [" ".join(lines[0]), " ".join(lines[5])]
    bad = CliRunner().invoke(main, ["query", str(tree)], input="2 x y\n")
    assert bad.exit_code == 2 and "<stdin>:1:" in bad.output


def test_build_records_the_library_and_the_c_returns_its_own_ids(tmp_path):
    """Identity (issue 10): an MPICH sweep's tree returns MPIR_CVAR_BCAST_INTRA_ALGORITHM values, no #defines."""
    from helpers import REPO
    from quadsel.libraries import mpich
    tree = tmp_path / "m.qt.json"
    run(["build", str(REPO / "examples" / "mpich5-bcast.csv"), "-o", tree])
    fn = DecisionFunction.load(tree).size_tree
    assert fn.provenance["library"] == "mpich"
    source = run(["codegen", str(tree)]).output
    assert "#define" not in source and "MPICH MPIR_CVAR_BCAST_INTRA_ALGORITHM" in source
    method = fn.query(4, 4096)
    expected = 1 + mpich.ALGORITHMS["bcast"].index(method.algorithm)
    assert f"alg = {expected}; seg = 0; /* {method.algorithm} */" in source


def test_conventions_default_file_json_and_format(tmp_path, monkeypatch):
    """docs/conventions.md: the default tree file is never replaced; --json on build and report; --format is
    an output format everywhere."""
    files = write_generic(tmp_path / "b.csv", cube(4))
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(main, ["build", *files]).exit_code == 0
    before = (tmp_path / "bcast.qt.json").read_bytes()
    again = CliRunner().invoke(main, ["build", *files, "--paper"])
    assert again.exit_code == 2 and "give -o bcast.qt.json" in again.output
    assert (tmp_path / "bcast.qt.json").read_bytes() == before
    summary = CliRunner().invoke(main, ["build", *files, "-o", "t.json", "--json"])
    data = json.loads(summary.stdout)
    assert data["tree"] == "t.json" and data["leaves"] >= 1 and data["points"] == len(COMM) * len(MSG)
    assert CliRunner().invoke(main, ["build", *files, "-o", "-", "--json"]).exit_code == 2
    wrong = CliRunner().invoke(main, ["build", *files, "--format", "csv", "-o", "u.json"])
    assert wrong.exit_code == 2 and "--input-format" in wrong.output
    rows = json.loads(CliRunner().invoke(main, ["report", *files, "--json", "--no-compare"]).stdout)["rows"]
    assert rows and all("penalty_mean" in r for r in rows)


def test_after_the_quick_start_each_step_says_what_it_wrote_and_what_comes_next(tmp_path):
    """Issue 41: codegen printed nothing and report's next step was its last paragraph."""
    from helpers import REPO
    example = str(REPO / "examples" / "ompi5-bcast.csv")
    tree, source = str(tmp_path / "b.qt.json"), str(tmp_path / "b.c")
    assert CliRunner().invoke(main, ["build", example, "-o", tree]).exit_code == 0
    wrote = CliRunner().invoke(main, ["codegen", tree, "-o", source])
    assert wrote.exit_code == 0 and wrote.stderr.strip() == (f"wrote {source}: C source of bcast; next: compile it into "
                                                           "your code (docs/formats-tree.md)")
    rules = CliRunner().invoke(main, ["codegen", tree, "-t", "ompi-rules", "-o", str(tmp_path / "b.rules")])
    assert rules.exit_code == 0 and f"quadsel verify {tree} --np N" in rules.stderr.splitlines()[-1]
    assert CliRunner().invoke(main, ["codegen", tree]).stderr == ""      # to stdout: the source alone
    report = CliRunner().invoke(main, ["report", example, "--no-compare"])
    assert report.exit_code == 0 and report.stderr.splitlines()[-1].startswith("next: build the tree to deploy")
