"""The compact node table: what its object file holds (nm), and its layout limits."""

import shutil
import subprocess

import numpy as np
import pytest

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.targets.c_table import INT_MAX, compact_table, generate_c_table, table_bytes, table_of

from conftest import STRICT_FLAGS
from helpers import random_table

DATA_SYMBOLS = set("bBdDrRgGsSvV")


def data_symbols(compiler, source, folder):
    """{symbol: bytes} of every data symbol in the object file of `source` (nm -S)."""
    nm = shutil.which("nm")
    if not nm:
        pytest.skip("nm (binutils) is not installed")
    (folder / "t.c").write_text(source)
    subprocess.run([compiler, *STRICT_FLAGS, "-O2", "-c", str(folder / "t.c"), "-o", str(folder / "t.o")], check=True)
    out = subprocess.run([nm, "-S", "--defined-only", str(folder / "t.o")], check=True, capture_output=True,
                         text=True).stdout
    symbols = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in DATA_SYMBOLS:
            symbols[parts[3]] = int(parts[1], 16)
    return symbols


def check_object(compiler, fn, folder):
    table = table_of(fn)
    symbols = data_symbols(compiler, generate_c_table(fn, name="t"), folder)
    assert symbols == {"t_nodes": table.layout["bytes"] * fn.tree.n_nodes,
                       "t_comm_bound": 4 * len(table.comm_bound), "t_msg_bound": 8 * len(table.msg_bound),
                       "t_alg": 4 * len(fn.methods), "t_seg": 4 * len(fn.methods)}
    assert sum(symbols.values()) == table_bytes(fn)
    return symbols


def test_object_file_holds_4_bytes_per_node_plus_thresholds_and_methods(c_compiler, tmp_path):
    rows, _, _ = random_table(np.random.default_rng(3), 12, 20, 5)
    fn = build_size_tree(build_decision_map(rows))
    assert table_of(fn).layout["bytes"] == 4
    check_object(c_compiler, fn, tmp_path)


def test_orfeo_bcast_exact_tree_table_is_4_bytes_per_node(c_compiler, tmp_path, orfeo):
    from quadsel.ingest import read_measurements
    files = sorted(orfeo.glob("bcast_algo*.csv")) + [orfeo / "bcast_default.csv"]
    dmap = build_decision_map(read_measurements([str(f) for f in files]))
    for options in ({}, {"split": "measured"}, {"split": "measured", "between": "least-bad"}):
        fn = build_size_tree(dmap, **options)
        symbols = check_object(c_compiler, fn, tmp_path)
        axes_and_methods = 4 * (len(fn.comm_sizes) * 2) + 8 * (len(fn.msg_sizes) * 2) + 8 * len(fn.methods)
        assert symbols["t_nodes"] == 4 * fn.tree.n_nodes
        assert sum(symbols.values()) <= 4 * fn.tree.n_nodes + axes_and_methods


def test_wide_nodes_beyond_the_narrow_limits():
    from quadsel.decision.quadtree import TreeBuilder
    # a comb of 300 message cuts: more than a byte can index
    builder, node = TreeBuilder(), 0
    builder.node(0, 0)
    for cut in range(1, 301):
        west, east = builder.node(cut % 2, cut), builder.node((cut + 1) % 2, cut)
        builder.split(node, -1, cut, [west, east])
        node = east
    table = compact_table(builder.tree(), np.arange(2), np.arange(302))
    assert table.layout["bytes"] == 8 and table.n_nodes == 601
    assert table.msg_bound[1:] == list(range(300)) and table.comm_bound == [INT_MAX]
