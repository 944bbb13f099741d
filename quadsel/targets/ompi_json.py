"""Open MPI JSON rules (rule_file_version 3; Open MPI main / 6.x): writer and reader side by side.

Inclusive [min, max] ranges, the first match wins, "inf" open ends; no match: the fixed decision.
Open MPI 5.0.x does not read this format (rules_file.RulesFile.ignored says so).
"""

import json
from dataclasses import dataclass
from typing import List, Optional

from ..errors import InputError, QuadselError
from ..inputs import INT64_MAX, shorten
from ..libraries import openmpi
from ..json_lines import JArray, JObject
from .ompi_rules import INF, INT_MAX
from .layout_rules import layout_rules


# The order of a forest's entries: Open MPI takes the first whose distribution and comm range hold.
DISTRIBUTIONS = ("single-node", "one-per-node", "any")


def _blocks(fn):
    """[(comm_rank_distribution or None, RuleList)]: Open MPI's layout level is the rank distribution. Without
    the layout key one entry for every distribution; with it single-node (1 node: ppn = comm size, exact),
    one-per-node (ppn 1: the first layer, exact), any (several nodes with several ranks on some: the packed
    multi-node layout, layout_rules.py)."""
    rules = layout_rules(fn, openmpi.NAME)
    if not rules.has_layout:
        return [(None, rules.collapsed())]
    return [("single-node", rules.collapsed(1)), ("one-per-node", rules.layers[0][1]), ("any", rules.collapsed(2))]


def document(fns, max_requests=None):
    collectives = {}
    for fn in fns:
        openmpi.collective_id(fn.collective)
        if fn.collective.lower() in collectives:
            raise QuadselError(f"two trees for collective {fn.collective!r}: give one tree per collective")
        entries = []
        for distribution, rl in _blocks(fn):
            for lo, hi, msgs in rl.ranges():
                rules = []
                for m_lo, m_hi, method in msgs:
                    alg = openmpi.algorithm_id(rl.collective, method.algorithm)
                    rule = {"msg_size_min": m_lo, "msg_size_max": "inf" if m_hi is None else m_hi, "alg": alg}
                    if openmpi.faninout(rl.collective, alg):
                        rule["faninout"] = openmpi.faninout(rl.collective, alg)
                    if method.segsize:
                        rule["seg_size"] = int(method.segsize)
                    if max_requests:
                        rule["reqs"] = int(max_requests)
                    rules.append(rule)
                entry = {"comm_size_min": lo, "comm_size_max": "inf" if hi is None else hi}
                if distribution:
                    entry["comm_rank_distribution"] = distribution
                entries.append(dict(entry, rules=rules))
        collectives[fn.collective.lower()] = entries
    return {"rule_file_version": 3, "module": "tuned", "collectives": collectives}


def emit(fns, max_requests=None):
    """Open MPI JSON rules (rule_file_version 3): inclusive min/max ranges, first match wins, "inf" open ends."""
    return json.dumps(document(fns, max_requests), indent=1) + "\n"


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
        if not -INT64_MAX - 1 <= value <= INT64_MAX:
            raise InputError(path, line, f"{what} {key!r} {shorten(value)} is beyond a 64-bit integer")
        return value
    if isinstance(value, str) and value[:3] in ("inf", "Inf", "INF"):
        return INF
    raise InputError(path, line, f"{what} {key!r} must be an integer or \"inf\", not {json.dumps(value)} "
                                 f"(Open MPI ignores the whole file)")


def _json_alg(collective, value, line, path, warnings):
    known = openmpi.ALGORITHMS.get(collective)
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


def read(doc, path):
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
        if name not in openmpi.COLLECTIVE_IDS:
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


def lookup(comms, comm_size, msg_size, one_node=True, layout=None, disjoint_set=True):
    """The JsonMsgRule Open MPI applies, or None (its fixed decision). `layout` = (nodes, most ranks on one node)
    of the communicator; without it, one node (`one_node`) or several of unknown shape. Open MPI main
    (coll_tuned_dynamic_rules.c): the first entry whose distribution and comm range hold; "single-node" holds
    when every rank is local, "one-per-node" when the communicator is flagged disjoint (at most one rank per
    node; the flag is set when a communicator is created from another, not on MPI_COMM_WORLD: disjoint_set)."""
    if layout is not None:
        single, disjoint = layout[0] == 1, layout[1] == 1 and disjoint_set
    else:
        single, disjoint = one_node, (comm_size == 1 or not one_node) and disjoint_set
    for comm in comms:
        if comm.distribution == "one-per-node" and not disjoint:
            continue
        if comm.distribution == "single-node" and not single:
            continue
        if comm.lo <= comm_size <= comm.hi:
            for rule in comm.rules:
                if rule.alg is not None and rule.lo <= msg_size <= rule.hi:
                    return rule
            return None
    return None
