"""Open MPI coll/han's dynamic rules file (coll_han_dynamic_rules_filename): writer, reader and the decision it makes.

coll/han (priority 35, above tuned's 30) takes every communicator that spans several nodes for the collectives
it implements (5.0.x: HAN_5_0; main / 6.x also alltoall(v), gatherv, scatterv) and disqualifies itself on a
communicator of one node or one rank, which coll/tuned keeps. Its file (read as Open MPI 5.0.x reads it,
ompi/mca/coll/han/coll_han_dynamic_file.c) nests, each list preceded by its count:

    collective (name or id) -> level (intra_node | inter_node | global_communicator, or 0 | 1 | 2)
      -> configuration size (the communicator size at that level: ranks per node, nodes, or the whole size)
        -> message size (bytes per rank: datatype size x count) -> component (self basic libnbc tuned sm adapt
           han; `han @ALGORITHM` at the global level)

Every size is a lower bound: the last entry (in file order) whose size is <= the call's applies, and so for the
collective and the level. Open MPI drops the whole file (and uses its MCA defaults: han at the global level,
tuned below) when the first configuration size of a level is not 1 or its first message size is above 1, or on
any word it cannot read.

What quadsel writes (docs/formats-output.md, "coll/han"): HAN cannot name a coll/tuned algorithm, so the file
routes each multi-node call to the component that runs the tree's choice: `tuned` where the tree names a tuned
algorithm (tuned's own rules file, `-t ompi-rules` of the same trees, then picks it), `han` (HAN's own
hierarchical algorithm, Open MPI's default across nodes) where the tree hands the size back to the library.
A layout forest is collapsed to its packed layouts exactly as the tuned file is (layout_rules.py), so the two
files agree at every communicator size; `quadsel tune` across hosts writes one pair per ranks-per-node instead,
each from the forest's member for that ppn (tune/hosts.py). Only the global level is written: the intra_node and
inter_node levels keep Open MPI's MCA defaults, so that where the file says `han` coll/han runs exactly as without
the file (its default, which `quadsel measure` timed as the library's default across nodes).
"""

import re
from dataclasses import dataclass
from typing import List, Optional

from ..errors import InputError, QuadselError
from ..inputs import INT64_MAX
from ..libraries.base import DEFAULT_ALGORITHM
from ..libraries.openmpi import HAN_5_0, HAN_MAIN   # which collectives coll/han takes: the Open MPI class's facts
from .escape import comment_text
from .rule_list import header_lines

LEVELS = ("intra_node", "inter_node", "global_communicator")
COMPONENTS = ("self", "basic", "libnbc", "tuned", "sm", "adapt", "han")
HAN_ALGORITHMS = {"barrier": ("default", "simple"), "bcast": ("default", "intra", "simple"),
                  "reduce": ("default", "intra", "simple", "reproducible"),
                  "allreduce": ("default", "intra", "simple", "reproducible"),
                  "scatter": ("default", "intra", "simple"), "gather": ("default", "intra", "simple"),
                  "allgather": ("default", "intra", "simple")}
# ompi/mca/coll/base/coll_base_functions.h COLLTYPE_T: the ids a file may give instead of the names
COLLTYPES = ("allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", "alltoallw", "barrier", "bcast",
             "exscan", "gather", "gatherv", "reduce", "reduce_scatter", "reduce_scatter_block", "scan", "scatter",
             "scatterv", "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv",
             "neighbor_alltoallw")
USE = ("OMPI_MCA_coll_han_use_dynamic_file_rules=1 OMPI_MCA_coll_han_dynamic_rules_filename=THIS_FILE "
       "OMPI_MCA_coll_tuned_use_dynamic_rules=1 OMPI_MCA_coll_tuned_dynamic_rules_filename=TUNED_FILE")


# -- writer -----------------------------------------------------------------------------------------------------
def component_of(method):
    """The HAN component that runs a tree's method on a multi-node communicator."""
    return "han" if method.algorithm == DEFAULT_ALGORITHM else "tuned"


def global_rules(fn):
    """[(configuration size, [(message size, component)])] of the global level: lower bounds, the first 1 and 0."""
    from .layout_rules import layout_rules
    rl = layout_rules(fn).collapsed()
    out = []
    for comm in rl.comm_rules:
        msgs = []
        for rule in comm.msg_rules:
            component = component_of(rule.method)
            if not msgs or msgs[-1][1] != component:
                msgs.append((0 if not msgs else rule.msg_size, component))
        if not out or out[-1][1] != msgs:
            out.append((1 if not out else comm.comm_size, msgs))
    return out


def emit(fns, max_requests=None):
    """coll/han's dynamic rules file for the trees or layout forests `fns` (one per collective)."""
    from .layout_rules import library_lists
    if max_requests is not None:
        raise QuadselError("--max-requests applies to the tuned file (-t ompi-rules), not to coll/han's")
    lists, layout_lines = library_lists(fns, "openmpi")
    for fn in fns:
        if fn.collective not in HAN_MAIN:
            raise QuadselError(f"coll/han does not decide {comment_text(fn.collective)} (it does {', '.join(HAN_MAIN)}; "
                               f"5.0.x: {', '.join(HAN_5_0)}): coll/tuned alone runs it, so -t ompi-rules is its file")
    lines = ["# Open MPI coll/han dynamic rules (coll_han_dynamic_rules_filename), read by Open MPI 5.0.x and main.",
             *(f"# {line}" for line in header_lines(lists, "openmpi")),
             "# coll/han takes the communicators that span several nodes; it cannot name a coll/tuned algorithm, so",
             "# this file hands each multi-node call to `tuned`, whose rules file (quadsel codegen -t ompi-rules of the",
             "# same trees) picks the tree's algorithm, or to `han` (Open MPI's own choice across nodes) where the tree",
             "# hands the size back to the library. Communicators of one node never reach coll/han: tuned decides them.",
             "# Message sizes here are bytes per rank (datatype size x count); the tuned file keys the gather-type",
             "# collectives on the total. Every size is a lower bound; the first of a level must be 1, then 0.",
             "# Only the global level is given: coll/han's steps inside and across nodes keep Open MPI's defaults.",
             *(f"# {comment_text(line)}" for line in layout_lines),
             f"# Use: {USE}",
             f"{len(fns)} # number of collectives"]
    for fn in fns:
        if fn.collective not in HAN_5_0:
            lines.append(f"# {fn.collective}: Open MPI 5.0.x reads these rules but does not use them (main does)")
        rules = global_rules(fn)
        lines += [f"{fn.collective} # collective", "1 # number of levels",
                  "global_communicator # configuration size = the communicator's size",
                  f"{len(rules)} # number of configuration sizes"]
        for size, msgs in rules:
            lines.append(f"{size} {len(msgs)} # configuration size {size}, number of message sizes")
            lines += [f"{msg} {component}" for msg, component in msgs]
    return "\n".join(lines) + "\n"


# -- reader ------------------------------------------------------------------------------------------------------
@dataclass
class HanMsgRule:
    msg: int
    component: str
    algorithm: Optional[str]
    line: int


@dataclass
class HanConfRule:
    size: int
    rules: List[HanMsgRule]
    line: int


@dataclass
class HanFile:
    collectives: list          # [(collective, {level: [HanConfRule]})] in file order (later entries win)
    ignored: Optional[str]     # why Open MPI drops the whole file ("line: reason"), or None
    warnings: list


_DECIMAL = re.compile(r"0|[1-9][0-9]*")


def _tokens(text, path):
    out = []
    for number, raw in enumerate(text.split("\n"), start=1):
        for match in re.finditer(r"\S+", raw):
            word = match.group()
            if word.startswith("#"):
                break
            if "#" in word:
                raise InputError(path, number, f"{word!r}: a comment must follow a blank (Open MPI reads '#' inside "
                                               "a word as part of it)")
            out.append((word, number))
    return out


class _Dropped(Exception):
    pass


def read(text, path):
    """The HanFile of `text`, read as Open MPI 5.0.x reads it. Words that are no plain decimal where a number
    is due are an InputError (Open MPI skips their characters silently); what makes Open MPI drop the whole file
    is `ignored`."""
    tokens, at, warnings = _tokens(text, path), [0], []

    def take(what):
        if at[0] >= len(tokens):
            raise _Dropped(f"{tokens[-1][1] if tokens else 1}: the file ends where {what} was expected")
        at[0] += 1
        return tokens[at[0] - 1]

    def number(what, minimum=0):
        word, line = take(what)
        if not _DECIMAL.fullmatch(word):
            raise InputError(path, line, f"{word!r} is not a plain decimal integer ({what}; Open MPI would skip "
                                         "its characters and misread the rest of the file)")
        if int(word) > INT64_MAX:
            raise InputError(path, line, f"{word} is beyond {INT64_MAX}")
        if int(word) < minimum:
            raise _Dropped(f"{line}: {what} {word} must be at least {minimum}")
        return int(word), line

    collectives = []
    try:
        count, _ = number("the number of collectives", 1)
        for _ in range(count):
            word, line = take("a collective")
            name = word if word in COLLTYPES else (COLLTYPES[int(word)] if _DECIMAL.fullmatch(word)
                                                     and int(word) < len(COLLTYPES) else None)
            if name is None:
                raise _Dropped(f"{line}: unknown collective {word!r}")
            if name not in HAN_5_0:
                warnings.append(f"{path}:{line}: coll/han 5.0.x does not use rules for {name}")
            levels = {}
            n_levels, _ = number(f"the number of levels of {name}")
            for _ in range(n_levels):
                word, line = take("a level")
                level = word if word in LEVELS else (LEVELS[int(word)] if word in ("0", "1", "2") else None)
                if level is None:
                    raise _Dropped(f"{line}: unknown level {word!r} (intra_node, inter_node, global_communicator)")
                confs = []
                n_conf, _ = number(f"the number of configuration sizes of {name} {level}")
                for k in range(n_conf):
                    size, line = number(f"a configuration size of {name} {level}", 1)
                    if k == 0 and size > 1:
                        raise _Dropped(f"{line}: the first configuration size of {name} {level} is {size}, not 1")
                    rules = []
                    n_msg, _ = number(f"the number of message sizes of {name} {level} size {size}")
                    for j in range(n_msg):
                        msg, line = number(f"a message size of {name} {level} size {size}")
                        if j == 0 and msg > 1:
                            raise _Dropped(f"{line}: the first message size of {name} {level} size {size} is {msg}, "
                                           "not 0")
                        component, cline = take("a component")
                        if component not in COMPONENTS:
                            raise _Dropped(f"{cline}: unknown component {component!r} ({', '.join(COMPONENTS)})")
                        algorithm = None
                        if component == "han" and at[0] < len(tokens) and tokens[at[0]][0].startswith("@"):
                            word, aline = take("an algorithm")
                            algorithm = word[1:] or take("an algorithm")[0]
                            known = HAN_ALGORITHMS.get(name, ("default",))
                            if algorithm not in known and not (_DECIMAL.fullmatch(algorithm)
                                                               and int(algorithm) < len(known)):
                                raise _Dropped(f"{aline}: coll/han has no {name} algorithm {algorithm!r}")
                        if component == "han" and level != "global_communicator":
                            warnings.append(f"{path}:{cline}: han only runs at the global level")
                        if rules and msg < rules[-1].msg:
                            warnings.append(f"{path}:{line}: message sizes do not increase")
                        rules.append(HanMsgRule(msg, component, algorithm, line))
                    if confs and size < confs[-1].size:
                        warnings.append(f"{path}:{line}: configuration sizes do not increase")
                    confs.append(HanConfRule(size, rules, line))
                levels[level] = confs
            collectives.append((name, levels))
    except _Dropped as why:
        return HanFile([], f"{path}:{why}: Open MPI drops the whole file and uses its MCA defaults", warnings)
    if at[0] < len(tokens):
        warnings.append(f"{path}:{tokens[at[0]][1]}: words after the last collective (Open MPI ignores them)")
    return HanFile(collectives, None, warnings)


def lookup(han, collective, level, size, msg):
    """The HanMsgRule coll/han applies (get_dynamic_rule: the last entry of each kind that holds), or None (its
    MCA default: han at the global level, tuned below)."""
    for name, levels in reversed(han.collectives):
        if name == collective:
            confs = levels.get(level)   # a level given twice: the later one (dict order keeps the last)
            if not confs:
                return None
            conf = next((c for c in reversed(confs) if c.size <= size), None)
            if conf is None:
                return None
            return next((r for r in reversed(conf.rules) if r.msg <= msg), None)
    return None


def decide(han, tuned_comms, collective, nodes, comm, msg, tuned_key):
    """What Open MPI 5.0.x runs for a call of `msg` bytes per rank on `comm` ranks over `nodes` nodes, given the HanFile and
    the classic tuned rules of the collective (ompi_rules.read's list): ("tuned", ClassicMsgRule or None = tuned's
    fixed decision) or (component, han algorithm)."""
    from .ompi_rules import lookup as tuned_lookup
    if nodes == 1 or comm == 1 or collective not in HAN_5_0:
        return "tuned", tuned_lookup(tuned_comms, comm, tuned_key)
    rule = None if han.ignored else lookup(han, collective, "global_communicator", comm, msg)
    component = rule.component if rule else "han"
    if component == "tuned":
        return "tuned", tuned_lookup(tuned_comms, comm, tuned_key)
    return component, (rule.algorithm if rule else None)
