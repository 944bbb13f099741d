"""Rules files as the MPI library reads them: what `quadsel verify RULES` measures and proves.

Readers of the files quadsel emits (quadsel/emitters.py) and users hand-write:

  ompi-rules  Open MPI coll/tuned classic dynamic rules, versions 1 and 2 (coll_tuned_dynamic_file.c)
  ompi-json   Open MPI JSON rules, rule_file_version 3 (Open MPI >= 6 / main only)
  mpich-json  MPICH collective selection JSON (csel, MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE)

Each file gives, per collective, a selection: `pick(comm, msg)` is the method the library runs there, in
the measure module's labels (Open MPI algorithm id as text, MPICH algorithm name), or the library's own
default (`DEFAULT_PICK`: Open MPI algorithm 0 / no matching rule).

Matching, as the libraries do it:
  classic, Open MPI 5.0.x  the first comm rule, then every following one whose key <= the communicator size
                           until the first larger key (sorted keys: the largest key <= size, below the first
                           key the first); within it the message rules likewise (largest MSGSIZE <= size).
  classic, Open MPI >= 6   each comm key is the exclusive upper end of a range (main's reader).
  JSON v3                  inclusive [min, max] ranges, the first match wins; no match: the fixed decision.
  MPICH                    sibling keys in order, the first that holds wins, down to an `algorithm=` leaf.

Open MPI's classic reader is lenient where it should not be: it skips any character that does not start a
number (so a typo shifts every later value), reads `010` as octal, and drops the *whole file silently*
when anything is wrong -- including a first message rule of a communicator size that is not for size 0.
These readers are strict instead: anything but plain decimal integers is a malformed file (InputError
naming file:line, exit 2). A well-formed file that the library drops as a whole (first message rule
not 0; JSON rules given to Open MPI 5.0.x) is not an error: `RulesFile.ignored` says why, and every pick
is the library default, which is what the library then runs.

This module is deliberately separate from tests/library_readers.py, the small independent reader the
emitter tests use as their oracle; the tests compare the two on emitted files.
"""

import bisect
import json
import re
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from .errors import InputError, QuadselError
from .ingest.table import DEFAULT_ALGORITHM
from .mpi_facts import MPICH_ALGORITHMS, OMPI_ALGORITHMS, OMPI_COLLECTIVE_IDS

VERIFIABLE = ("bcast", "reduce", "allreduce")
INF = float("inf")
INT_MAX = 2 ** 31 - 1

# Open MPI 5.0.x enum COLLTYPE: 0..16 as in mpi_facts, then the neighborhood collectives; COLLCOUNT = 22.
OMPI_COLLCOUNT = 22
OMPI_COLLECTIVE_NAMES = {v: k for k, v in OMPI_COLLECTIVE_IDS.items()}
# Chain algorithms read FANINOUT as their number of chains (a forced run: coll_tuned_<coll>_algorithm_chain_fanout,
# default coll_tuned_init_chain_fanout = 4); every other 5.0.x algorithm ignores FANINOUT.
OMPI_CHAIN = {"bcast": 2, "reduce": 2}
OMPI_DEFAULT_CHAIN_FANOUT = 4
# Algorithms whose 5.0.x implementation never reads the segment size (as quadsel.measure.libraries).
OMPI_UNSEGMENTED = {"bcast": {1, 8, 9}, "reduce": {1, 7, 8}, "allreduce": {1, 2, 3, 4, 6}}


@dataclass(frozen=True)
class Pick:
    """What the library runs at one point: a forcible method, or the library default."""

    label: str                     # "default", an Open MPI id ("6"), an MPICH algorithm ("binomial")
    segsize: int = 0
    params: Tuple = ()             # (("chain_fanout", 2), ("max_requests", 8)): forced alongside (Open MPI)
    rule: str = field(default="", compare=False)   # "file:line" of the rule that chose it

    @property
    def is_default(self):
        return self.label == DEFAULT_ALGORITHM

    def arm(self):
        """The verify launches' JSON form: [label, segsize] or [label, segsize, [[name, value], ...]]."""
        return [self.label, int(self.segsize)] + ([[list(p) for p in self.params]] if self.params else [])


DEFAULT_PICK = Pick(DEFAULT_ALGORITHM, 0)


@dataclass(frozen=True)
class CallModel:
    """The facts of one collective call that an MPICH selection may test (a verify call by default)."""

    count: int
    type_size: int
    op_built_in: bool = True
    commutative: bool = True
    threaded: bool = True          # mpi4py asks for MPI_THREAD_MULTIPLE
    one_node: bool = True          # every rank on this machine (quadsel verify --np)

    @staticmethod
    def of_verify_call(collective, msg, type_size=None):
        """The call quadsel.verify.speed makes: bytes for bcast; MPI_SUM of float (4 B) or uint8 for reductions
        (`type_size`, as verify_type_size chose it for the whole grid; None: float where msg allows it)."""
        if type_size is None:
            type_size = 4 if msg % 4 == 0 else 1
        if collective == "bcast" or type_size == 1:
            return CallModel(count=msg, type_size=1)
        return CallModel(count=msg // type_size, type_size=type_size)

    @staticmethod
    def of_order_call(msg):
        """quadsel.verify.fingerprint's order call: int64, a user operation declared commutative."""
        return CallModel(count=msg // 8, type_size=8, op_built_in=False, commutative=True)


def verify_type_size(collective, msg_sizes):
    """Element size of verify's calls, by quadsel measure's `--datatype auto` rule over the same sizes: bytes
    for bcast; for reductions float (4) when every size is a multiple of 4, else uint8 (1)."""
    if collective == "bcast":
        return 1
    return 4 if all(m % 4 == 0 for m in msg_sizes) else 1


# -- Open MPI classic rules file --------------------------------------------------------------------------
@dataclass
class ClassicMsgRule:
    msg: int
    alg: int
    faninout: int
    segsize: int
    maxreq: Optional[int]          # None: not given (version 1, or version 2 without the fifth number)
    line: int


@dataclass
class ClassicCommRule:
    comm: int
    rules: List[ClassicMsgRule]
    line: int


_DECIMAL = re.compile(r"0|[1-9][0-9]*")
_VERSION = re.compile(r"rule-file-version-([0-9]+)")


def _classic_tokens(text, path):
    """[(value, line, last on its line)] of a classic file, and its version. Strict: plain decimals only."""
    lines = text.split("\n")
    version = 1
    tokens = []
    for number, raw in enumerate(lines, start=1):
        body = raw.split("#", 1)[0]
        if number == 1 and raw.startswith("rule-file-version-"):
            match = _VERSION.match(raw)
            if not match:
                raise InputError(path, 1, "the version line must read rule-file-version-1 or rule-file-version-2")
            version = int(match.group(1))
            if version not in (1, 2):
                raise InputError(path, 1, f"rule-file-version-{version}: Open MPI's classic format has versions 1 and 2")
            body = raw[match.end():].split("#", 1)[0]
        elif "rule-file-version-" in body:
            raise InputError(path, number, "rule-file-version-N must be the very first characters of the file "
                                           "(elsewhere Open MPI reads its digits as numbers)")
        words = body.split()
        for i, word in enumerate(words):
            if not _DECIMAL.fullmatch(word):
                if re.fullmatch(r"0[0-9]+", word):
                    why = "a leading 0 makes Open MPI read it as octal"
                elif re.fullmatch(r"-[0-9]+", word):
                    why = "negative values make Open MPI ignore the whole file"
                else:
                    why = "Open MPI would skip its characters silently and misread the rest of the file"
                raise InputError(path, number, f"{word!r} is not a plain decimal integer ({why})")
            tokens.append((int(word), number, i == len(words) - 1))
    return tokens, version, len(lines)


def _classic_algorithm_ok(collective, alg):
    known = OMPI_ALGORITHMS.get(collective)
    return alg == 0 or known is None or alg in known


def read_ompi_classic(text, path):
    """(version, {collective id: [ClassicCommRule]}, ignored reason or None, warnings)."""
    tokens, version, n_lines = _classic_tokens(text, path)
    per_line = {}
    for _, number, _ in tokens:
        per_line[number] = per_line.get(number, 0) + 1
    position = [0]
    warnings = []

    def take(what):
        if position[0] >= len(tokens):
            raise InputError(path, n_lines, f"the file ends where {what} was expected")
        value = tokens[position[0]]
        position[0] += 1
        return value

    ignored = None
    n_coll, line, _ = take("the number of collectives")
    if n_coll > OMPI_COLLCOUNT:
        raise InputError(path, line, f"{n_coll} collectives: Open MPI knows {OMPI_COLLCOUNT}")
    collectives = {}
    for _ in range(n_coll):
        coll_id, line, _ = take("a collective id")
        if coll_id >= OMPI_COLLCOUNT:
            raise InputError(path, line, f"collective id {coll_id} does not exist (0-{OMPI_COLLCOUNT - 1}; "
                                         f"bcast 7, reduce 11, allreduce 2)")
        if coll_id in collectives:
            warnings.append(f"{path}:{line}: collective id {coll_id} appears twice: Open MPI uses the later rules")
        name = OMPI_COLLECTIVE_NAMES.get(coll_id, f"collective {coll_id}")
        n_comm, _, _ = take(f"the number of communicator sizes of {name}")
        comms = []
        for _ in range(n_comm):
            comm, comm_line, _ = take(f"a communicator size of {name}")
            n_msg, _, _ = take(f"the number of message rules of {name} comm size {comm}")
            rules = []
            for index in range(n_msg):
                msg, rule_line, _ = take(f"a message size of {name} comm size {comm}")
                starts_line = position[0] == 1 or tokens[position[0] - 2][1] != rule_line
                alg, _, _ = take(f"the algorithm of {name} comm size {comm} message size {msg}")
                faninout, _, _ = take(f"the fan-in/out of {name} comm size {comm} message size {msg}")
                segsize, _, last = take(f"the segment size of {name} comm size {comm} message size {msg}")
                maxreq = None
                if version > 1 and not last:      # Open MPI peeks: a digit next on the same line is MAXREQUESTS
                    maxreq, _, last = take("max requests")
                if version == 1 and starts_line and not last and per_line[rule_line] == 5:
                    raise InputError(path, rule_line, "5 numbers on a message rule line of a version-1 file: Open MPI "
                                                      "reads the fifth as the next rule's message size (add "
                                                      "rule-file-version-2 as the first line for MAXREQUESTS)")
                if not _classic_algorithm_ok(name, alg):
                    known = ", ".join(f"{k} {v}" for k, v in OMPI_ALGORITHMS[name].items())
                    raise InputError(path, rule_line, f"{name} has no coll/tuned algorithm {alg} (0 = fixed decision, "
                                                      f"{known}): Open MPI fails the call")
                if index == 0 and msg != 0 and ignored is None:
                    ignored = (rule_line, f"the first message rule of {name} comm size {comm} is for message size "
                                          f"{msg}, not 0")
                if rules and msg <= rules[-1].msg:
                    warnings.append(f"{path}:{rule_line}: {name} comm size {comm}: message size {msg} does not "
                                    f"increase: Open MPI stops at the first larger key, so later rules may never apply")
                rules.append(ClassicMsgRule(msg, alg, faninout, segsize, maxreq, rule_line))
            if comms and comm <= comms[-1].comm:
                warnings.append(f"{path}:{comm_line}: {name}: communicator size {comm} does not increase: Open MPI "
                                f"stops at the first larger key, so later rules may never apply")
            comms.append(ClassicCommRule(comm, rules, comm_line))
        collectives[coll_id] = comms
    if position[0] < len(tokens):
        raise InputError(path, tokens[position[0]][1], "numbers after the last collective (Open MPI ignores them: "
                                                       "is the number of collectives or of rules too small?)")
    return version, collectives, ignored, warnings


def classic_lookup(comms, comm_size, msg_size, matching="5.0"):
    """The ClassicMsgRule Open MPI applies, or None (its fixed decision)."""
    if not comms:
        return None
    if matching == "5.0":
        chosen = comms[0]
        for entry in comms:
            if entry.comm > comm_size:
                break
            chosen = entry
        if not chosen.rules:
            return None
        best = chosen.rules[0]
        for rule in chosen.rules:
            if rule.msg > msg_size:
                break
            best = rule
        return best
    # Open MPI >= 6 (main): comm rule i covers [previous key, key_i - 1], the first from 0, the last to INT_MAX
    chosen, lo = None, 0
    for i, entry in enumerate(comms):
        hi = INT_MAX if i == len(comms) - 1 else entry.comm - 1
        if lo <= comm_size <= hi:
            chosen = entry
            break
        lo = hi + 1
    if chosen is None:
        return None
    for j, rule in enumerate(chosen.rules):
        hi = INF if j == len(chosen.rules) - 1 else chosen.rules[j + 1].msg - 1
        if rule.msg <= msg_size <= hi:
            return rule
    return None


def ompi_pick(collective, alg, faninout, segsize, maxreq, where):
    """The forcible form of an Open MPI rule's result: chain fan-out and max requests become extra cvars."""
    if alg == 0:
        return Pick(DEFAULT_ALGORITHM, 0, (), where)
    params = []
    if OMPI_CHAIN.get(collective) == alg and faninout != OMPI_DEFAULT_CHAIN_FANOUT:
        params.append(("chain_fanout", int(faninout)))
    if collective == "reduce" and maxreq:
        params.append(("max_requests", int(maxreq)))
    seg = 0 if alg in OMPI_UNSEGMENTED.get(collective, ()) else int(segsize)
    return Pick(str(alg), seg, tuple(params), where)


# -- JSON with line numbers ---------------------------------------------------------------------------------
class JObject:
    """A JSON object with its keys in file order, each with its line (duplicate keys kept)."""

    def __init__(self, line):
        self.line = line
        self.items = []            # [(key, line, value)]

    def get(self, key, default=None):
        for k, _, v in self.items:
            if k == key:
                return v
        return default

    def line_of(self, key):
        for k, line, _ in self.items:
            if k == key:
                return line
        return self.line

    def keys(self):
        return [k for k, _, _ in self.items]


class JArray(list):
    def __init__(self, line):
        super().__init__()
        self.line = line


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_SPACE = re.compile(r"[ \t\n\r]*")


def parse_json_lines(text, path):
    """Parse JSON keeping every object's key order and line numbers (JObject / JArray / plain scalars)."""
    try:
        json.loads(text)
    except ValueError as exc:
        raise InputError(path, getattr(exc, "lineno", None), f"not valid JSON: {getattr(exc, 'msg', exc)}") from None
    newlines = [i for i, c in enumerate(text) if c == "\n"]
    line_at = lambda pos: bisect.bisect_right(newlines, pos - 1) + 1

    def value(pos):
        pos = _SPACE.match(text, pos).end()
        c = text[pos]
        if c == "{":
            obj, pos = JObject(line_at(pos)), _SPACE.match(text, pos + 1).end()
            if text[pos] == "}":
                return obj, pos + 1
            while True:
                pos = _SPACE.match(text, pos).end()
                key_line = line_at(pos)
                key, pos = json.decoder.scanstring(text, pos + 1)
                pos = _SPACE.match(text, pos).end() + 1          # the ':'
                item, pos = value(pos)
                obj.items.append((key, key_line, item))
                pos = _SPACE.match(text, pos).end()
                if text[pos] == "}":
                    return obj, pos + 1
                pos += 1                                          # the ','
        if c == "[":
            arr, pos = JArray(line_at(pos)), _SPACE.match(text, pos + 1).end()
            if text[pos] == "]":
                return arr, pos + 1
            while True:
                item, pos = value(pos)
                arr.append(item)
                pos = _SPACE.match(text, pos).end()
                if text[pos] == "]":
                    return arr, pos + 1
                pos += 1
        if c == '"':
            return json.decoder.scanstring(text, pos + 1)
        for word, result in (("true", True), ("false", False), ("null", None)):
            if text.startswith(word, pos):
                return result, pos + len(word)
        match = _NUMBER.match(text, pos)
        number = match.group(0)
        return (float(number) if match.group(1) or match.group(2) else int(number)), match.end()

    return value(0)[0]


# -- Open MPI JSON rules (rule_file_version 3) --------------------------------------------------------------
@dataclass
class JsonMsgRule:
    lo: float
    hi: float
    alg: Optional[int]             # None: a rule Open MPI disables (unknown algorithm)
    faninout: int
    segsize: int
    reqs: int
    line: int


@dataclass
class JsonCommRule:
    lo: float
    hi: float
    distribution: str
    rules: List[JsonMsgRule]
    line: int


JSON_MSG_KEYS = ("msg_size_min", "msg_size_max", "faninout", "seg_size", "reqs", "alg")
JSON_COMM_KEYS = ("comm_size_min", "comm_size_max", "comm_rank_distribution", "rules")


def _json_int(obj, key, default, path, what):
    if key not in obj.keys():
        return default
    value, line = obj.get(key), obj.line_of(key)
    if isinstance(value, bool) or isinstance(value, float):
        raise InputError(path, line, f"{what} {key!r} must be an integer or \"inf\", not {json.dumps(value)} "
                                     f"(Open MPI ignores the whole file)")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value[:3] in ("inf", "Inf", "INF"):
        return INF
    raise InputError(path, line, f"{what} {key!r} must be an integer or \"inf\", not {json.dumps(value)} "
                                 f"(Open MPI ignores the whole file)")


def _json_alg(collective, value, line, path, warnings):
    known = OMPI_ALGORITHMS.get(collective)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InputError(path, line, f"\"alg\" must be an algorithm id or name, not {json.dumps(value)}")
    if isinstance(value, int):
        if value == 0 or known is None or value in known:
            return value
    else:
        names = {"ignore": 0}
        names.update({n.lower(): i for i, n in (known or {}).items()})
        if value.strip().lower() in names:
            return names[value.strip().lower()]
        if known is None:
            raise InputError(path, line, f"cannot tell which {collective} algorithm {value!r} is (give its id)")
    warnings.append(f"{path}:{line}: {collective} has no algorithm {value!r}: Open MPI disables this rule "
                    f"(a message that only it matches gets the fixed decision)")
    return None


def read_ompi_json(doc, path):
    """({collective name: [JsonCommRule]}, warnings) of an Open MPI JSON rules document."""
    warnings = []
    if not isinstance(doc, JObject):
        raise InputError(path, 1, "an Open MPI JSON rules file is an object with \"collectives\"")
    version = doc.get("rule_file_version")
    if version != 3:
        warnings.append(f"{path}:{doc.line_of('rule_file_version')}: rule_file_version is {json.dumps(version)}, "
                        f"not 3 (Open MPI does not check it; quadsel reads the file as version 3)")
    collectives_obj = doc.get("collectives")
    if not isinstance(collectives_obj, JObject):
        raise InputError(path, doc.line_of("collectives"), "\"collectives\" must be an object of collective names")
    out = {}
    for name, line, comm_array in collectives_obj.items:
        if name not in OMPI_COLLECTIVE_IDS:
            raise InputError(path, line, f"unknown collective {name!r} (lowercase names such as bcast, reduce, "
                                         f"allreduce; Open MPI ignores the whole file)")
        if name in out:
            warnings.append(f"{path}:{line}: collective {name!r} appears twice: Open MPI uses the later one")
        if not isinstance(comm_array, JArray):
            raise InputError(path, line, f"{name}: expected an array of communicator rules")
        comms = []
        for comm in comm_array:
            if not isinstance(comm, JObject):
                raise InputError(path, getattr(comm, "line", line), f"{name}: a communicator rule must be an object")
            for key, key_line, _ in comm.items:
                if key not in JSON_COMM_KEYS:
                    warnings.append(f"{path}:{key_line}: {name}: Open MPI does not read key {key!r} in a comm rule")
            lo = _json_int(comm, "comm_size_min", 0, path, name)
            hi = _json_int(comm, "comm_size_max", INT_MAX, path, name)
            distribution = comm.get("comm_rank_distribution", "any")
            if distribution not in ("any", "one-per-node", "single-node"):
                warnings.append(f"{path}:{comm.line_of('comm_rank_distribution')}: {name}: unknown "
                                f"comm_rank_distribution {distribution!r}: Open MPI assumes \"any\"")
                distribution = "any"
            msg_array = comm.get("rules")
            if not isinstance(msg_array, JArray):
                raise InputError(path, comm.line_of("rules"), f"{name}: a communicator rule needs a \"rules\" array")
            rules = []
            for rule in msg_array:
                if not isinstance(rule, JObject):
                    raise InputError(path, getattr(rule, "line", comm.line), f"{name}: a message rule must be an object")
                for key, key_line, _ in rule.items:
                    if key not in JSON_MSG_KEYS:
                        hint = " (it reads \"seg_size\")" if key == "segsize" else ""
                        warnings.append(f"{path}:{key_line}: {name}: Open MPI does not read key {key!r}{hint}")
                if "alg" not in rule.keys():
                    raise InputError(path, rule.line, f"{name}: a message rule needs \"alg\"")
                alg = _json_alg(name, rule.get("alg"), rule.line_of("alg"), path, warnings)
                rules.append(JsonMsgRule(_json_int(rule, "msg_size_min", 0, path, name),
                                         _json_int(rule, "msg_size_max", INF, path, name), alg,
                                         _json_int(rule, "faninout", 0, path, name),
                                         _json_int(rule, "seg_size", 0, path, name),
                                         _json_int(rule, "reqs", 0, path, name), rule.line))
            comms.append(JsonCommRule(lo, hi, distribution, rules, comm.line))
        out[name] = comms
    return out, warnings


def json_lookup(comms, comm_size, msg_size, one_node=True):
    """The JsonMsgRule Open MPI applies, or None (its fixed decision). One node: no comm is one-per-node."""
    for comm in comms:
        if comm.distribution == "one-per-node" and (one_node and comm_size > 1):
            continue
        if comm.distribution == "single-node" and not one_node:
            continue
        if comm.lo <= comm_size <= comm.hi:
            for rule in comm.rules:
                if rule.alg is not None and rule.lo <= msg_size <= rule.hi:
                    return rule
            return None
    return None


# -- MPICH collective selection JSON ---------------------------------------------------------------------------
MPICH_BOOLEAN = {"is_multi_threaded", "comm_type", "comm_hierarchy", "is_node_consecutive", "is_sendbuf_inplace",
                 "is_block_regular", "is_commutative", "is_op_built_in", "collective"}
_MPICH_KEY = re.compile(r"^(?P<name>[a-z_]+)(?P<op><=|<|=)(?P<value>.*)$")
_MPICH_FIXED = {
    "is_multi_threaded": ("yes", "no"), "comm_type": ("intra", "inter"),
    "comm_hierarchy": ("parent", "node_roots", "node", "flat"), "is_node_consecutive": ("yes", "no"),
    "is_sendbuf_inplace": ("yes", "no"), "is_block_regular": ("yes", "no"), "is_commutative": ("yes", "no"),
    "is_op_built_in": ("yes", "no"),
}
_MPICH_NUMERIC = {"comm_size", "count", "avg_msg_size", "total_msg_size", "comm_avg_ppn"}
MPICH_COLLECTIVES = (
    "allgather allgatherv allreduce alltoall alltoallv alltoallw barrier bcast exscan gather gatherv iallgather "
    "iallgatherv iallreduce ialltoall ialltoallv ialltoallw ibarrier ibcast iexscan igather igatherv "
    "ineighbor_allgather ineighbor_allgatherv ineighbor_alltoall ineighbor_alltoallv ineighbor_alltoallw ireduce "
    "ireduce_scatter ireduce_scatter_block iscan iscatter iscatterv neighbor_allgather neighbor_allgatherv "
    "neighbor_alltoall neighbor_alltoallv neighbor_alltoallw reduce reduce_scatter reduce_scatter_block scan "
    "scatter scatterv").split()
# what the verify harness itself calls (mpi4py Split/Dup/gather, barriers): MPICH aborts on an uncovered one
MPICH_HARNESS_COLLECTIVES = ("barrier", "allgather", "allreduce", "gather", "ibarrier")


def _mpich_classify(key, path, line):
    """(name, op, value) of an operator key, checked the way MPICH's csel parser does (it aborts otherwise)."""
    ckey = key.replace(" ", "")
    if ckey == "any" or ckey.endswith("=any"):
        return ckey.split("=", 1)[0] if "=" in ckey else "any", "=", "any"
    match = _MPICH_KEY.match(ckey)
    bad = f"MPICH does not know the key {key!r} (it aborts reading the file)"
    if not match:
        raise InputError(path, line, bad)
    name, op, value = match.group("name", "op", "value")
    if name == "collective":
        if op != "=" or value not in MPICH_COLLECTIVES:
            raise InputError(path, line, f"unknown collective in {key!r} (MPICH aborts reading the file)")
    elif name in _MPICH_FIXED:
        if op != "=" or value not in _MPICH_FIXED[name]:
            raise InputError(path, line, bad)
    elif name in _MPICH_NUMERIC:
        special = {("comm_size", "=", "pow2"), ("comm_size", "=", "node_comm_size"), ("count", "<", "pow2")}
        if (name, op, value) not in special:
            if op == "=" or not value.isdigit() or (name == "count" and op == "<"):
                raise InputError(path, line, bad)
    else:
        raise InputError(path, line, bad)
    return name, op, value


def _mpich_container_name(key):
    return key.replace(" ", "")[len("algorithm="):]


def check_mpich(doc, path):
    """Raise InputError where MPICH's csel parser or its tree validation would abort; return warnings."""
    warnings = []
    if not isinstance(doc, JObject):
        raise InputError(path, 1, "an MPICH selection file is a JSON object")

    unguarded = []

    def walk(node, parent=False):
        if not isinstance(node, JObject):
            raise InputError(path, getattr(node, "line", None) or 1, "MPICH needs an object as every value")
        keys = node.keys()
        for i, (key, line, child) in enumerate(node.items):
            ckey = key.replace(" ", "")
            if ckey.startswith(("algorithm=", "composition=")):
                if len(keys) > 1:
                    raise InputError(path, line, f"{key!r} must be the only key of its object (MPICH reads the "
                                                 f"object as that algorithm and drops its other keys)")
                if not isinstance(child, JObject):
                    raise InputError(path, line, "an algorithm's parameters must be an object")
                for param, param_line, value in child.items:
                    if "=" not in param:
                        raise InputError(path, param_line, f"algorithm parameter {param!r} is not NAME=VALUE")
                container = ckey.split("=", 1)[1]
                match = re.match(r"MPIR_(Bcast|Reduce|Allreduce)_(intra|allcomm)_(.+)$", container)
                if match and match.group(3) not in MPICH_ALGORITHMS[match.group(1).lower()]:
                    raise InputError(path, line, f"MPICH has no {match.group(1).lower()} algorithm "
                                                 f"{match.group(3)!r} (known: "
                                                 f"{', '.join(MPICH_ALGORITHMS[match.group(1).lower()])})")
                if container in ("MPIR_Bcast_intra_smp", "MPIR_Reduce_intra_smp") and not parent:
                    unguarded.append(line)
                return
            name, op, value = _mpich_classify(key, path, line)
            if value == "any" and i != len(keys) - 1:
                raise InputError(path, line, f"{key!r} must be the last key of its object (MPICH aborts otherwise)")
            if value != "any" and name not in MPICH_BOOLEAN and i == len(keys) - 1:
                raise InputError(path, line, f"{key!r} needs a following key such as "
                                             f"\"{name}=any\" (MPICH aborts on a condition with no alternative)")
            walk(child, parent or ckey == "comm_hierarchy=parent")

    walk(doc)
    if unguarded:
        lines = ", ".join(str(n) for n in unguarded[:5]) + (" ..." if len(unguarded) > 5 else "")
        warnings.append(f"{path}:{unguarded[0]}: bcast/reduce smp outside \"comm_hierarchy=parent\" (lines {lines}): "
                        f"MPICH aborts (bcast: assertion MPIR_Comm_is_parent_comm, seen with MPICH 5.0.2) when it "
                        f"selects it for a communicator without a node hierarchy, e.g. its own node communicators "
                        f"inside MPI_Comm_split; MPICH's own selection guards them so")
    return warnings


def _pof2(n):
    p = 1
    while p * 2 <= n:
        p *= 2
    return p


def mpich_holds(name, op, value, collective, comm_size, msg, call):
    """Does operator key (name op value) hold for this call (one node, MPICH's csel semantics)?"""
    if value == "any":
        return True
    hierarchy = call.one_node and comm_size > 1      # one node, several ranks: MPICH builds a node communicator
    if name == "collective":
        return value == collective
    if name == "comm_type":
        return value == "intra"
    if name == "is_multi_threaded":
        return (value == "yes") == call.threaded
    if name == "comm_hierarchy":
        return (value == "parent") == hierarchy
    if name == "is_node_consecutive":
        return value == "yes"
    if name == "is_sendbuf_inplace":
        return value == "no"
    if name == "is_block_regular":
        return value == "yes"
    if name == "is_commutative":
        return (value == "yes") == call.commutative
    if name == "is_op_built_in":
        return (value == "yes") == call.op_built_in
    if name == "comm_size":
        if value == "pow2":
            return comm_size & (comm_size - 1) == 0
        if value == "node_comm_size":
            return hierarchy
        return comm_size <= int(value) if op == "<=" else comm_size < int(value)
    if name == "count":
        if value == "pow2":
            return call.count < _pof2(comm_size)
        return call.count <= int(value)
    if name in ("avg_msg_size", "total_msg_size"):
        size = call.count * call.type_size * (comm_size if name == "total_msg_size" else 1)
        return size <= int(value) if op == "<=" else size < int(value)
    if name == "comm_avg_ppn":
        if not hierarchy:
            return False
        return comm_size <= int(value) if op == "<=" else comm_size < int(value)
    raise QuadselError(f"cannot evaluate MPICH key {name}{op}{value}")


def mpich_lookup(doc, collective, comm_size, msg, call):
    """(container name, {param: value}, line) MPICH selects, or None (no key holds: MPICH aborts there)."""
    node = doc
    while True:
        for key, line, child in node.items:
            ckey = key.replace(" ", "")
            if ckey.startswith(("algorithm=", "composition=")):
                params = {k.split("=", 1)[0].strip(): k.split("=", 1)[1].strip() for k in child.keys()}
                return ckey.split("=", 1)[1], params, line
            name, op, value = _mpich_classify(key, "<checked>", line)
            if mpich_holds(name, op, value, collective, comm_size, msg, call):
                node = child
                break
        else:
            return None


def mpich_label(collective, container):
    """The MPIR_CVAR_<COLL>_INTRA_ALGORITHM value of an intra-communicator container, or None."""
    title = collective.capitalize()
    for prefix in (f"MPIR_{title}_intra_", f"MPIR_{title}_allcomm_"):
        if container.startswith(prefix):
            name = container[len(prefix):]
            if name in MPICH_ALGORITHMS.get(collective, ()):
                return name
    return None


# -- files ------------------------------------------------------------------------------------------------------
FORMAT_NAMES = {"ompi-rules": "Open MPI classic rules", "ompi-json": "Open MPI JSON rules",
                "mpich-json": "MPICH selection JSON"}


def detect_format(text):
    """'tree', 'ompi-json', 'mpich-json' or 'ompi-rules' (anything that is not JSON)."""
    head = text.lstrip()
    if not head.startswith("{"):
        return "ompi-rules"
    if "quadsel-quadtree" in text[:4096]:
        return "tree"
    if re.search(r'"collectives"\s*:', text) and not re.search(r'"collective\s*=', text):
        return "ompi-json"
    return "mpich-json"


def ompi_major(version_string):
    match = re.search(r"Open MPI v?(\d+)", version_string or "")
    return int(match.group(1)) if match else None


@dataclass
class RulesFile:
    path: str
    format: str                                    # ompi-rules | ompi-json | mpich-json
    library: str                                   # openmpi | mpich
    collectives: List[str]                         # every collective the file has rules for
    ignored: Optional[str] = None                  # why the library drops the whole file ("file:line: ...")
    warnings: List[str] = field(default_factory=list)
    version: int = 0                               # classic: 1 or 2
    matching: str = "5.0"                          # classic: "5.0" or "6" (Open MPI >= 6 reads comm keys as ranges)
    _data: object = None

    def selections(self):
        return [RulesSelection(self, c) for c in self.collectives if c in VERIFIABLE]

    def pick(self, collective, comm_size, msg, call=None):
        """The Pick the library makes for one call (DEFAULT_PICK where it uses its own decision)."""
        if self.ignored:
            return DEFAULT_PICK
        if self.format == "ompi-rules":
            rule = classic_lookup(self._data.get(OMPI_COLLECTIVE_IDS[collective], []), comm_size, msg, self.matching)
            if rule is None:
                return DEFAULT_PICK
            return ompi_pick(collective, rule.alg, rule.faninout, rule.segsize, rule.maxreq,
                             f"{self.path}:{rule.line}")
        if self.format == "ompi-json":
            rule = json_lookup(self._data.get(collective, []), comm_size, msg)
            if rule is None:
                return DEFAULT_PICK
            return ompi_pick(collective, rule.alg, rule.faninout, rule.segsize, rule.reqs, f"{self.path}:{rule.line}")
        call = call or CallModel.of_verify_call(collective, msg)
        found = mpich_lookup(self._data, collective, comm_size, msg, call)
        if found is None:
            raise QuadselError(f"{self.path}: no {collective} rule holds for comm size {comm_size}, message size "
                               f"{msg}: MPICH aborts there (add an \"=any\" catch-all)")
        container, params, line = found
        label = mpich_label(collective, container)
        if label is None:
            raise QuadselError(f"{self.path}:{line}: {container} is not an MPICH {collective} algorithm quadsel "
                               f"can force (known: {', '.join(MPICH_ALGORITHMS.get(collective, []))})")
        return Pick(label, 0, (), f"{self.path}:{line}")

    def container_params(self, collective, comm_size, msg, call=None):
        """MPICH: the parameters the selected container carries (they override MPICH's CVAR defaults)."""
        if self.format != "mpich-json":
            return {}
        found = mpich_lookup(self._data, collective, comm_size, msg, call or CallModel.of_verify_call(collective, msg))
        return found[1] if found else {}


class RulesSelection:
    """One collective of a rules file, in the interface quadsel verify uses for trees too."""

    def __init__(self, rules_file, collective):
        self.file = rules_file
        self.collective = collective
        self.path = rules_file.path
        self.comm_sizes = None         # a rules file has no measured grid: --comm-sizes/--msg-sizes or --measurements
        self.msg_sizes = None

    def pick(self, comm_size, msg, call=None):
        return self.file.pick(self.collective, comm_size, msg, call)


def read_rules_file(path, text=None, library_version=None):
    """Read a rules file (format detected from its content) as the library in `library_version` would."""
    if text is None:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise InputError(path, None, f"cannot read: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise InputError(path, None, "not a text file") from None
    kind = detect_format(text)
    major = ompi_major(library_version)
    if kind == "tree":
        raise InputError(path, None, "a quadsel tree file, not a rules file")
    if kind == "ompi-rules":
        version, collectives, ignored, warnings = read_ompi_classic(text, path)
        out = RulesFile(path, kind, "openmpi", [OMPI_COLLECTIVE_NAMES.get(c, f"collective {c}") for c in collectives],
                        warnings=warnings, version=version, matching="6" if major and major >= 6 else "5.0",
                        _data=collectives)
        if ignored:
            out.ignored = (f"{path}:{ignored[0]}: {ignored[1]}: Open MPI silently ignores this whole file and "
                           f"uses its fixed decisions")
        return out
    doc = parse_json_lines(text, path)
    if kind == "ompi-json":
        collectives, warnings = read_ompi_json(doc, path)
        out = RulesFile(path, kind, "openmpi", list(collectives), warnings=warnings, _data=collectives)
        if major is not None and major < 6:
            out.ignored = (f"{path}: Open MPI {major}.x reads only the classic rules format, not JSON rules "
                           f"(Open MPI >= 6 / main): it does not use this file (emit -t ompi-rules for it)")
        return out
    warnings = check_mpich(doc, path)
    collectives = []

    def collect(node):
        for key, _, child in node.items:
            ckey = key.replace(" ", "")
            if ckey.startswith("collective=") and ckey[len("collective="):] not in collectives:
                collectives.append(ckey[len("collective="):])
            if isinstance(child, JObject) and not ckey.startswith(("algorithm=", "composition=")):
                collect(child)

    collect(doc)
    missing = [c for c in MPICH_HARNESS_COLLECTIVES if c not in collectives]
    if missing:
        warnings.append(f"{path}: no selection for {', '.join(missing)}: MPICH aborts on the first such call, "
                        f"so a program (and verify's rules check) using them fails (emit with --mpich-base)")
    return RulesFile(path, kind, "mpich", collectives, warnings=warnings, _data=doc)
