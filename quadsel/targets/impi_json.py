"""Intel MPI's JSON tuning file (`I_MPI_TUNING=FILE`): the writer (`emit`) and the reader `quadsel verify` uses.

The format is the one Intel's tuner writes (Intel MPI Developer Guide, "MPI Tuning"):

    {"coll=Allreduce": {"ppn=-1": {"comm_size=2": {"comm_id=-1": {"msg_size=1024": {"ALLREDUCE=8": {}},
                                                                  "msg_size=-1": {"ALLREDUCE=3": {}}}},
                                   "comm_size=-1": {...}}}}

How Intel MPI 2021.18.1 matches it is not documented; measured with verify's follow proof (allreduce,
reduction-order fingerprints; on one node and across the hosts of the namespace cluster; docs/deploy.md, "Intel
MPI's JSON tuning file", and docs/cluster.md, "Intel MPI's ppn level"), the rule is the same at the ppn,
comm_size and msg_size levels (MATCHING):

  - the entries of a level are tried **in file order**; the first whose value is -1 or **>= the call's value**
    (an inclusive upper bound) wins;
  - when none does, the **last** entry of the level applies;
  - ppn is the communicator's own ranks per node, **comm_size // nodes** (integer division) with nodes the
    hosts its ranks are on: a 2-rank communicator of a 4-rank job on one node has ppn 2, one rank on each of two
    hosts ppn 1 whatever the job's ppn, 3 ranks as 2 + 1 ppn 1 (intel_ppn);
  - msg_size is bytes (count x datatype size), not elements; names (`coll=`, `<COLL>=`) in any case.

So the writer emits every level in ascending order with -1 last, each key the inclusive upper end of its range.
A 2-D tree is one ppn block, `ppn=-1` (every layout), holding the tree's communicator sizes: on one node ppn =
comm size and the file answers exactly as the tree does; on several nodes a communicator of N ranks gets the
rules the tree has for N ranks. A layout forest (decision/layouts.py) is one block `ppn=P` per member, its bound,
the last `ppn=-1`: the forest's own query rule (first bound >= ppn, else the last) wherever the communicator's
ranks are spread evenly (comm size a multiple of its nodes: every layout measure forms); on an uneven one Intel
takes the block of comm_size // nodes, where the forest's `--nodes` query takes the ceiling (docs/formats-output.md).

Neither this file nor I_MPI_ADJUST can name the library's own default (preset 0 is Intel's basic logic): the
file covers the tree's measured range, the sizes outside it take the nearest measured size's rules
(rule_list.inside_rule_list), and a region the tree keeps at the default inside it is written as preset 0.
"""

import json
import re
from typing import Dict, List, Tuple

from ..errors import InputError, QuadselError
from ..libraries import DEFAULT_ALGORITHM, intelmpi
from .impi_adjust import message_size, preset_of
from ..json_lines import JObject, parse_json_lines
from .library_call import DEFAULT_PICK, Pick
from .layout_rules import layout_rules

MAX_VALUE = intelmpi.MAX_VALUE   # keys are C ints ("msg_size=%d")
ANY = -1
MATCHING = "file order; first entry whose value is -1 or >= the call's; none: the last entry"
# quadsel's collective -> the name Intel MPI's tuning file gives it (MPI_<Name>); read in any case
NAMES = {"allgather": "Allgather", "allgatherv": "Allgatherv", "allreduce": "Allreduce", "alltoall": "Alltoall",
         "alltoallv": "Alltoallv", "alltoallw": "Alltoallw", "barrier": "Barrier", "bcast": "Bcast",
         "exscan": "Exscan", "gather": "Gather", "gatherv": "Gatherv", "reduce": "Reduce",
         "reduce_scatter": "Reduce_scatter", "reduce_scatter_block": "Reduce_scatter_block", "scan": "Scan",
         "scatter": "Scatter", "scatterv": "Scatterv"}
LEVELS = ("ppn", "comm_size", "comm_id", "msg_size")


# -- writer ------------------------------------------------------------------------------------------------
def _key(hi):
    """The upper-bound key of an inclusive range ending at `hi` (None: open, -1)."""
    return ANY if hi is None or hi >= MAX_VALUE else hi


def ppn_levels(rules):
    """{"ppn=P": comm levels, ..., "ppn=-1": ...}: one block per layer in its order, the last (and a function
    without the layout key) -1."""
    last = len(rules.layers) - 1
    return {f"ppn={ANY if i == last else ppn}": comm_levels(rl) for i, (ppn, rl) in enumerate(rules.layers)}


def comm_levels(rule_list):
    """{"comm_size=N": {"comm_id=-1": {"msg_size=M": {"<COLL>=ID": {}}}}} of one RuleList."""
    name = rule_list.collective.upper()
    comms = {}
    for comm_lo, comm_hi, msgs in rule_list.ranges():
        if comm_lo > MAX_VALUE:
            continue
        level = {}
        for lo, hi, method in msgs:
            if lo > MAX_VALUE:
                continue
            preset, _ = preset_of(rule_list.collective, method)
            level[f"msg_size={_key(hi)}"] = {f"{name}={preset}": {}}
        last = list(level)[-1]
        if last != f"msg_size={ANY}":       # a range cut at 2^31 - 1: the last one applies above it anyway
            level[f"msg_size={ANY}"] = level.pop(last)
        comms[f"comm_size={_key(comm_hi)}"] = {f"comm_id={ANY}": level}
    last = list(comms)[-1]
    if last != f"comm_size={ANY}":
        comms[f"comm_size={ANY}"] = comms.pop(last)
    return comms


def emit(fns, max_requests=None):
    doc, seen = {}, set()
    for fn in fns:
        if fn.collective in seen:
            raise QuadselError(f"two trees for collective {fn.collective!r}: give one tree per collective")
        seen.add(fn.collective)
        if fn.collective not in NAMES:
            raise QuadselError(f"collective {fn.collective!r} has no Intel MPI tuning-file name")
        doc[f"coll={NAMES[fn.collective]}"] = ppn_levels(layout_rules(fn, intelmpi.NAME, inside=True))
    return json.dumps(doc, indent=1) + "\n"


def notes(fns):
    """What the file cannot say as the tree does (printed by codegen: JSON has no comments)."""
    out = []
    for fn in fns:
        rules = layout_rules(fn, intelmpi.NAME, inside=True)
        for label, (_, rl) in zip(rules.labels(), rules.layers):
            where = f"{label}: " if len(rules.layers) > 1 else ""
            out += [where + n for n in rl.notes]
            if any(r.method.algorithm == DEFAULT_ALGORITHM for c in rl.comm_rules for r in c.msg_rules):
                out.append(f"{where}{fn.collective}: preset 0 (Intel's basic selection logic) stands where the tree keeps the "
                           "library default inside its measured range, which the tuning file cannot name")
    if any(len(fn.layers) > 1 for fn in fns):
        out.append("ppn blocks: Intel MPI takes a communicator's ppn as comm_size // nodes; where the ranks are spread "
                   "unevenly over the nodes that can be below the --nodes query's ceil(comm_size / nodes)")
    return out


# -- reader ------------------------------------------------------------------------------------------------
_ENTRY = re.compile(r"^\s*([a-z_]+)\s*=\s*(-?\d+)\s*$", re.IGNORECASE)

Level = List[Tuple[int, int, object]]     # [(value, line, child)] in file order


def _entries(node, level, path, line):
    """[(value, line, child JObject)] of one level's object ("ppn=2": {...}, ...)."""
    if not isinstance(node, JObject) or not node.items:
        raise InputError(path, getattr(node, "line", line), f"expected an object of \"{level}=N\" keys")
    out = []
    for key, key_line, child in node.items:
        match = _ENTRY.match(key)
        if not match or match.group(1).lower() != level:
            raise InputError(path, key_line, f"{key[:40]!r}: expected \"{level}=N\" here ({' > '.join(LEVELS)})")
        value = int(match.group(2))
        if value < ANY or value > MAX_VALUE:
            raise InputError(path, key_line, f"{level}={value}: must be -1 (any) or 0..{MAX_VALUE}")
        if not isinstance(child, JObject):
            raise InputError(path, key_line, f"{level}={value}: its value must be an object")
        out.append((value, key_line, child))
    return out


def _preset(node, collective, path, line):
    """(preset, line) of a msg_size entry's object {"ALLREDUCE=8": {}}."""
    if len(node.items) != 1:
        raise InputError(path, node.line, f"expected one \"{collective.upper()}=ID\" key")
    key, key_line, _ = node.items[0]
    match = _ENTRY.match(key)
    if not match or match.group(1).lower() != collective.lower() or int(match.group(2)) < 0:
        raise InputError(path, key_line, f"{key[:40]!r}: expected \"{collective.upper()}=ID\" (a preset id)")
    return int(match.group(2)), key_line


def read(text, path):
    """{collective: ppn Level} of a tuning file; each ppn entry's child is a comm_size Level, whose children are
    msg_size Levels of (msg value, line, (preset, preset line)). comm_id: the -1 entry (every communicator)."""
    doc = parse_json_lines(text, path)
    if not isinstance(doc, JObject) or not doc.items:
        raise InputError(path, getattr(doc, "line", 1), "expected an object of \"coll=Name\" keys")
    by_name = {v.lower(): k for k, v in NAMES.items()}
    out: Dict[str, Level] = {}
    for key, line, node in doc.items:
        match = re.match(r"^\s*coll\s*=\s*([A-Za-z_]+)\s*$", key)
        if not match:
            raise InputError(path, line, f"{key[:40]!r}: expected \"coll=Name\" (e.g. \"coll=Bcast\")")
        name = match.group(1)
        collective = by_name.get(name.lower(), name.lower())
        if collective in out:
            raise InputError(path, line, f"coll={name} appears twice")
        ppns = []
        for ppn, ppn_line, comm_node in _entries(node, "ppn", path, line):
            comms = []
            for comm, comm_line, id_node in _entries(comm_node, "comm_size", path, ppn_line):
                ids = {value: child for value, _, child in _entries(id_node, "comm_id", path, comm_line)}
                if ANY not in ids:
                    raise InputError(path, comm_line, "no \"comm_id=-1\" entry: quadsel reads the rules for every "
                                                      "communicator (comm_id=-1) only")
                msgs = [(msg, msg_line, _preset(child, name, path, msg_line))
                        for msg, msg_line, child in _entries(ids[ANY], "msg_size", path, comm_line)]
                comms.append((comm, comm_line, msgs))
            ppns.append((ppn, ppn_line, comms))
        out[collective] = ppns
    return out


def first_match(entries, value):
    """The entry Intel MPI takes at one level (MATCHING)."""
    for entry in entries:
        if entry[0] == ANY or value <= entry[0]:
            return entry
    return entries[-1]


def intel_ppn(comm, nodes):
    """The ppn Intel MPI matches for a communicator of `comm` ranks on `nodes` hosts (measured, MATCHING)."""
    return max(int(comm) // int(nodes), 1)


def lookup(ppns, comm, msg, ppn=None, nodes=None):
    """(preset, line) for a call of `comm` ranks and Intel's message size `msg`, the ranks `ppn` per node or on
    `nodes` hosts (intel_ppn); neither: one node, ppn = comm."""
    if ppn is None:
        ppn = comm if nodes is None else intel_ppn(comm, nodes)
    _, _, comms = first_match(ppns, ppn)
    _, _, msgs = first_match(comms, comm)
    return first_match(msgs, msg)[2]


def pick(path, collective, ppns, comm, msg):
    if not ppns:
        return DEFAULT_PICK
    preset, line = lookup(ppns, comm, message_size(collective, msg, comm))
    return Pick(str(preset), 0, (), f"{path}:{line}")


def looks_like(text):
    """Is `text` (a JSON object) a tuning file: a "coll=..." key among its first keys?"""
    return bool(re.match(r'\s*\{\s*"\s*coll\s*=', text))
