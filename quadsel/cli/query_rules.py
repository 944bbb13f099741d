"""`quadsel query RULES`: what the MPI library runs when it loads a rules file, read as it reads it.

The readers beside the writers in targets/ (targets/rules_file.py detects the format: Open MPI classic
rules v1/v2, Open MPI JSON rules, MPICH selection JSON, Intel MPI I_MPI_ADJUST strings) are the ones
`quadsel verify` uses to know what the library will do with a file; query answers from them, so the check
before deploying is the library's reading of the file, not the tree's.
"""

import json
import shlex

from .echo import say
from ..errors import QuadselError, escaped
from ..output import write_text


def query_rules(path, text, collective, pairs, as_json, output):
    """Answer every (comm, msg) of `pairs` from the rules file at `path` (its `text`)."""
    from ..targets.rules_file import FORMAT_NAMES, read_rules_file
    rules = read_rules_file(path, text)
    if not rules.collectives:
        raise QuadselError(f"{path}: a {FORMAT_NAMES[rules.format]} file with no collective")
    if collective is None:
        if len(rules.collectives) > 1:
            raise QuadselError(f"{path} has rules for {', '.join(rules.collectives)}: say which with -c/--collective")
        collective = rules.collectives[0]
    elif collective not in rules.collectives:
        raise QuadselError(f"{path} has no rules for {collective} (it has {', '.join(rules.collectives)})")
    for line in rules.warnings:
        say(f"warning: {line}", err=True)
    if rules.ignored:
        say(f"note: {rules.ignored}: every answer is the library default", err=True)
    from ..libraries import algorithm_name
    lines, defaults = [], 0
    for comm, msg in pairs:
        pick = rules.pick(collective, comm, msg)
        defaults += pick.is_default
        # the id's name, as a tree's query prints it ("6" is another algorithm for each collective)
        name = algorithm_name(rules.library, collective, pick.label) or pick.label
        if as_json:
            lines.append(json.dumps({"collective": collective, "comm_size": comm, "msg_size": msg,
                                     "algorithm": pick.label, "algorithm_name": name, "segsize": int(pick.segsize),
                                     "params": {k: v for k, v in pick.params}, "rule": pick.rule or None,
                                     "library": rules.library, "format": rules.format}))
        else:
            answer = f"{shlex.quote(escaped(pick.label))} {pick.segsize} {shlex.quote(escaped(name))}"
            lines.append(answer if len(pairs) == 1 else f"{comm} {msg} {answer}")
    write_text(output, "\n".join(lines) + "\n")
    if defaults and not rules.ignored:
        say(f"note: {defaults} of {len(pairs)} queries are left to the library's own selection (`default 0`): "
                   f"no {collective} rule matches there, or the rule says so", err=True)
