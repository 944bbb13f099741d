"""The loadable form: the compact node table (c_table.py) as a versioned binary file (`quadsel codegen -t blob`).

A library that does not want to recompile reads it with the C loader in templates/quadsel_blob.[ch], which
checks it whole before use. Layout (little-endian; docs/formats-tree.md):

    0   8  magic b"QSELTREE"
    8   2  version (1)
   10   2  node bytes (4 narrow, 8 wide)
   12   4  header bytes (64)
   16   4  nodes        20  4  communicator cuts   24  4  message cuts   28  4  methods
   32   4  id scheme (0 quadsel numbering / input ids, 1 Open MPI coll/tuned, 2 MPICH MPIR_CVAR enum)
   36   4  file bytes (all of it, checksum included)
   40  16  collective name, ASCII, NUL padded
   56   8  zero
   64      message cuts: u64 each, the first message size east of the cut (a cell's lower bound), increasing
           communicator cuts: i32 each, the first communicator size south of the cut, increasing
           methods: (i32 algorithm id, i32 segment size) each
           nodes: narrow (u16 next, u8 comm cut, u8 msg cut) or wide (u32 next, u16, u16), breadth-first
  end-4  4  CRC-32 (zlib's) of every byte before it
"""

import re
import struct
import zlib

from ..errors import QuadselError
from ..libraries import get as get_library
from .c_common import algorithm_ids, library_of
from .c_table import method_table, table_of

MAGIC = b"QSELTREE"
VERSION = 1
HEADER = struct.Struct("<8sHHIIIIIII16s8x")


def to_blob(fn, library=None):
    """The blob (bytes) of a DecisionFunction."""
    library = library_of(fn, library)
    table = table_of(fn)
    methods = method_table(fn, algorithm_ids(fn.methods, fn.collective, library))
    for m in methods:
        if not (-2**31 <= m["alg"] < 2**31 and 0 <= m["seg"] < 2**31):
            raise QuadselError(f"method ({m['alg']}, {m['seg']}) does not fit the blob's 32-bit fields")
    collective = re.sub(r"[^a-z0-9_]", "_", fn.collective.lower())[:15].encode("ascii")
    wide = table.layout["bytes"] == 8
    comm_cuts = [b + 1 for b in table.comm_bound[1:]]          # the file stores lower bounds, not `lo - 1`
    msg_cuts = [b + 1 for b in table.msg_bound[1:]]
    body = b"".join([
        struct.pack(f"<{len(msg_cuts)}Q", *msg_cuts),
        struct.pack(f"<{len(comm_cuts)}i", *comm_cuts),
        b"".join(struct.pack("<ii", m["alg"], m["seg"]) for m in methods),
        b"".join(struct.pack("<IHH" if wide else "<HBB", n, c, m)
                 for n, c, m in zip(table.next.tolist(), table.comm_cut.tolist(), table.msg_cut.tolist()))])
    size = HEADER.size + len(body) + 4
    if size >= 2**32:
        raise QuadselError("the tree is too large for a blob (4 GiB)")
    header = HEADER.pack(MAGIC, VERSION, table.layout["bytes"], HEADER.size, table.n_nodes, len(comm_cuts),
                         len(msg_cuts), len(methods), get_library(library).blob_scheme, size, collective)
    data = header + body
    return data + struct.pack("<I", zlib.crc32(data))


RUNTIME = ("quadsel_blob.h", "quadsel_blob.c")


def runtime_sources():
    """File name -> text of the C loader and query function (templates/quadsel_blob.[ch])."""
    from .templating import template_text
    return {name: template_text(name) for name in RUNTIME}
