"""Open MPI coll/tuned classic dynamic rules file (coll_tuned_dynamic_rules_filename), versions 1 and 2.

Writer (`emit`, from rule lists) and reader (`read`, `lookup`: what Open MPI 5.0.x or >= 6 runs) side by side.
Open MPI's own reader is lenient where it should not be: it skips any character that does not start a
number (so a typo shifts every later value), reads `010` as octal, and drops the *whole file silently*
when anything is wrong -- including a first message rule of a communicator size that is not for size 0.
This reader is strict instead: anything but plain decimal integers is a malformed file (InputError naming
file:line, exit 2). A well-formed file that Open MPI drops as a whole is not an error: the caller
reports it (rules_file.RulesFile.ignored).

Matching: 5.0.x takes the first comm rule, then every following one whose key <= the communicator size
until the first larger key (sorted keys: the largest key <= size, below the first key the first); within it
the message rules likewise. Open MPI >= 6 (main) reads each comm key as the exclusive upper end of a range.
"""

import re
from dataclasses import dataclass
from typing import List, Optional

from ..errors import InputError, QuadselError
from ..inputs import INT64_MAX, INT_MAX, fits, shorten  # noqa: F401 (INT_MAX: also ompi_json's)
from ..libraries import openmpi
from ..libraries.base import DEFAULT_ALGORITHM
from .library_call import Pick
from ..decision.decision_map import method_label
from ..libraries import named_label
from .escape import comment_text
from .rule_list import header_lines
from .templating import render

INF = float("inf")


def emit(fns, max_requests=None):
    """Open MPI classic dynamic rules (coll_tuned_dynamic_rules_filename); version 2 when max_requests is set.

    A layout forest is collapsed to its packed layouts (layout_rules.py; the header says so). Comm keys are
    the measured comm sizes (5.0.x: the largest key <= the comm size applies, below the
    first key the first), message keys lower bounds starting at 0: exactly the decision function's floor rule,
    in what coll/tuned matches the collective on (libraries/sizes.py: e.g. allgather x comm size).
    """
    from .layout_rules import library_lists
    collectives, (lists, layout_lines) = [], library_lists(fns, openmpi.NAME)
    for rl in lists:
        comms = []
        for comm in rl.comm_rules:
            rules = []
            for rule in comm.msg_rules:
                alg = openmpi.algorithm_id(rl.collective, rule.method.algorithm)
                # the comment names the id ("6 binomial"): "6" is another algorithm for each collective
                label = rule.method.label if not alg else \
                    named_label(openmpi.NAME, rl.collective, method_label(alg, rule.method.segsize))
                rules.append({"msg": rule.msg_size, "alg": alg, "faninout": openmpi.faninout(rl.collective, alg),
                              "seg": int(rule.method.segsize), "label": comment_text(label)})
            comms.append({"comm": comm.comm_size, "rules": rules})
        collectives.append({"name": comment_text(rl.collective), "id": openmpi.collective_id(rl.collective),
                            "comms": comms})
    if max_requests is not None and max_requests < 0:
        raise QuadselError("--max-requests must be >= 0")
    if layout_lines:      # a layout forest: what this file cannot express, and the rule it follows instead
        layout_lines = ["this file keys on the communicator size only: it cannot tell 8 ranks on 1 node from 8 nodes "
                        "x 1 (docs/formats-output.md, \"Layout forests in Open MPI's files\")"] + layout_lines
    return render("ompi_rules.txt.j2", collectives=collectives,
                  header=header_lines(lists, "openmpi") + [comment_text(line) for line in layout_lines],
                  version=2 if max_requests is not None else 1, max_requests=max_requests or 0)


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
                raise InputError(path, number, f"{shorten(word, 40)!r} is not a plain decimal integer ({why})")
            if not fits(word, INT64_MAX):
                raise InputError(path, number, f"{shorten(word)} is beyond {INT64_MAX}, the largest number Open MPI "
                                               "reads (a C long)")
            tokens.append((int(word), number, i == len(words) - 1))
    return tokens, version, len(lines)


def _classic_algorithm_ok(collective, alg):
    known = openmpi.ALGORITHMS.get(collective)
    return alg == 0 or known is None or alg in known


def read(text, path):
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
    if n_coll > openmpi.COLLCOUNT:
        raise InputError(path, line, f"{n_coll} collectives: Open MPI knows {openmpi.COLLCOUNT}")
    collectives = {}
    for _ in range(n_coll):
        coll_id, line, _ = take("a collective id")
        if coll_id >= openmpi.COLLCOUNT:
            raise InputError(path, line, f"collective id {coll_id} does not exist (0-{openmpi.COLLCOUNT - 1}; "
                                         f"bcast 7, reduce 11, allreduce 2)")
        if coll_id in collectives:
            warnings.append(f"{path}:{line}: collective id {coll_id} appears twice: Open MPI uses the later rules")
        name = openmpi.COLLECTIVE_NAMES.get(coll_id, f"collective {coll_id}")
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
                    known = ", ".join(f"{k} {v}" for k, v in openmpi.ALGORITHMS[name].items())
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


def lookup(comms, comm_size, msg_size, matching="5.0"):
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


def pick(collective, alg, faninout, segsize, maxreq, where):
    """The forcible form of an Open MPI rule's result: chain fan-out and max requests become extra cvars."""
    if alg == 0:
        return Pick(DEFAULT_ALGORITHM, 0, (), where)
    params = []
    if alg in openmpi.CHAIN_IDS.get(collective, ()) and faninout != openmpi.DEFAULT_CHAIN_FANOUT:
        params.append(("chain_fanout", int(faninout)))
    if collective == "reduce" and maxreq:
        params.append(("max_requests", int(maxreq)))
    seg = 0 if alg in openmpi.UNSEGMENTED.get(collective, ()) else int(segsize)
    return Pick(str(alg), seg, tuple(params), where)


def one_collective(text, path, coll_id):
    """The classic file `text` cut down to the rules of collective `coll_id` alone (the follow check: a nested call,
    e.g. the reduce inside reduce_scatter_block's basic_linear, then runs the library's own choice, as in the
    forced launches it is compared with). None when the file has no rules for it, or when Open MPI drops the whole
    file (the cut would be read where the file is not)."""
    version, collectives, ignored, _ = read(text, path)
    comms = collectives.get(coll_id)
    if comms is None or ignored:
        return None
    lines = ([f"rule-file-version-{version}"] if version > 1 else []) + ["1", str(coll_id), str(len(comms))]
    for comm in comms:
        lines.append(f"{comm.comm} {len(comm.rules)}")
        lines += [" ".join(str(v) for v in (r.msg, r.alg, r.faninout, r.segsize, r.maxreq) if v is not None)
                  for r in comm.rules]
    return "\n".join(lines) + "\n"
