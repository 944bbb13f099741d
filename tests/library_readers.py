"""Independent readers of the emitted files, each following the library's documented matching rule.

They share no code with quadsel.targets on purpose: a test compares what these readers
answer with DecisionFunction.query, so a bug in the rule list cannot hide itself.

quadsel.targets.rules_file (what `quadsel verify RULES` reads) is a separate, stricter implementation of the same
matching, written apart from these on purpose: this module stays the test oracle, never the code under test.
tests/targets/test_rules_file.py checks that both answer alike on emitted files.
"""

import json
import re

INF = float("inf")


# -- Open MPI classic rules file (coll_tuned_dynamic_file.c, 5.0.x matching) ----------------------------------
class OmpiClassicRules:
    """{collective id: [(comm_size, [(msg_size, alg, faninout, segsize, maxreq)])]} as Open MPI reads it."""

    def __init__(self, text):
        self.version = 1
        if text.startswith("rule-file-version-"):
            first, _, text = text.partition("\n")
            self.version = int(first[len("rule-file-version-"):])
        # '#' starts a comment to the end of the line; what remains is whitespace-separated integers
        tokens = [t for line in text.splitlines() for t in line.split("#", 1)[0].split()]
        for t in tokens:
            if not re.fullmatch(r"-?[1-9][0-9]*|0", t):   # Open MPI scans %li: a leading 0 would mean octal
                raise ValueError(f"token {t!r} is not a plain decimal integer")
        values = iter(int(t) for t in tokens)
        per_rule = 5 if self.version == 2 else 4
        self.collectives = {}
        for _ in range(next(values)):
            coll = next(values)
            comms = []
            for _ in range(next(values)):
                comm, n = next(values), next(values)
                rules = []
                for _ in range(n):
                    rule = [next(values) for _ in range(per_rule)]
                    rules.append(tuple(rule) + ((0,) if per_rule == 4 else ()))
                comms.append((comm, rules))
            self.collectives[coll] = comms
        if next(values, None) is not None:
            raise ValueError("trailing tokens after the last collective")

    @property
    def ignored(self):
        """Open MPI drops the whole file (silently) when a first message rule is not for size 0."""
        return any(rules and rules[0][0] != 0 for comms in self.collectives.values() for _, rules in comms)

    def lookup(self, coll, comm_size, msg_size):
        """(alg, faninout, segsize, maxreq): largest comm key <= comm_size (else the first), then largest msg key."""
        comms = self.collectives[coll]
        chosen = comms[0]
        for entry in comms:
            if entry[0] <= comm_size:
                chosen = entry
        best = None
        for rule in chosen[1]:
            if rule[0] <= msg_size:
                best = rule
        return None if best is None else best[1:]


# -- Open MPI JSON rules (rule_file_version 3): inclusive ranges, first match wins ---------------------------
def _bound(value):
    return INF if isinstance(value, str) and value.lower().startswith("inf") else value


class OmpiJsonRules:
    def __init__(self, text):
        doc = json.loads(text)
        assert doc["rule_file_version"] == 3 and doc["module"] == "tuned"
        self.collectives = doc["collectives"]

    def lookup(self, coll, comm_size, msg_size):
        for comm in self.collectives[coll]:
            if _bound(comm.get("comm_size_min", 0)) <= comm_size <= _bound(comm.get("comm_size_max", INF)):
                for rule in comm["rules"]:
                    if _bound(rule.get("msg_size_min", 0)) <= msg_size <= _bound(rule.get("msg_size_max", INF)):
                        return rule["alg"], rule.get("faninout", 0), rule.get("seg_size", 0), rule.get("reqs", 0)
                return None
        return None


# -- MPICH csel JSON: sibling keys tried in order, first match wins, `=any` catches all ------------------------
class MpichSelection:
    """Models a call on one node (a communicator of 2+ ranks is a parent of its node communicator), with a
    built-in, commutative operation and a count >= the communicator's power of two."""

    def __init__(self, text):
        self.doc = json.loads(text)

    @staticmethod
    def _matches(key, coll, comm_size, msg_size):
        name, op, value = re.match(r"^([a-z_]+)(<=|<|=)(.*)$", key).groups()
        if value == "any":
            return True
        if name == "collective":
            return value == coll
        if name == "comm_type":
            return value == "intra"
        if name in ("is_op_built_in", "is_commutative"):
            return value == "yes"
        if name == "comm_hierarchy":   # one node: MPICH makes a communicator of 2+ ranks a parent of a node comm
            return value == "parent" and comm_size > 1
        if name == "count" and value == "pow2":
            return False   # "count<pow2": the modelled count is large
        if name in ("comm_size", "avg_msg_size", "total_msg_size"):   # msg_size: the key the test computed
            x = comm_size if name == "comm_size" else msg_size
            if value == "pow2":
                return x > 0 and x & (x - 1) == 0
            return x <= int(value) if op == "<=" else x < int(value)
        raise ValueError(f"reader does not know key {key!r}")

    def lookup(self, coll, comm_size, msg_size):
        """(algorithm container name, {parameter: value}) chosen for an intra-communicator."""
        node = self.doc
        while True:
            for key, child in node.items():
                if key.startswith("algorithm="):
                    params = dict(k.split("=", 1) for k in child)
                    return key[len("algorithm="):], params
                if self._matches(key, coll, comm_size, msg_size):
                    node = child
                    break
            else:
                return None
