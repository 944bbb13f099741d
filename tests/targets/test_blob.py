"""The loadable blob: its documented layout, and the C loader's refusal of every corrupt blob."""

import struct
import zlib

import numpy as np
import pytest
from click.testing import CliRunner

from quadsel.cli import main
from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.targets import emit
from quadsel.targets.blob import HEADER, MAGIC
from quadsel.targets.c_table import table_of

from helpers import random_table

OK, ETRUNCATED, EMAGIC, EVERSION, ESIZE, ECHECKSUM, ESTRUCTURE = 0, -1, -2, -3, -4, -5, -6


@pytest.fixture(scope="module")
def fn():
    rows, _, _ = random_table(np.random.default_rng(5), 6, 9, 3)
    return build_size_tree(build_decision_map(rows), split="measured")


def decode(data):
    """An independent reader of docs/formats-tree.md's layout: header fields, sections, checksum."""
    (magic, version, node_bytes, header, n_nodes, n_comm, n_msg, n_methods, scheme, size,
     name) = struct.unpack_from("<8sHHIIIIIII16s", data)
    at = 64
    msg = struct.unpack_from(f"<{n_msg}Q", data, at)
    at += 8 * n_msg
    comm = struct.unpack_from(f"<{n_comm}i", data, at)
    at += 4 * n_comm
    methods = [struct.unpack_from("<ii", data, at + 8 * k) for k in range(n_methods)]
    at += 8 * n_methods
    nodes = [struct.unpack_from("<HBB" if node_bytes == 4 else "<IHH", data, at + node_bytes * k)
             for k in range(n_nodes)]
    at += node_bytes * n_nodes
    return {"magic": magic, "version": version, "node_bytes": node_bytes, "header": header, "scheme": scheme,
            "size": size, "name": name.rstrip(b"\0").decode(), "msg": msg, "comm": comm, "methods": methods,
            "nodes": nodes, "crc_ok": struct.unpack_from("<I", data, at)[0] == zlib.crc32(data[:at]),
            "end": at + 4}


def test_blob_layout_is_the_documented_one(fn):
    data = emit("blob", [fn])
    blob, table = decode(data), table_of(fn)
    assert (blob["magic"], blob["version"], blob["node_bytes"], blob["header"]) == (MAGIC, 1, 4, 64) == (
        MAGIC, 1, 4, HEADER.size)
    assert blob["size"] == blob["end"] == len(data) and blob["crc_ok"] and blob["name"] == "bcast"
    assert list(blob["msg"]) == [b + 1 for b in table.msg_bound[1:]]     # cuts stored as lower bounds
    assert list(blob["comm"]) == [b + 1 for b in table.comm_bound[1:]]
    assert blob["nodes"] == list(zip(table.next.tolist(), table.comm_cut.tolist(), table.msg_cut.tolist()))
    assert [seg for _, seg in blob["methods"]] == [m.segsize for m in fn.methods]
    assert emit("blob", [fn], library="openmpi") != data and decode(emit("blob", [fn], library="openmpi"))["scheme"] == 1


def resealed(data, offset, fmt, value):
    """data with one field rewritten and the checksum recomputed: only the structural checks can catch it."""
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    struct.pack_into("<I", out, len(out) - 4, zlib.crc32(bytes(out[:-4])))
    return bytes(out)


@pytest.mark.parametrize("sanitize", [False, True])
def test_loader_rejects_every_corrupt_blob(c_program, fn, sanitize):
    data = emit("blob", [fn])
    blob = decode(data)
    nodes_at = blob["end"] - 4 - 4 * len(blob["nodes"])
    inner = [k for k, (nxt, cc, mc) in enumerate(blob["nodes"]) if cc or mc]
    leaf = next(k for k, (nxt, cc, mc) in enumerate(blob["nodes"]) if not (cc or mc))
    comm_at = 64 + 8 * len(blob["msg"])
    cases = {
        "valid": (data, OK),
        "empty": (b"", ETRUNCATED),
        "not a blob": (b"PK\x03\x04" + data[4:], EMAGIC),
        "version 2": (resealed(data, 8, "<H", 2), EVERSION),
        "6-byte nodes": (resealed(data, 10, "<H", 6), EVERSION),
        "header says longer": (resealed(data, 36, "<I", len(data) + 8), ETRUNCATED),
        "one node more than the file holds": (resealed(data, 16, "<I", len(blob["nodes"]) + 1), ESIZE),
        "a byte appended": (data + b"\0", ESIZE),
        "child index out of range": (resealed(data, nodes_at + 4 * inner[-1], "<H", 60000), ESTRUCTURE),
        "child pointing back to the root": (resealed(data, nodes_at, "<H", 0), ESTRUCTURE),
        "a leaf's method out of range": (resealed(data, nodes_at + 4 * leaf, "<H", len(blob["methods"])), ESTRUCTURE),
        "cut index past the thresholds": (resealed(data, nodes_at + 4 * inner[0] + 2, "<B", len(blob["comm"]) + 1),
                                          ESTRUCTURE),
        "thresholds not increasing": (resealed(data, comm_at, "<i", blob["comm"][-1] + 1), ESTRUCTURE),
        "no method table": (resealed(resealed(data, 28, "<I", 0), 36, "<I", len(data)), ESIZE),
        "id scheme 7": (resealed(data, 32, "<I", 7), ESTRUCTURE),
        "collective name not NUL-terminated": (resealed(data, 40, "<16s", b"b" * 16), ESTRUCTURE),
        "reserved bytes set": (resealed(data, 60, "<I", 1), ESTRUCTURE),
    }
    flipped = [data[:k] + bytes([data[k] ^ bit]) + data[k + 1:] for k in range(len(data)) for bit in (0x01, 0x80)]
    truncated = [data[:n] for n in range(len(data))]
    program = c_program({}, sanitize=sanitize)
    got = program.load_status([blob for blob, _ in cases.values()] + flipped + truncated)
    named = dict(zip(cases, got[:len(cases)]))
    assert named == {name: (code, int(code != OK)) for name, (_, code) in cases.items()}
    rest = got[len(cases):]
    assert all(status < 0 and null == 1 for status, null in rest), \
        [k for k, (status, _) in enumerate(rest) if status >= 0][:10]


def test_codegen_writes_the_blob_and_its_loader(tmp_path, c_program, fn):
    tree = tmp_path / "t.qt.json"
    fn.save(tree)
    runner = CliRunner()
    result = runner.invoke(main, ["codegen", str(tree), "-t", "blob", "-o", str(tmp_path / "t.qsb"),
                                  "--runtime", str(tmp_path / "rt")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "t.qsb").read_bytes() == emit("blob", [fn])
    assert sorted(p.name for p in (tmp_path / "rt").iterdir()) == ["quadsel_blob.c", "quadsel_blob.h"]
    program = c_program({})
    assert program.load_status([(tmp_path / "t.qsb").read_bytes()]) == [(OK, 0)]
    stdout = runner.invoke(main, ["codegen", str(tree), "-t", "blob"])
    assert stdout.exit_code == 0 and stdout.stdout_bytes == emit("blob", [fn])


@pytest.mark.parametrize("args, message", [
    (["-t", "c", "--runtime", "RT"], "--runtime applies to --target blob"),
    (["--flavor", "table", "--no-merge"], "--no-merge applies"),
    (["-t", "ompi-rules", "--library", "openmpi"], "--library applies"),
    (["-t", "blob", "--flavor", "table"], "--flavor and --name apply to --target c only"),
    (["--flavor", "table", "--order", "tree"], "--order applies"),
    (["--no-merge", "--order", "expected"], "--order applies"),
    (["-t", "ompi-rules", "--order", "tree"], "--order applies"),
])
def test_codegen_refuses_options_that_do_not_apply(tmp_path, fn, args, message):
    tree = tmp_path / "t.qt.json"
    fn.save(tree)
    result = CliRunner().invoke(main, ["codegen", str(tree), *args])
    assert result.exit_code == 2 and message in result.output
