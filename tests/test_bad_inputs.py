"""The corpus of bad inputs and outputs: every case, run through the CLI, exits with status 2 and prints one line
naming the problem, with no traceback and no file left behind (tmp_path is listed before and after).

A case is one line in CASES: Bad(id, command line, files to create, words of the error). In the command line
`{name}` is the path of the file `name` of `files`, and `-o OUT` is added unless the case gives its own -o.
File contents: text or bytes, or FIFO, LINK(target), SPARSE(bytes), TREE (a tree built from GOOD), TREE_EDIT
(that tree with its JSON changed), TREE_TEXT (that tree with its JSON text changed), FOREST (a layout forest
of that tree, changed).
Never a real device node: FIFOs, symlinks and sparse files in tmp_path only.
"""

import os
import re
from dataclasses import dataclass, field

import pytest
from click.testing import CliRunner

from quadsel.cli import main

GOOD = ("collective,algorithm,segsize,comm_size,msg_size,time_us\n"
        + "".join(f"bcast,{alg},0,{comm},{msg},{t * comm * (1 + msg / 1024):.3f}\n"
                  for alg, t in (("1", 1.0), ("6", 1.3), ("3", 2.0)) for comm in (2, 4, 8) for msg in (1, 1024, 65536)))
HEADER = "collective,algorithm,segsize,comm_size,msg_size,time_us\n"
OSU_HEAD = "# OSU MPI Broadcast Latency Test v7.3\n# Size       Avg Latency(us)\n"
SKAMPI = '# begin result "{name}"\n{row}\n# end result "{name}"\n'
IMB_HEAD = "# Benchmarking Bcast\n# #processes = {procs}\n       #bytes #repetitions  t_avg[usec]\n"
DETAIL_HEAD = "#Nnodes    Message_size basic_linear         binomial\n"
OCC_HEAD = "# OCC\n"
MANY = "1" + "0" * 5000
FIFO = object()
TREE = object()


@dataclass(frozen=True)
class LINK:
    target: str


@dataclass(frozen=True)
class SPARSE:
    size: int


@dataclass(frozen=True)
class TREE_EDIT:
    """A tree built from GOOD, its JSON changed by `change(doc)` before it is written."""
    change: object


@dataclass(frozen=True)
class TREE_TEXT:
    """A tree built from GOOD, its JSON text changed by `change(text)` (what a dict cannot hold: a key twice)."""
    change: object


@dataclass(frozen=True)
class FOREST:
    """A layout forest of one member (ppn 2, nodes 1, 2, 4: the tree of GOOD), changed by `change(doc)`."""
    change: object


def _set(*path_and_value):
    *path, value = path_and_value

    def change(doc):
        for key in path[:-1]:
            doc = doc[key]
        doc[path[-1]] = value(doc[path[-1]]) if callable(value) else value
    return change


QUERY = ["query", "{t.qt.json}", "--comm", "4", "--msg", "64"]


def query(content):
    return QUERY, {"t.qt.json": content}


@dataclass
class Bad:
    id: str
    args: list
    files: dict = field(default_factory=dict)
    words: str = ""


def csv_row(algorithm="6", segsize="0", comm="4", msg="1024", time="2.5"):
    return f"bcast,{algorithm},{segsize},{comm},{msg},{time}\n"


def build(name, text, *more):
    """`quadsel build FILE` on one measurement file."""
    return ["build", "{%s}" % name, *more], {name: text}


def case(id, words, command, *extra_files):
    args, files = command
    for extra in extra_files:
        files = dict(files, **extra)
    return Bad(id, args, files, words)


def mpich_base(text):
    """`codegen TREE -t mpich-json --mpich-base FILE` with `text` as FILE (libmpi.so for a linker script)."""
    name = "libmpi.so" if isinstance(text, str) and text.startswith(("INPUT", "GROUP")) else "base"
    return ["codegen", "{t.qt.json}", "-t", "mpich-json", "--mpich-base", "{%s}" % name], {"t.qt.json": TREE, name: text}


MPICH_BASE = ('{"collective=bcast": {"comm_type=intra": {"algorithm=MPIR_Bcast_intra_binomial": {}}},\n'
              ' "collective=barrier": {"comm_type=intra": {"algorithm=MPIR_Barrier_intra_k_dissemination": {}}}}\n')


def mpich_tree(doc):
    """The tree of GOOD as if measured on MPICH (its three methods renamed to MPICH bcast algorithms)."""
    names = {"1": "binomial", "3": "scatter_ring_allgather", "6": "scatter_recursive_doubling_allgather"}
    for method in doc["methods"]:
        method["algorithm"] = names.get(method["algorithm"], method["algorithm"])
    doc["provenance"]["library"] = "mpich"


def model_build(meta):
    """`build g.csv --model hockney` with `meta` as g.meta.json (the grid the model predicts on)."""
    return ["build", "{g.csv}", "--model", "hockney"], {"g.csv": GOOD, "g.meta.json": meta}


def trace_text(**header):
    """A trace file of one bcast run on 2 ranks; keys of `header` replace the header's (or the run's) fields."""
    import json
    run = {"algorithm": "6", "name": "binomial", "segsize": 0, "msg_size": 8, "calls": 1,
           "entry_us": [[0.0, 1.0]], "exit_us": [[2.0, 3.0]]}
    doc = {"format": "quadsel-trace", "version": 1, "collective": "bcast", "library": "openmpi", "comm_size": 2,
           "root": 0, "hosts": ["h", "h"], "cpus": 2, "runs": [run]}
    for key, value in header.items():
        (run if key in run or key == "overhead" else doc)[key] = value
    return json.dumps(doc)


def breakdown(text):
    return ["breakdown", "{t.json}"], {"t.json": text}


def verify_text(**point):
    """A verify result (`verify --json`) with one slower bcast point; values of `point` are JSON text."""
    fields = {"collective": '"bcast"', "comm_size": "4", "msg_size": "1024", "quadsel": '"6"', "verdict": '"slower"',
              "speedup": "0.8", **{k: str(v) for k, v in point.items()}}
    library = fields.pop("library", '"openmpi"')
    body = ", ".join(f'"{k}": {v}' for k, v in fields.items())
    return f'{{"library": {library},\n "points": [{{{body}}}],\n "statistics": {{}}}}\n'


def verified(text, edit=None):
    return ["codegen", "{t.qt.json}", "--verified", "{v.json}"], {"t.qt.json": TREE if edit is None else TREE_EDIT(edit),
                                                                  "v.json": text}


VERIFY = ["verify", "{rules}", "--np", "2", "--comm-sizes", "2", "--msg-sizes", "8", "--no-check-rules"]


def verify(text):
    return VERIFY, {"rules": text}


CASES = [
    # -- tree files: the loader checks the whole structure before any use ------------------------------------------
    case("tree-not-utf8", "UTF-8", query(b"\xff\xfe{\"format\": 1}")),
    case("tree-nested-deeply", "nested too deeply", query("[" * 100000 + "]" * 100000)),
    case("tree-nan", "not valid JSON", query('{"format": "quadsel-quadtree", "version": 2, "x": NaN}')),
    case("tree-fifo", "not a regular file", query(FIFO)),
    case("tree-sparse-huge", "64 MiB", query(SPARSE((64 << 20) + 1))),
    case("tree-version-99", "unsupported tree file version", query(TREE_EDIT(_set("version", 99)))),
    case("tree-unequal-arrays", "unequal length", query(TREE_EDIT(_set("tree", "method", lambda v: v[:-1])))),
    case("tree-child-outside", "tree.children", query(TREE_EDIT(_set("tree", "children", 0, 0, 10 ** 6)))),
    case("tree-cut-outside-block", "invalid quadsel tree file",
         query(TREE_EDIT(_set("tree", "comm_cut", 0, 10 ** 6)))),
    case("tree-method-outside", "tree.method", query(TREE_EDIT(_set("tree", "method", -1, 77)))),
    case("tree-comm-beyond-int", "axes.comm_sizes[2]: 2147483648 is beyond 2147483647 (tree.schema.json)",
         query(TREE_EDIT(_set("axes", "comm_sizes", -1, 2 ** 31)))),
    case("tree-msg-beyond-2^63", "axes.msg_sizes[2]: 9223372036854775808 is beyond 9223372036854775807",
         query(TREE_EDIT(_set("axes", "msg_sizes", -1, 2 ** 63)))),
    case("tree-bool-size", "axes.comm_sizes[0]: true is not an integer", query(TREE_EDIT(_set("axes", "comm_sizes", 0, True)))),
    case("tree-unsorted-axis", "strictly increasing", query(TREE_EDIT(_set("axes", "msg_sizes", lambda v: v[::-1])))),
    case("tree-codegen-damaged", "unequal length",
         (["codegen", "{t.qt.json}", "-o", "-"], {"t.qt.json": TREE_EDIT(_set("tree", "depth", lambda v: v[:-1]))})),
    case("tree-report-damaged", "invalid quadsel tree file",
         (["report", "{good.csv}", "--tree", "{t.qt.json}", "--no-compare"],
          {"good.csv": GOOD, "t.qt.json": TREE_EDIT(_set("tree", "msg_cut", 0, 10 ** 6))})),
    # -- generic CSV: numbers beyond the limits, not numbers, odd characters ------------------------------------
    case("csv-msg-2^63", "message size 9223372036854775808 is beyond 9223372036854775807",
         build("bcast.csv", HEADER + csv_row(msg="9223372036854775808"))),
    case("csv-msg-5000-digits", "is beyond 9223372036854775807", build("bcast.csv", HEADER + csv_row(msg=MANY))),
    case("csv-msg-negative-5000-digits", "message size -100", build("bcast.csv", HEADER + csv_row(msg="-" + MANY))),
    case("csv-comm-2^31", "communicator size 2147483648 is beyond 2147483647",
         build("bcast.csv", HEADER + csv_row(comm="2147483648"))),
    case("csv-seg-2^31", "segment size 2147483648 is beyond 2147483647",
         build("bcast.csv", HEADER + csv_row(segsize="2147483648"))),
    case("csv-alg-id-beyond-int", "algorithm id 99999999999 is beyond 2147483647",
         build("bcast.csv", HEADER + csv_row(algorithm="99999999999"))),
    case("csv-alg-id-5000-digits", "algorithm id 1000000000", build("bcast.csv", HEADER + csv_row(algorithm=MANY))),
    case("csv-alg-superscript", "is not written in ASCII digits", build("bcast.csv", HEADER + csv_row(algorithm="²"))),
    case("csv-alg-300-chars", "algorithm name of 300 characters", build("bcast.csv", HEADER + csv_row(algorithm="a" * 300))),
    case("csv-reps-2^63", "repetition count 9223372036854775808 is beyond",
         build("bcast.csv", "collective,algorithm,segsize,comm_size,msg_size,time_us,stddev_us,reps\n"
                            "bcast,6,0,4,8,2.5,0.1,9223372036854775808\n")),
    case("csv-time-denormal", "time 1e-320 is outside", build("bcast.csv", HEADER + csv_row(time="1e-320"))),
    case("csv-time-1e300", "time 1e300 is outside", build("bcast.csv", HEADER + csv_row(time="1e300"))),
    case("csv-time-overflow", "time '1e999' is not a finite number", build("bcast.csv", HEADER + csv_row(time="1e999"))),
    case("csv-time-seconds-too-long", "is outside", build("bcast.csv", "collective,algorithm,segsize,comm_size,msg_size,"
                                                                       "time (s)\nbcast,6,0,4,8,1e7\n")),
    case("csv-time-arabic-digits", "time '١٢' is not a number", build("bcast.csv", HEADER + csv_row(time="١٢"))),
    case("csv-comm-fullwidth", "communicator size '４' is not a whole number", build("bcast.csv", HEADER + csv_row(comm="４"))),
    case("csv-time-underscore", "time '1_0' is not a number", build("bcast.csv", HEADER + csv_row(time="1_0"))),
    case("csv-stddev-1e300", "stddev 1e300 is outside", build("bcast.csv", "collective,algorithm,segsize,comm_size,msg_size,"
                                                                          "time_us,stddev_us\nbcast,6,0,4,8,2.5,1e300\n")),
    case("csv-cell-200k", "bcast.csv:2: not a CSV row", build("bcast.csv", HEADER + csv_row(time='"' + "7" * 200000 + '"'))),
    case("csv-not-utf8", "not a UTF-8 text file", build("bcast.csv", HEADER.encode() + b"bcast,6,0,4,8,\xff\xfe\n")),
    case("csv-only-bom", "empty file", build("bcast.csv", "\ufeff\n\n")),
    case("csv-newline-in-name", "empty file", build("bad\nname.csv", "")),
    case("csv-openmpi-id-not-in-table", "bcast.csv:2: algorithm id 12 is not one of Open MPI's bcast algorithms",
         build("bcast.csv", HEADER + csv_row(algorithm="12") + csv_row(algorithm="6"))),
    case("csv-names-of-two-libraries", "algorithm names are of MPICH ('smp') and Open MPI ('pipeline')",
         build("bcast.csv", HEADER + csv_row(algorithm="smp") + csv_row(algorithm="pipeline"))),
    case("csv-two-libraries-by-metadata", "a decision map is one library's",
         (["build", "{ompi.csv}", "{mpich.csv}"], {"ompi.csv": GOOD, "ompi.meta.json": '{"library": "openmpi"}',
                                                   "mpich.csv": HEADER + csv_row("binomial") + csv_row("smp", msg="8"),
                                                   "mpich.meta.json": '{"library": "mpich"}'})),
    case("csv-mpich-metadata-with-an-id", "x.csv:2: algorithm id 6 is not one of MPICH's",
         build("x.csv", HEADER + csv_row()), {"x.meta.json": '{"library": "mpich"}'}),
    case("csv-collective-option-differs-from-name", "its name says bcast, not reduce",
         build("bcast_alg6.csv", "procs,size,latency\n2,8,1.5\n", "-c", "reduce")),
    case("csv-no-file-of-the-collective", "no allreduce measurements in any input file",
         (["build", "{bcast_alg6.csv}", "{reduce_alg5.csv}", "-c", "allreduce"],
          {"bcast_alg6.csv": "procs,size,latency\n2,8,1.5\n", "reduce_alg5.csv": "procs,size,latency\n2,8,1.5\n"})),
    case("csv-only-default-rows", "only 'default' rows", build("bcast.csv", HEADER + csv_row(algorithm="default"))),
    # -- SKaMPI, OSU, IMB, detail.out, OCC ----------------------------------------------------------------------
    case("skampi-seg-in-name-5000-digits", "segment size 1000",
         build("s.sko", SKAMPI.format(name="MPI_Bcast-seg" + MANY, row="procs= 4 1024 8.1 0.1 32"))),
    case("skampi-procs-2^31", "communicator size 2147483648 is beyond",
         build("s.sko", SKAMPI.format(name="MPI_Bcast-alg6", row="procs= 2147483648 1024 8.1 0.1 32"))),
    case("skampi-msg-2^64", "message size 18446744073709551616 is beyond",
         build("s.sko", SKAMPI.format(name="MPI_Bcast-alg6", row="procs= 4 18446744073709551616 8.1 0.1 32"))),
    case("skampi-reps-5000-digits", "repetition count",
         build("s.sko", SKAMPI.format(name="MPI_Bcast-alg6", row="procs= 4 1024 8.1 0.1 " + MANY))),
    case("skampi-stderr-nan", "standard error 'nan' is not a finite number",
         build("s.sko", SKAMPI.format(name="MPI_Bcast-alg6", row="procs= 4 1024 8.1 nan 32"))),
    case("osu-size-2^63", "message size 9223372036854775808 is beyond",
         build("osu_bcast_np4.txt", OSU_HEAD + "9223372036854775808   2.5\n")),
    case("osu-latency-inf", "time 'inf' is not a finite number", build("osu_bcast_np4.txt", OSU_HEAD + "8   inf\n")),
    case("osu-comm-size-in-name-beyond-int", "communicator size 1000000000000000000000 is beyond",
         build("osu_bcast_np1000000000000000000000.txt", OSU_HEAD + "8   2.5\n")),
    case("osu-latency-in-ms-too-long", "is outside", build("osu_bcast_np4.txt", OSU_HEAD.replace("(us)", "(s)")
                                                             + "8   99999999\n")),
    case("imb-processes-beyond-int", "#processes 99999999999 is beyond",
         build("imb.txt", IMB_HEAD.format(procs="99999999999") + "8 1000 2.5\n")),
    case("imb-bytes-5000-digits", "message size 1000", build("imb.txt", IMB_HEAD.format(procs="4") + MANY + " 1000 2.5\n")),
    case("imb-time-negative-zero", "must be > 0", build("imb.txt", IMB_HEAD.format(procs="4") + "8 1000 -0\n")),
    case("detail-ranks-2^31", "communicator size 2147483648 is beyond",
         build("gather_detail.out", DETAIL_HEAD + "2147483648 1 50.1(0.8) 90.2(1.1)\n")),
    case("detail-mean-1e400", "time '1e400' is not a finite number",
         build("gather_detail.out", DETAIL_HEAD + "2 1 1e400(0.8) 90.2(1.1)\n")),
    case("detail-stddev-huge", "stddev 1e99 is outside", build("gather_detail.out", DETAIL_HEAD + "2 1 50(1e99) 90(1)\n")),
    case("occ-seg-2^31", "segment size 2147483648 is beyond",
         build("x.occ", OCC_HEAD + "bcast binomial 2147483648 8 1024 12.5\n")),
    case("occ-comm-hex", "communicator size '0x10' is not a whole number",
         build("x.occ", OCC_HEAD + "bcast binomial 0 0x10 1024 12.5\n")),
    case("occ-reps-2^63", "repetition count 9223372036854775808 is beyond",
         build("x.occ", OCC_HEAD + "bcast binomial 0 8 1024 12.5 0.1 9223372036854775808\n")),
    # -- inputs that are not regular files, or too large --------------------------------------------------------
    case("input-fifo", "a FIFO (named pipe), not a regular file", build("pipe.csv", FIFO)),
    case("input-link-to-fifo", "a FIFO (named pipe), not a regular file",
         build("link.csv", LINK("pipe.csv")), {"pipe.csv": FIFO}),
    case("input-over-the-size-limit", "larger than the 64 MiB limit for measurements",
         build("huge.csv", SPARSE(64 * 2 ** 20 + 1))),
    case("input-missing", "nope.csv", (["build", "{dir}/nope.csv"], {"dir": None})),
    case("report-input-fifo", "not a regular file", (["report", "{pipe.csv}"], {"pipe.csv": FIFO})),
    # -- rules files (what verify reads before any MPI job starts) ----------------------------------------------
    case("rules-classic-number-beyond-long", "9223372036854775808 is beyond 9223372036854775807",
         verify("1\n7\n1\n2 1\n0 6 0 9223372036854775808\n")),
    case("rules-classic-5000-digits", "is beyond 9223372036854775807", verify(f"1\n7\n1\n2 1\n0 6 0 {MANY}\n")),
    case("rules-json-nested-deeply", "JSON nested too deeply", verify('{"x": ' + "[" * 100000 + "]" * 100000 + "}")),
    case("rules-classic-long-word", "is not a plain decimal integer", verify("1\n7\n" + "x" * 100000 + "\n")),
    case("rules-json-nan", "not valid JSON", verify('{"rule_file_version": 3, "collectives": {"bcast": NaN}}')),
    case("rules-json-number-5000-digits", "not valid JSON", verify('{"rule_file_version": 3, "x": %s}' % MANY)),
    case("rules-ompi-json-comm-beyond-int64", "is beyond a 64-bit integer",
         verify('{"rule_file_version": 3, "module": "tuned", "collectives": {"bcast": [{"comm_size_min": 2, '
                '"comm_size_max": 100000000000000000000, "rules": [{"msg_size_min": 0, "alg": 6}]}]}}')),
    case("rules-mpich-size-beyond-int", "is beyond 2147483647 (a C int)",
         verify('{"collective=bcast": {"comm_type=intra": {"avg_msg_size<=99999999999": {"algorithm=MPIR_Bcast_intra_'
                'binomial": {}}, "avg_msg_size=any": {"algorithm=MPIR_Bcast_intra_binomial": {}}}}}')),
    case("rules-mpich-superscript-digit", "MPICH does not know the key",
         verify('{"collective=bcast": {"comm_type=intra": {"comm_size<=²": {"algorithm=MPIR_Bcast_intra_binomial": {}}, '
                '"comm_size=any": {"algorithm=MPIR_Bcast_intra_binomial": {}}}}}')),
    case("rules-fifo", "a FIFO (named pipe), not a regular file", (VERIFY, {"rules": FIFO})),
    case("rules-over-the-size-limit", "larger than the 64 MiB limit for rules file", (VERIFY, {"rules": SPARSE(2 ** 26 + 1)})),
    case("rules-not-utf8", "not a UTF-8 text file", verify(b"1\n7\n\xff\n")),
    case("codegen-mpich-base-fifo", "not a regular file",
         (["codegen", "{t.qt.json}", "-t", "mpich-json", "--mpich-base", "{base}"], {"t.qt.json": TREE, "base": FIFO})),
    case("codegen-mpich-base-nested", "not valid JSON",
         (["codegen", "{t.qt.json}", "-t", "mpich-json", "--mpich-base", "{base}"],
          {"t.qt.json": TREE, "base": "{" + '"a":' * 50000 + "1" + "}" * 50000})),
    # -- output paths: nothing is created where it cannot be written -------------------------------------------
    case("out-missing-folder", "does not exist (quadsel does not create folders)",
         (["build", "{good.csv}", "-o", "{dir}/no/such/tree.json"], {"good.csv": GOOD, "dir": None})),
    case("out-is-a-directory", "is a directory", (["build", "{good.csv}", "-o", "{sub}"], {"good.csv": GOOD, "sub": "DIR"})),
    case("out-under-a-file", "Not a directory",
         (["build", "{good.csv}", "-o", "{good.csv}/tree.json"], {"good.csv": GOOD})),
    case("out-symlink-loop", "too many levels of symbolic links",
         (["build", "{good.csv}", "-o", "{a}"], {"good.csv": GOOD, "a": LINK("b"), "b": LINK("a")})),
    case("out-dangling-link-into-missing-folder", "does not exist",
         (["build", "{good.csv}", "-o", "{link}"], {"good.csv": GOOD, "link": LINK("gone/tree.json")})),
    case("out-codegen-missing-folder", "does not exist",
         (["codegen", "{t.qt.json}", "-o", "{dir}/no/x.c"], {"t.qt.json": TREE, "dir": None})),
    case("out-report-missing-folder", "does not exist",
         (["report", "{good.csv}", "--no-compare", "-o", "{dir}/no/r.md"], {"good.csv": GOOD, "dir": None})),
    case("out-figures-missing-parent", "quadsel creates only the last folder of the path",
         (["report", "{good.csv}", "--no-compare", "--figures", "{dir}/no/figs", "-o", "-"], {"good.csv": GOOD, "dir": None})),
    case("out-codegen-runtime-missing-parent", "quadsel creates only the last folder of the path",
         (["codegen", "{t.qt.json}", "-t", "blob", "--runtime", "{dir}/no/rt", "-o", "-"], {"t.qt.json": TREE, "dir": None})),
    case("out-verify-missing-folder-before-mpi", "does not exist",
         (VERIFY + ["-o", "{dir}/no/v.md"], {"rules": "1\n7\n1\n2 1\n0 6 0 0\n", "dir": None})),
    case("out-measure-missing-folder-before-mpi", "does not exist",
         (["measure", "-c", "bcast", "--np", "2", "-o", "{dir}/no/m.csv"], {"dir": None})),
    case("out-measure-is-a-directory", "is a directory",
         (["measure", "-c", "bcast", "--np", "2", "-o", "{sub}"], {"sub": "DIR"})),
    # -- issue 22: new bad inputs ---------------------------------------------------------------------------------
    case("csv-stddev-nan", "stddev 'nan' is not a finite number",
         build("bcast.csv", "collective,algorithm,segsize,comm_size,msg_size,time_us,stddev_us\nbcast,6,0,4,8,2.5,nan\n")),
    case("detail-stddev-nan", "stddev 'nan' is not a finite number",
         build("gather_detail.out", DETAIL_HEAD + "2 1 50(nan) 90(1)\n")),
    case("occ-stddev-nan", "stddev 'nan' is not a finite number",
         build("x.occ", OCC_HEAD + "bcast binomial 0 8 1024 12.5 nan 10\n")),
    case("detail-two-columns-one-name", "two columns named 'binomial'",
         build("gather_detail.out", "#Nnodes Message_size binomial binomial\n2 1 50(1) 90(1)\n")),
    case("csv-form-feed-keeps-line-numbers", "bcast.csv:4: time",
         build("bcast.csv", "# a comment with a form feed \f and a NEL \x85 and U+2028 \u2028 in it\n" + HEADER
               + csv_row() + csv_row(time="x"))),
    case("osu-form-feed-keeps-line-numbers", "osu_bcast_np4.txt:4:",
         build("osu_bcast_np4.txt", OSU_HEAD.replace("v7.3", "v7.3 \f\x0b") + "8 2.5\n16 inf\n")),
    case("occ-line-separator-keeps-line-numbers", "x.occ:3:",
         build("x.occ", OCC_HEAD + "# note \u2028 \u2029 inside\nbcast binomial 0 8 1024 -1\n")),
    case("build-output-is-the-input", "it is the input",
         (["build", "{good.csv}", "-o", "{good.csv}"], {"good.csv": GOOD})),
    case("build-output-is-the-input-through-a-link", "it is the input",
         (["build", "{good.csv}", "-o", "{link}"], {"good.csv": GOOD, "link": LINK("good.csv")})),
    case("build-empty-output", "empty output path", (["build", "{good.csv}", "-o", ""], {"good.csv": GOOD})),
    case("build-max-leaves-beyond-the-tree-file", "from 1 to 1000000",
         (["build", "{good.csv}", "--max-leaves", "1000001"], {"good.csv": GOOD})),
    case("build-max-depth-20-digits", "Invalid value for '--max-depth'",
         (["build", "{good.csv}", "--max-depth", "99999999999999999999"], {"good.csv": GOOD})),
    case("usage-missing-argument", "Missing argument", (["build"], {})),
    case("usage-unknown-option", "No such option", (["build", "{good.csv}", "--bogus"], {"good.csv": GOOD})),
    case("input-directory", "is a directory", (["build", "{sub}"], {"sub": "DIR"})),
    case("codegen-max-requests-20-digits", "Invalid value for '--max-requests'",
         (["codegen", "{t.qt.json}", "-t", "ompi-rules", "--max-requests", "99999999999999999999"], {"t.qt.json": TREE})),
    case("codegen-output-is-the-tree", "it is the input",
         (["codegen", "{t.qt.json}", "-o", "{t.qt.json}"], {"t.qt.json": TREE})),
    *[case(f"codegen-name-{name}", "choose another function name",
           (["codegen", "{t.qt.json}", "--name", name] + (["--flavor", "table"] if name == "SIZE_MAX" else []),
            {"t.qt.json": TREE}))
      for name in ("size_t", "NULL", "main", "__func__", "printf", "SIZE_MAX", "QUADSEL_BCAST_ALG_X", "_Bool",
                   "bool", "memcpy")],
    case("query-comm-beyond-int", "outside 1..2147483647",
         (["query", "{t.qt.json}", "--comm", "2147483648", "--msg", "8"], {"t.qt.json": TREE})),
    case("out-measure-resume-of-another-collective", "holds bcast measurements, not reduce",
         (["measure", "-c", "reduce", "--np", "2", "-o", "{m.csv}"], {"m.csv": GOOD})),
    # -- issue 32: every JSON input through one schema-checked path ---------------------------------------------
    case("mpich-base-self-including-script", "a linker script that includes itself", mpich_base("INPUT(libmpi.so)\n")),
    case("mpich-base-script-loop", "a linker script that includes itself",
         mpich_base("INPUT(other.so)\n"), {"other.so": "GROUP ( libmpi.so )\n"}),
    case("mpich-base-nan", "not valid JSON: NaN is not a JSON value",
         mpich_base('{"collective=bcast": {"comm_type=intra": {"comm_size<=8": NaN}}}')),
    case("mpich-base-number-beyond-a-double", "not valid JSON: the number 1e400 is beyond a double",
         mpich_base('{"collective=bcast": {"comm_type=intra": 1e400}}')),
    case("mpich-base-unknown-algorithm", "MPICH has no bcast algorithm 'fastest'",
         mpich_base('{"collective=bcast": {"comm_type=intra": {"algorithm=MPIR_Bcast_intra_fastest": {}}}}')),
    case("mpich-base-key-twice-but-for-spaces", "stands twice in one object (line 1 too, spaces aside)",
         mpich_base('{"collective=bcast": {"comm_type=intra": {"algorithm=MPIR_Bcast_intra_binomial": {}}},\n'
                    ' "collective = bcast": {"comm_type=intra": {"algorithm=MPIR_Bcast_intra_binomial": {}}}}')),
    case("mpich-base-value-not-an-object", "base:1: collective=bcast: 3 is not an object (mpich-base.schema.json)",
         mpich_base('{"collective=bcast": 3}')),
    case("mpich-base-not-a-collective-key", "the key 'bcast' is not of the form",
         mpich_base('{"bcast": {}}')),
    case("mpich-base-not-utf8", "not a UTF-8 text file", mpich_base(b'{"collective=bcast": "\xff"}')),
    case("model-grid-2^80", "g.meta.json:2: grid.comm_sizes[1]: 120892581961...706176 (25 characters) is beyond",
         model_build('{"library": "openmpi",\n "grid": {"comm_sizes": [2, 1208925819614629174706176]}}')),
    case("model-grid-boolean", "grid.msg_sizes[0]: true is not an integer",
         model_build('{"grid": {"msg_sizes": [true]}}')),
    case("model-grid-negative", "grid.msg_sizes[0]: -8 is below the minimum 0", model_build('{"grid": {"msg_sizes": [-8]}}')),
    case("model-grid-fraction", "grid.comm_sizes[0]: 2.5 is not an integer", model_build('{"grid": {"comm_sizes": [2.5]}}')),
    case("model-grid-infinity", "not valid JSON: Infinity is not a JSON value",
         model_build('{"grid": {"comm_sizes": [Infinity]}}')),
    case("trace-root-a-string", "root: '0' is not an integer", breakdown(trace_text(root="0"))),
    case("trace-overhead-not-numbers", "runs[0].overhead.traced_us_per_iteration[0]: not a finite number",
         breakdown(trace_text(overhead={"traced_us_per_iteration": ["x"], "untraced_us_per_iteration": [1.0]}))),
    case("trace-hosts-not-a-list", "hosts: 7 is not an array", breakdown(trace_text(hosts=7))),
    case("trace-nan", "not valid JSON: NaN is not a JSON value", breakdown(trace_text().replace("0.0", "NaN", 1))),
    case("trace-msg-2^63", "runs[0].msg_size: 9223372036854775808 is beyond", breakdown(trace_text(msg_size=2 ** 63))),
    case("verified-infinity", "not valid JSON: Infinity is not a JSON value", verified(verify_text(speedup="Infinity"))),
    case("verified-zero-ranks", "points[0].comm_size: 0 is below the minimum 1", verified(verify_text(comm_size=0))),
    case("verified-boolean-size", "points[0].msg_size: true is not an integer", verified(verify_text(msg_size="true"))),
    case("verified-huge-size", "points[0].msg_size: 18446744073709551616 is beyond",
         verified(verify_text(msg_size=2 ** 64))),
    # -- issue 32: one output guard that knows every input of the command, read explicitly or not ----------------
    case("out-is-the-mpich-base", "it is the input",
         (["codegen", "{t.qt.json}", "-t", "mpich-json", "--mpich-base", "{base.json}", "-o", "{base.json}"],
          {"t.qt.json": TREE_EDIT(mpich_tree), "base.json": MPICH_BASE})),
    case("out-is-the-library-behind-the-mpich-base-script", "it is the input",
         (["codegen", "{t.qt.json}", "-t", "mpich-json", "--mpich-base", "{libmpi.so}", "-o", "{base.json}"],
          {"t.qt.json": TREE_EDIT(mpich_tree), "libmpi.so": "INPUT(base.json)\n", "base.json": MPICH_BASE})),
    case("out-is-the-verified-result", "it is the input",
         (["codegen", "{t.qt.json}", "--verified", "{v.json}", "-o", "{v.json}"],
          {"t.qt.json": TREE, "v.json": verify_text(quadsel='"1"')})),
    case("out-is-the-trace", "it is the input", (["breakdown", "{t.json}", "-o", "{t.json}"], {"t.json": trace_text()})),
    case("out-is-the-timemap-trace", "it is the input",
         (["breakdown", "{t.json}", "--timemap", "{t.json}", "-o", "-"], {"t.json": trace_text()})),
    case("out-is-the-replayed-file", "it is the input",
         (["measure", "--replay", "{m.csv}", "-c", "bcast", "-o", "{m.csv}"], {"m.csv": GOOD})),
    case("out-is-the-metadata-beside-the-csv", "it is the input",
         (["build", "{m.csv}", "-o", "{m.meta.json}"], {"m.csv": GOOD, "m.meta.json": '{"library": "openmpi"}'})),
    case("out-report-is-the-metadata-beside-the-csv", "it is the input",
         (["report", "{m.csv}", "--no-compare", "-o", "{m.meta.json}"],
          {"m.csv": GOOD, "m.meta.json": '{"library": "openmpi"}'})),
    case("out-query-is-the-tree", "it is the input",
         (["query", "{t.qt.json}", "--comm", "4", "--msg", "8", "-o", "{t.qt.json}"], {"t.qt.json": TREE})),
    case("out-model-build-is-the-metadata", "it is the input",
         (["build", "{m.csv}", "--model", "hockney", "-o", "{m.meta.json}"],
          {"m.csv": GOOD, "m.meta.json": '{"grid": {"comm_sizes": [2, 4, 8]}}'})),
    # -- issue 32: the rest ------------------------------------------------------------------------------------------
    case("impi-adjust-tree-without-library", "records no MPI library, so its numeric ids are Open MPI's",
         (["codegen", "{t.qt.json}", "-t", "impi-adjust"],
          {"t.qt.json": TREE_EDIT(lambda doc: doc["provenance"].pop("library", None))})),
    *[case(f"measure-alpha-{value}", "is not a finite number",
           (["measure", "-c", "bcast", "--alpha", value, "-o", "{m.csv}"], {"m.csv": None}))
      for value in ("nan", "inf", "-inf", "1e400")],
    case("verified-another-library", "verified mpich and the bcast tree was built from openmpi",
         verified(verify_text(library='"mpich"'), edit=_set("provenance", "library", "openmpi"))),
    # -- round 3: option values at their limits, refused by the shared Click types before any file or job ---------
    *[case(f"option-{command}-{option[2:]}-{value}", f"'{value}' is not a finite number", (args + [option, value], files))
      for command, args, files, option, value in [
          ("verify", ["verify", "{t.qt.json}", "--np", "2"], {"t.qt.json": TREE}, "--min-gain", "nan"),
          ("verify", ["verify", "{t.qt.json}", "--np", "2"], {"t.qt.json": TREE}, "--confidence", "nan"),
          ("verify", ["verify", "{t.qt.json}", "--np", "2"], {"t.qt.json": TREE}, "--max-time", "inf"),
          ("breakdown", ["breakdown", "{t.json}"], {"t.json": trace_text()}, "--tolerance", "nan"),
          ("replay", ["measure", "--replay", "{m.csv}", "-c", "bcast", "--adaptive"], {"m.csv": GOOD}, "--behind", "nan"),
          ("replay", ["measure", "--replay", "{m.csv}", "-c", "bcast", "--adaptive"], {"m.csv": GOOD}, "--agree", "nan"),
          ("replay", ["measure", "--replay", "{m.csv}", "-c", "bcast", "--adaptive"], {"m.csv": GOOD}, "--cheap", "nan"),
          ("replay", ["measure", "--replay", "{m.csv}", "-c", "bcast"], {"m.csv": GOOD}, "--fence", "nan"),
          ("tune", ["tune", "--np", "2", "-o", "{dir}/tuned"], {}, "--min-gain", "nan")]],
    *[case(f"option-{args[0]}-mpiexec-args-unclosed-quote", "cannot be split like a shell: no closing quotation",
           (args + ["--mpiexec-args", "--host 'a:2"], files))
      for args, files in [(["verify", "{t.qt.json}", "--np", "2"], {"t.qt.json": TREE}),
                          (["measure", "-c", "bcast", "--np", "2", "-o", "{m.csv}"], {"m.csv": None}),
                          (["tune", "--np", "2", "-o", "{dir}/tuned"], {})]],
    # issue 41: a rank count in --mpiexec-args contradicts quadsel's own -n (prterun printed 29 lines, exit 1)
    *[case(f"option-{args[0]}-mpiexec-args-{word.strip('-').split('=')[0]}", "sets the number of ranks, which quadsel gives",
           (args + ["--mpiexec-args", f"--host localhost:2 {word}"], files))
      for args, files in [(["verify", "{t.qt.json}", "--np", "2"], {"t.qt.json": TREE}),
                          (["measure", "-c", "bcast", "--np", "2", "-o", "{m.csv}"], {"m.csv": None}),
                          (["tune", "--np", "2", "-o", "{dir}/tuned"], {})]
      for word in ("-n 5", "-np 5", "--np=5")],
    # issue 41: --np beyond what this host can start is refused before anything is launched
    case("option-measure-np-beyond-this-host", "--np 2147483647: this host can start about",
         (["measure", "-c", "bcast", "--np", "2147483647", "-o", "{m.csv}"], {"m.csv": None})),
    case("option-tune-np-beyond-this-host", "--np 1000000: this host can start about",
         (["tune", "--np", "1000000", "--comm-sizes", "2", "-o", "{dir}/tuned"], {})),
    case("option-verify-np-beyond-this-host", "--np 100000: this host can start about",
         (["verify", "{t.qt.json}", "--np", "100000"], {"t.qt.json": TREE})),
    case("option-tune-empty-collective-list", "-c: no collective named", (["tune", "--np", "2", "-c", "", "-o", "{dir}/tuned"], {})),
    case("option-tune-empty-folder", "-o: an empty folder name", (["tune", "--np", "2", "-o", ""], {})),
    case("option-verify-np-beyond-int", "is not in the range 1<=x<=2147483647",
         (["verify", "{t.qt.json}", "--np", "99999999999"], {"t.qt.json": TREE})),
    case("option-measure-np-beyond-int", "is not in the range 1<=x<=2147483647",
         (["measure", "-c", "bcast", "--np", "2147483648", "-o", "{m.csv}"], {"m.csv": None})),
    case("option-replay-segment-beyond-int", "bad segment size list '2147483648': 2147483648 is outside 0..2147483647",
         (["measure", "--replay", "{m.csv}", "-c", "bcast", "--segments", "2147483648"], {"m.csv": GOOD})),
    case("option-replay-comm-size-0", "bad communicator size list '0,4': 0 is outside 1..2147483647",
         (["measure", "--replay", "{m.csv}", "-c", "bcast", "--comm-sizes", "0,4"], {"m.csv": GOOD})),
    case("out-verify-comm-sizes-0-before-mpi", "0 is outside 1..2147483647",
         (VERIFY[:-1] + ["--comm-sizes", "0", "--no-check-rules"], {"rules": "1\n7\n1\n2 1\n0 6 0 0\n"})),
    # -- round 3: trace fields a schema cannot relate ------------------------------------------------------------
    case("trace-timestamps-near-a-double", "runs[0].entry_us[0]: a timestamp beyond 1e+15 us",
         breakdown(trace_text(entry_us=[[1e308, -1e308]], exit_us=[[1e308, 1e308]]))),
    case("trace-root-outside-the-communicator", "root 2 is not a rank of a communicator of 2",
         breakdown(trace_text(root=2))),
    case("trace-hosts-fewer-than-ranks", "hosts has 1 names, not 2 (one per rank)", breakdown(trace_text(hosts=["h"]))),
    # -- round 3: a key twice in one object, in every JSON input -------------------------------------------------
    case("trace-key-twice", 't.json:1: not valid JSON: the key "version" stands twice',
         breakdown(trace_text().replace('"version": 1', '"version": 1, "version": 1'))),
    case("verified-key-twice", 'v.json:1: not valid JSON: the key "library" stands twice',
         verified(verify_text(library='"openmpi", "library": "mpich"'))),
    case("model-grid-key-twice", 'not valid JSON: the key "comm_sizes" stands twice',
         model_build('{"grid": {"comm_sizes": [2, 4], "comm_sizes": [8]}}')),
    case("mpich-base-key-twice", 'base:2: not valid JSON: the key "collective=bcast" stands twice',
         mpich_base('{"collective=bcast": {"comm_type=intra": {"algorithm=MPIR_Bcast_intra_binomial": {}}},\n'
                    ' "collective=bcast": {"comm_type=intra": {"algorithm=MPIR_Bcast_intra_binomial": {}}}}')),
    case("tree-key-twice", 'not valid JSON: the key "collective" stands twice',
         query(TREE_TEXT(lambda text: text.replace('"collective": "bcast"', '"collective": "bcast", "collective": "bcast"')))),
    # -- round 3: a layout forest's node counts are measured layouts of its member's tree -----------------------
    case("forest-member-without-node-counts", "layouts[0].nodes: 0 items, at least 1 needed (tree.schema.json)",
         (QUERY + ["--ppn", "2"], {"t.qt.json": FOREST(_set("layouts", 0, "nodes", []))})),
    case("forest-nodes-times-ppn-beyond-its-tree", "nodes 1073741824 x measured ppn 2 is not a communicator size of its tree",
         (QUERY + ["--ppn", "2"], {"t.qt.json": FOREST(_set("layouts", 0, "nodes", [1, 2, 2 ** 30]))})),
    case("metadata-of-another-collective", "m.meta.json: the metadata says 'reduce' and m.csv holds 'bcast' rows",
         (["build", "{m.csv}"], {"m.csv": GOOD, "m.meta.json": '{"library": "openmpi", "collective": "reduce"}'})),
    # -- round 3: the metadata beside measure's CSV is checked with the CSV, before either is written -------------
    case("out-replay-metadata-is-a-link-to-the-input", "it is the input",
         (["measure", "--replay", "{m.csv}", "-c", "bcast", "-o", "{o.csv}"],
          {"m.csv": GOOD, "o.csv": None, "o.meta.json": LINK("m.csv")})),
]

NEEDS_MPI = ("rules-", "out-verify-", "out-measure-")


def _materialize(files, folder):
    paths = {"dir": str(folder)}
    for name, content in files.items():
        path = folder / name
        paths[name] = str(path)
        if content is None:
            continue
        if content == "DIR":
            path.mkdir()
        elif content is FIFO:
            os.mkfifo(path)
        elif isinstance(content, LINK):
            path.symlink_to(content.target)
        elif isinstance(content, SPARSE):
            with open(path, "wb") as handle:
                handle.truncate(content.size)
        elif content is TREE:
            _tree(path)
        elif isinstance(content, TREE_EDIT):
            _tree(path, content.change)
        elif isinstance(content, FOREST):
            import json
            _tree(path)
            doc = {"format": "quadsel-layout-forest", "version": 1, "collective": "bcast",
                   "layouts": [{"ppn": 2, "measured_ppn": [2], "nodes": [1, 2, 4], "tree": json.loads(path.read_text())}]}
            content.change(doc)
            path.write_text(json.dumps(doc))
        elif isinstance(content, TREE_TEXT):
            _tree(path)
            path.write_text(content.change(path.read_text()))
        else:
            path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return paths


def _tree(path, change=None):
    import json
    from quadsel.decision.builder import build_size_tree
    from quadsel.decision.decision_map import build_decision_map
    from quadsel.ingest import read_measurements
    data = path.with_name("tree-source.csv")
    data.write_text(GOOD)
    doc = build_size_tree(build_decision_map(read_measurements(data)), split="measured",
                                  between="least-bad", leaf_rule="penalty", max_leaves=6).to_json()
    data.unlink()
    if change is not None:
        change(doc)
    path.write_text(json.dumps(doc))


def _listing(folder):
    return sorted((p.relative_to(folder).as_posix(), p.is_symlink() or p.is_file()) for p in folder.rglob("*"))


def test_the_corpus_is_large_and_its_ids_are_unique():
    assert len(CASES) >= 60 and len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("bad", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_exit_2_no_traceback_no_file_left(bad, tmp_path):
    if bad.id.startswith(NEEDS_MPI):
        pytest.importorskip("mpi4py")
    paths = _materialize(bad.files, tmp_path)
    args = [re.sub(r"\{([^{}]+)\}", lambda m: paths.get(m.group(1), m.group(0)), arg) for arg in bad.args]
    if "-o" not in args:
        args += ["-o", str(tmp_path / "OUT")]
    before = _listing(tmp_path)
    result = CliRunner().invoke(main, args)
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert len(lines[0]) < 1200, lines[0][:300]       # one readable line, whatever the input held
    assert bad.words in lines[0], lines[0]
    assert _listing(tmp_path) == before             # no output, no temporary file, no folder
