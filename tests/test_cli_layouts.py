"""The layout axis through the CLI: build of a file with layout columns, query --ppn/--nodes, codegen."""

import json
import re
import subprocess

from click.testing import CliRunner

from quadsel.cli import main

from conftest import GCC_FLAGS


def sweep(tmp_path):
    lines = ["collective,algorithm,nodes,ppn,msg_size,time_us"]
    for nodes in (1, 2, 4):
        for ppn in (1, 4):
            for m in (1, 1024, 1 << 20):
                lines.append(f"bcast,6,{nodes},{ppn},{m},{1 + nodes * (1 if m < 2000 else 9) + ppn}")
                lines.append(f"bcast,8,{nodes},{ppn},{m},{3 + nodes * ppn * (0.1 if m > 2000 else 2)}")
    path = tmp_path / "lay.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_build_query_codegen_of_a_forest(tmp_path, gcc):
    tree = str(tmp_path / "f.qt.json")
    built = CliRunner().invoke(main, ["build", sweep(tmp_path), "-o", tree, "--json", "--extrapolate"])
    assert built.exit_code == 0, built.output
    summary = json.loads(built.stdout.strip().splitlines()[-1])
    assert summary["format"] == "quadsel-layout-forest"
    assert summary["leaves"] == sum(m["leaves"] for m in summary["per_layout"])
    line = re.search(r"layout forest of (\d+) trees: (.*?) leaves \((\d+) in all\)", built.stderr)
    counts = [int(v) for v in re.findall(r": (\d+)", line.group(2))]
    assert sum(counts) == int(line.group(3)) == summary["leaves"]
    no_layout = CliRunner().invoke(main, ["query", tree, "--comm", "8", "--msg", "4K"])
    assert no_layout.exit_code == 2 and "give the query's layout, --ppn P or --nodes N" in no_layout.output
    by_ppn = CliRunner().invoke(main, ["query", tree, "--comm", "8", "--msg", "1M", "--ppn", "4"])
    by_nodes = CliRunner().invoke(main, ["query", tree, "--comm", "8", "--msg", "1M", "--nodes", "2"])
    assert by_ppn.exit_code == 0 and by_ppn.stdout == by_nodes.stdout
    source = CliRunner().invoke(main, ["codegen", tree])
    assert source.exit_code == 0 and "int quadsel_bcast_decision(int comm_size, int ppn, size_t msg_size" in source.stdout
    (tmp_path / "f.c").write_text(source.stdout)
    compiled = subprocess.run([gcc, *GCC_FLAGS, "-c", str(tmp_path / "f.c"), "-o", str(tmp_path / "f.o")],
                              capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    refused = CliRunner().invoke(main, ["codegen", tree, "-t", "blob", "-o", str(tmp_path / "f.blob")])
    assert refused.exit_code == 2 and "cannot express a layout forest" in refused.output
    assert not (tmp_path / "f.blob").exists()
    json_rules = CliRunner().invoke(main, ["codegen", tree, "-t", "ompi-json"])
    assert json_rules.exit_code == 0 and "comm_rank_distribution" in json_rules.stdout


def test_ppn_on_a_2d_tree_is_refused(tmp_path):
    csv = tmp_path / "a.csv"
    csv.write_text("collective,algorithm,comm_size,msg_size,time_us\nbcast,6,4,1,1.0\nbcast,8,4,1,2.0\n")
    tree = str(tmp_path / "t.qt.json")
    assert CliRunner().invoke(main, ["build", str(csv), "-o", tree]).exit_code == 0
    result = CliRunner().invoke(main, ["query", tree, "--comm", "4", "--msg", "1", "--ppn", "2"])
    assert result.exit_code == 2 and "is a 2-D tree" in result.output
