"""Fuzzing every reader of quadsel: structured mutations of real inputs (numbers at and beyond every limit,
Unicode digits, control bytes, truncation, reordered lines, deep nesting). A reader must either read the file
or raise QuadselError (one line for the CLI); any other exception is a bug.

Used by tests/test_fuzz_readers.py (hypothesis, in every test run) and benchmarks/fuzz_readers.py (a long run).
A new reader is one entry in READERS: (file name, seed files, function reading a path).
"""

import random
from pathlib import Path

from quadsel.errors import QuadselError

DATA = Path(__file__).resolve().parent / "data"
INGEST = DATA / "ingest"
RULES = DATA / "rules"

# Numbers at and beyond the limits of every stage, and things that look like numbers.
NASTY_NUMBERS = [
    "0", "-0", "1", "-1", "+5", "1.0", "1.5", "1e3", "1E+300", "1e309", "-1e309", "1e-320", "4.9e-324", "nan", "NaN",
    "inf", "-inf", "Infinity", "2147483647", "2147483648", "-2147483649", "9223372036854775807", "9223372036854775808",
    "18446744073709551616", "-9223372036854775809", "1" + "0" * 4400, "9" * 30, "0" * 40 + "7", "1_000", "0x10",
    "0o17", "١٢", "²", "１２", "12\u200b", "", " ", "-", "--", "n/a", "1,5", "1.2.3", "1e", ".", "e5",
]
NASTY_WORDS = [
    "default", "Default", "MPI_Bcast", "bcast", "reduce", "binomial", "Binomial", "6", "0", "12", "99999999999",
    "MPIR_Bcast_intra_binomial", "nb", "smp", "Basic Linear", "pipeline", "a" * 300, "\u202e", "\x1b[31m", "\x00",
    '"', "'", ",", "#", "(", ")", "=", "{", "}", "[", "]", "No data", "inf", "alg=", "procs=", "x" * 140000,
]
NASTY_LINES = [
    "# OCC", "#Nnodes Message_size 1 2", "# OSU MPI Broadcast Latency Test v7.3", "# Size  Avg Latency(us)",
    "# Benchmarking Bcast", "# #processes = 4", "#bytes #repetitions t_avg[usec]", '# begin result "MPI_Bcast"',
    '# end result "MPI_Bcast"', "collective,algorithm,segsize,comm_size,msg_size,time_us",
    "rule-file-version-2", "procs= 8 count= 1 8 6.6 0.1 54", '# quadsel-meta: {"library": "mpich"}',
    '# quadsel-meta: {"library": "openmpi"}', "{", "}", "[" * 200, "\ufeff", "\x0c", "\r",
]
_DIGITS = "0123456789"
MAX_CHARS = 1 << 20   # inputs stay below about 1 MB: the size limits themselves are tested in test_bad_inputs.py


def _numbers(text):
    """(start, end) of every run of digits, with an optional sign, dot and exponent."""
    spans, i = [], 0
    while i < len(text):
        if text[i] in _DIGITS:
            j = i
            while j < len(text) and (text[j] in _DIGITS or text[j] in ".eE+-"):
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


def mutate(text, rnd):
    """Bytes: `text` with 1 to 4 structured mutations chosen by `rnd` (a random.Random, or hypothesis' randoms)."""
    for _ in range(rnd.randint(1, 4)):
        lines = text.split("\n")
        op = rnd.randrange(11)
        if op <= 2:                               # a number replaced by a nasty one (the most fruitful)
            spans = _numbers(text)
            if spans:
                start, end = rnd.choice(spans)
                text = text[:start] + rnd.choice(NASTY_NUMBERS) + text[end:]
        elif op == 3:                             # a word or cell replaced
            words = [i for i, line in enumerate(lines) if line.strip()]
            if words:
                i = rnd.choice(words)
                cells = lines[i].replace(",", " ").split()
                if cells:
                    lines[i] = lines[i].replace(rnd.choice(cells), rnd.choice(NASTY_WORDS), 1)
                text = "\n".join(lines)
        elif op == 4:                             # a line inserted
            lines.insert(rnd.randrange(len(lines) + 1), rnd.choice(NASTY_LINES))
            text = "\n".join(lines)
        elif op == 5:                             # a line deleted, duplicated or moved
            i, j = rnd.randrange(len(lines)), rnd.randrange(len(lines))
            line = lines.pop(i) if rnd.random() < 0.6 else lines[i]
            lines.insert(j, line)
            text = "\n".join(lines)
        elif op == 6:                             # truncated
            text = text[:rnd.randrange(len(text) + 1)]
        elif op == 7:                             # separators changed
            a, b = rnd.choice([(",", " "), (" ", ","), (",", "\t"), ("  ", " "), (":", ""), ('"', "")])
            text = text.replace(a, b)
        elif op == 8:                             # a character inserted (control, format, non-ASCII)
            pos = rnd.randrange(len(text) + 1)
            text = text[:pos] + rnd.choice(["\x00", "\x85", "\u2028", "\udcff", "\u00e9", "\t", "\x1b", "\u0660"]) + text[pos:]
        elif op == 9:                             # deep nesting (JSON readers)
            depth = rnd.choice([50, 1000, 100000])
            pos = rnd.randrange(len(text) + 1)
            text = text[:pos] + "[" * depth + "]" * rnd.choice([0, depth]) + text[pos:]
        else:                                     # a line repeated many times
            if lines:
                i = rnd.randrange(len(lines))
                times = min(rnd.choice([2, 50, 2000]), 1 + MAX_CHARS // (len(lines[i]) + 1))
                lines[i:i + 1] = [lines[i]] * times
                text = "\n".join(lines)
    data = text.encode("utf-8", "surrogateescape" if rnd.random() < 0.5 else "replace")
    if data and rnd.random() < 0.05:              # a raw byte flipped: maybe not UTF-8 any more
        pos = rnd.randrange(len(data))
        data = data[:pos] + bytes([rnd.randrange(256)]) + data[pos + 1:]
    return data


# -- the readers ------------------------------------------------------------------------------------------------
def _measurements(fmt, **options):
    def read(path):
        from quadsel.ingest import read_measurements
        return read_measurements(path, fmt=fmt, **options)
    return read


def _measurements_and_map(path):
    """Reading and the decision map built from what was read (the next stage must hold every value read)."""
    from quadsel.decision.decision_map import build_decision_map
    from quadsel.ingest import read_measurements
    rows = read_measurements(path, collective="bcast")
    return build_decision_map(rows, "bcast")


def _meta_beside(path):
    """The .meta.json is the fuzzed file; a good CSV beside it."""
    from quadsel.ingest import read_measurements
    csv_path = Path(str(path)[:-len(".meta.json")] + ".csv")
    csv_path.write_text((INGEST / "generic.csv").read_text())
    return read_measurements(csv_path)


def _rules(path):
    from quadsel.targets.rules_file import read_rules_file
    rules = read_rules_file(path, library_version="Open MPI v5.0.11")
    for selection in rules.selections():        # and what the library picks at a few points
        for comm, msg in ((1, 0), (2, 1), (7, 1023), (8, 1 << 20), (1 << 30, 1 << 62)):
            selection.pick(comm, msg)
    return rules


def _mpich_base(path):
    from quadsel.targets.mpich_json import load_base
    return load_base(path)


def _measure_resume(path):
    from quadsel.measure.output import Journal, ResultFile
    ResultFile(path, resume=True).close()
    Journal(str(path) + ".rounds.jsonl", resume=True).close()


def _trace(path):
    """The trace reader and the analysis breakdown runs on what it read (every field it reads must be checked)."""
    from quadsel.trace.breakdown_report import analyses, render
    from quadsel.trace.trace_file import load_trace
    render(analyses([(str(path), load_trace(path))]))


def _verify_result(path):
    """codegen --verified: the result read, checked against a tree, and the tree pruned by it."""
    from quadsel.verify.prune import prune_all
    prune_all([_small_tree()], path)


def _metadata(path):
    """Metadata as resume and build --model read it (refused when damaged)."""
    from quadsel.ingest.metadata import load_meta
    load_meta(path)


def _impi_adjust(path):
    from quadsel.targets.rules_file import read_rules_file
    rules = read_rules_file(path, library_version="Intel(R) MPI Library 2021.18")
    for selection in rules.selections():
        for comm, msg in ((1, 0), (2, 1), (7, 1023), (8, 1 << 20), (1 << 30, 1 << 62)):
            selection.pick(comm, msg)


_TREE = []


def _small_tree():
    if not _TREE:
        from quadsel.decision.decision_function import DecisionFunction
        import json
        _TREE.append(DecisionFunction.from_json(json.loads(tree_text())))
    return _TREE[0]


TRACE_SEED = ('{"format": "quadsel-trace", "version": 1, "collective": "bcast", "library": "openmpi", "comm_size": 4,\n'
              ' "root": 0, "hosts": ["h", "h", "h", "h"], "cpus": 2, "oversubscribed": true, "map_by": null,\n'
              ' "load_average": [0.5, 0.25, 0.1], "probe_cost_us": 0.08, "cpu_affinity": [[0], [1], [0], [1]],\n'
              ' "runs": [{"algorithm": "6", "name": "binomial", "segsize": 0, "msg_size": 1024, "calls": 3,\n'
              '   "entry_us": [[0.0, 20.0, 2.0, 5.0], [100.0, 118.5, 103.0, 104.0], [200.0, 221.0, 201.0, 206.0]],\n'
              '   "exit_us": [[22.0, 32.0, 12.0, 40.0], [121.0, 130.0, 113.0, 141.0], [223.0, 233.0, 212.0, 240.0]],\n'
              '   "overhead": {"traced_us_per_iteration": [11.0, 12.0], "untraced_us_per_iteration": [10.0, 10.5]}}]}\n')
VERIFY_SEED = ('{"library": "openmpi", "library_version": "Open MPI v5.0.11", "np": 8,\n "points": [\n'
               '  {"collective": "bcast", "comm_size": 2, "msg_size": 1024, "quadsel": "6", "verdict": "slower",'
               ' "default_us": 10.0, "quadsel_us": 12.0, "speedup": 0.83},\n'
               '  {"collective": "bcast", "comm_size": 4, "msg_size": 8, "quadsel": "1", "verdict": "faster",'
               ' "default_us": 10.0, "quadsel_us": 8.0, "speedup": 1.25}],\n "statistics": {"decision": "deploy"}}\n')
META_SEED = ('{"quadsel_version": "0.1.0", "collective": "bcast", "library": "openmpi", "complete": true,\n'
             ' "grid": {"algorithms": {"6": "binomial"}, "methods": ["6", "3/seg8192"], "segments": [0, 8192],\n'
             '  "comm_sizes": [2, 4, 8], "msg_sizes": [1, 1024, 65536], "datatype": "byte", "points": 9},\n'
             ' "machine": {"platform": "Linux", "python": "3.11", "cpus": 2}, "ranks_per_node": {"h": 8},\n'
             ' "methodology": {"timing": "local", "sync": "barrier"}, "runs": [{"command": "x"}]}\n')
IMPI_SEED = ("# generated by quadsel\nexport I_MPI_ADJUST_BCAST='1:0-1023@1-4;2:1024-2147483647@1-4;3:0-2147483647@5-64'\n"
             "export I_MPI_ADJUST_ALLREDUCE='1:0-8;2:9-2147483647'\n")


def _seeds(*names):
    return [(DATA / name).read_text(encoding="utf-8") for name in names]


def _tree_loader(path):
    from quadsel.decision.decision_function import DecisionFunction
    DecisionFunction.load(path)


def _forest_loader(path):
    """A layout forest file read and asked at layouts inside and outside its members (as query and codegen do)."""
    from quadsel.decision.decision_function import DecisionFunction
    forest = DecisionFunction.load(path)
    if hasattr(forest, "members"):
        for ppn, comm, msg in ((1, 1, 0), (2, 4, 1024), (1 << 10, 1 << 30, 1 << 62)):
            forest.query(comm, msg, ppn=ppn)


def forest_text():
    """A layout forest built from a seeded sweep of 3 ppn x 3 node counts: the seed of the forest loader's fuzz."""
    from layout_helpers import forest_of, layout_rows
    return forest_of(layout_rows(1)).dumps()


def tree_text():
    """A tree file built from generic.csv: the seed of the tree loader's fuzz."""
    from quadsel.decision.builder import build_size_tree
    from quadsel.decision.decision_map import build_decision_map
    from quadsel.ingest import read_measurements
    return build_size_tree(build_decision_map(read_measurements(INGEST / "generic.csv"))).dumps()


READERS = {
    # name: (file name to write, seed texts, reader)
    "csv": ("bcast_alg6.csv", _seeds("ingest/generic.csv", "ingest/allreduce_units.csv", "ingest/bcast_alg6_seg1024.csv"),
            _measurements("csv")),
    "skampi": ("bcast.sko", _seeds("ingest/skampi_coll.sko", "ingest/skampi_old_np4.sko"), _measurements("skampi")),
    "osu": ("osu_bcast_np16_binomial.txt", _seeds("ingest/osu_bcast_np16_binomial.txt", "ingest/osu_allreduce.txt"),
            _measurements("osu", comm_size=None)),
    "imb": ("imb.txt", _seeds("ingest/imb_mpi1.txt"), _measurements("imb")),
    "detail": ("gather_detail.out", _seeds("ingest/gather_detail.out", "ingest/detail_ids.out"), _measurements("detail")),
    "occ": ("sample.occ", _seeds("ingest/sample.occ"), _measurements("occ")),
    "auto": ("input.txt", _seeds("ingest/generic.csv", "ingest/skampi_coll.sko", "ingest/imb_mpi1.txt",
                                 "ingest/sample.occ", "ingest/osu_bcast_np16_binomial.txt"), _measurements("auto")),
    "map": ("bcast_run.csv", _seeds("ingest/generic.csv"), _measurements_and_map),
    "meta": ("x.meta.json", ['{"library": "openmpi", "collective": "bcast", "grid": {"algorithms": {"6": "binomial"}}}'],
             _meta_beside),
    "ompi-rules": ("bcast.rules", _seeds("rules/good-v1.rules", "rules/good-v2.rules", "rules/unsorted.rules"), _rules),
    "ompi-json": ("rules.json", _seeds("rules/good-ompi.json"), _rules),
    "mpich-json": ("mpich.json", _seeds("rules/good-mpich.json"), _rules),
    "mpich-base": ("tuning.json", _seeds("rules/good-mpich.json"), _mpich_base),
    "tree": ("t.qt.json", [tree_text()], lambda path: _tree_loader(path)),
    "forest": ("f.forest.json", [forest_text()], _forest_loader),
    "trace": ("t.json", [TRACE_SEED], _trace),
    "verify-result": ("verify.json", [VERIFY_SEED], _verify_result),
    "metadata": ("m.meta.json", [META_SEED], _metadata),
    "impi-adjust": ("impi.sh", [IMPI_SEED], _impi_adjust),
    "measure-resume": ("out.csv", ["collective,algorithm,segsize,comm_size,msg_size,time_us,stddev_us,reps\n"
                                   "bcast,6,0,2,1,1.500,0.100,10\nbcast,1,0,2,1,2.000,0.100,10\n"], _measure_resume),
}


def run_one(reader, data, folder):
    """Write `data` as the reader's input in `folder` and read it: "read" or "refused" (QuadselError).
    Anything else propagates: that is a bug."""
    name, _, read = READERS[reader]
    path = Path(folder) / name
    path.write_bytes(data)
    try:
        read(path)
    except QuadselError as exc:
        text = str(exc)
        assert "\n" not in text and "\r" not in text, f"{reader}: a message of several lines: {text!r}"
        return "refused"
    return "read"


def random_case(reader, rnd):
    """(bytes) one fuzzed input for `reader`: a mutated seed, rarely random bytes."""
    _, seeds, _ = READERS[reader]
    if rnd.random() < 0.03:
        return bytes(rnd.randrange(256) for _ in range(rnd.randrange(200)))
    return mutate(rnd.choice(seeds), rnd)


def fuzz(reader, count, seed=0, folder=None):
    """`count` inputs for `reader` from random.Random(seed): {"read": n, "refused": n}; raises on a bug."""
    import tempfile
    rnd = random.Random(seed)
    outcome = {"read": 0, "refused": 0}
    with tempfile.TemporaryDirectory(prefix="quadsel-fuzz-") as tmp:
        for _ in range(count):
            data = random_case(reader, rnd)
            outcome[run_one(reader, data, folder or tmp)] += 1
    return outcome
