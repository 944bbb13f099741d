"""Intel MPI's `I_MPI_ADJUST_<COLL>` strings: the writer (`emit`) and the reader `quadsel verify` uses.

One line per collective, ready for a shell (`. tuned.env`, or `export` in a job script):

    export I_MPI_ADJUST_ALLREDUCE='8:0-1023;1:1024-2147483647'

Each rule is `preset:msgmin-msgmax` or `preset:msgmin-msgmax@npmin-npmax`, both ranges inclusive (Intel's
Developer Reference, "I_MPI_ADJUST Family"). Intel MPI 2021.18.1 follows message ranges alone and process ranges
alone but not the two combined (adjust_value), so the writer emits the tree's measured range
(rule_list.inside_rule_list: the default the tree hands back outside it cannot be named) as message ranges when
its rules do not change with the communicator size there, as process ranges when they change with it only, and
refuses a tree that changes with both: its file is the JSON tuning file (impi_json.py, `-t impi-json`).
Every (comm size, message size) is covered by exactly one rule (the first comm range from 1, open ends written
as 2147483647: Intel MPI 2021.18 drops the whole variable, silently, when a bound is 2^31 or more). Message
sizes are Intel's key (libraries/sizes.py, INTELMPI: the call's buffer, count x type size, for bcast, reduce
and allreduce).

Reader: first matching rule wins, as documented. A call no rule matches runs the *last* rule (observed on
2021.18.1 for every unmatched string tried, docs/deploy.md); quadsel's own strings leave no call unmatched.
Preset 0 is Intel's basic selection logic, not the library default (which also reads the tuning file):
a tree region whose method is the library default is written as 0 with a comment saying so.
"""

import re
import shlex
from dataclasses import dataclass
from typing import List, Optional, Tuple

from ..errors import InputError, QuadselError
from ..inputs import INT_MAX, fits, shorten, text_lines
from ..libraries import DEFAULT_ALGORITHM, intelmpi, sizes
from .escape import comment_text
from .library_call import DEFAULT_PICK, Pick
from .layout_rules import layout_rules
from .rule_list import header_lines

MAX_VALUE = intelmpi.MAX_VALUE
_LINE = re.compile(r"^\s*(?:export\s+)?I_MPI_ADJUST_([A-Z_]+)\s*=\s*(.*?)\s*$")
_RANGE = re.compile(r"^([0-9]+)(?:-([0-9]+))?$")


def message_size(collective, nbytes, comm_size=1):
    """Intel MPI's message size of a call of `nbytes` bytes per rank (libraries/sizes.py, INTELMPI)."""
    return sizes.library_size(intelmpi.NAME, collective, nbytes, comm_size)


# -- writer ------------------------------------------------------------------------------------------------
def preset_of(collective, method):
    """(preset id, note or None) of a tree method for I_MPI_ADJUST_<COLL>."""
    if method.algorithm == DEFAULT_ALGORITHM:
        return 0, ("preset 0 (Intel's basic selection logic) stands where the tree keeps the library default, "
                   "which I_MPI_ADJUST cannot name")
    if int(method.segsize or 0):
        raise QuadselError(f"{collective} method {comment_text(method.label)!r} has a segment size: Intel MPI "
                           "presets have none (build the tree from Intel MPI measurements)")
    label = intelmpi.canonical_label(collective, method.algorithm)
    if label is None:
        raise QuadselError(f"algorithm {comment_text(method.algorithm)!r} is not an Intel MPI {collective} preset "
                           f"(known: {', '.join(f'{k}={v}' for k, v in intelmpi.ALGORITHMS.get(collective, {}).items())})")
    return int(label), None


# Intel MPI 2021.18.1 (impi-rt) was seen to honour message ranges alone ("8:0-1023;3:1024-2147483647") and
# process ranges alone, but not the two combined: with `@` in every rule, the last rule of a process range runs
# at every message size -- Intel's own example "2:0-1024@1-16;5:1025-65536@1-16" runs preset 5 at 8 bytes
# (4 ranks, reduction-order fingerprint; docs/deploy.md). So the writer emits message ranges alone where the
# tree's rules do not change with the communicator size inside its measured range, process ranges alone (each
# over every message size) where no communicator size's rules change with the message size, and refuses
# otherwise, naming the JSON tuning file (impi_json.py), which expresses both.
def adjust_value(rule_list):
    """The value of I_MPI_ADJUST_<COLL> for one RuleList (rule_list.inside_rule_list), and the notes it needs."""
    rules, notes = [], []        # rule_list.notes: in the header already
    ranges = [r for r in rule_list.ranges() if r[0] <= MAX_VALUE]
    if len(ranges) > 1 and any(len(msgs) > 1 for _, _, msgs in ranges):
        sizes_ = ", ".join(str(lo) for lo, _, _ in ranges[1:6]) + (" ..." if len(ranges) > 6 else "")
        raise QuadselError(f"the {rule_list.collective} tree's message-size rules change with the communicator size "
                           f"inside its measured range (from comm size {sizes_}), and Intel MPI 2021.x ignores the "
                           "message part of I_MPI_ADJUST rules that also name process counts: emit -t impi-json "
                           "(the JSON tuning file, I_MPI_TUNING) instead")
    for comm_lo, comm_hi, msgs in ranges:
        np_hi = MAX_VALUE if comm_hi is None else min(comm_hi, MAX_VALUE)
        for lo, hi, method in msgs:
            hi = MAX_VALUE if hi is None else min(hi, MAX_VALUE)   # keys already Intel's (rule_lists)
            if lo > MAX_VALUE:
                notes.append(f"{rule_list.collective}: messages above {MAX_VALUE} bytes cannot be written; "
                             "Intel MPI runs the last rule there")
                continue
            preset, note = preset_of(rule_list.collective, method)
            if note and note not in notes:
                notes.append(note)
            # message ranges alone, or process ranges alone (over every message size): both honoured
            rules.append(f"{preset}:{lo}-{hi}" + (f"@{comm_lo}-{np_hi}" if len(ranges) > 1 else ""))
    return ";".join(rules), notes


def emit(fns, max_requests=None):
    lists, seen = [], set()
    for fn in fns:      # the measured range only: I_MPI_ADJUST cannot name the default the tree hands back
        if fn.collective in seen:
            raise QuadselError(f"two trees for collective {comment_text(fn.collective)!r}: give one tree per collective")
        seen.add(fn.collective)
        lists.append(layout_rules(fn, intelmpi.NAME, inside=True).layers[0][1])   # one layer: emit() refuses more
    out = [f"# {line}" for line in header_lines(lists, "intelmpi")]
    out.append("# Intel MPI: source this file (or copy the exports) before mpiexec; I_MPI_ADJUST_<COLL> is read "
               "at MPI_Init")
    for rl in lists:
        if not re.match(r"^[a-z_]+$", rl.collective):
            raise QuadselError(f"collective {comment_text(rl.collective)!r} has no I_MPI_ADJUST variable")
        value, notes = adjust_value(rl)
        out += [f"# note: {comment_text(n)}" for n in notes]
        out.append(f"export {intelmpi.adjust_var(rl.collective)}={shlex.quote(value)}")
    return "\n".join(out) + "\n"


# -- reader ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AdjustRule:
    preset: int
    msg: Tuple[int, Optional[int]]        # inclusive; None = no limit
    comm: Tuple[int, Optional[int]]
    line: int

    def matches(self, comm, msg):
        return (self.msg[0] <= msg and (self.msg[1] is None or msg <= self.msg[1]) and
                self.comm[0] <= comm and (self.comm[1] is None or comm <= self.comm[1]))


def _bounds(text, path, line, what):
    match = _RANGE.match(text.strip())
    if not match:
        raise InputError(path, line, f"{what} {text.strip()[:40]!r} is not N or N-M")
    if not all(fits(g, MAX_VALUE) for g in match.groups() if g is not None):
        raise InputError(path, line, f"{what} {shorten(text.strip())} is above {MAX_VALUE}: Intel MPI ignores the "
                                     "whole variable")
    lo, hi = int(match.group(1)), int(match.group(2)) if match.group(2) is not None else int(match.group(1))
    if lo > hi:
        raise InputError(path, line, f"{what} {lo}-{hi}: the lower end is above the upper end")
    if hi > MAX_VALUE:
        raise InputError(path, line, f"{what} {hi} is above {MAX_VALUE}: Intel MPI ignores the whole variable")
    return lo, hi


def parse_value(value, path, line):
    """[AdjustRule] of one I_MPI_ADJUST value ("2:0-1024@1-16;5:1025-65536@1-16", or a bare preset "3")."""
    rules = []
    for item in value.split(";"):
        item = item.strip()
        if not item:
            continue
        preset, _, conditions = item.partition(":")
        preset = preset.strip()
        if not (preset.isascii() and preset.isdigit()):       # '²'.isdigit() is True, int('²') fails
            raise InputError(path, line, f"preset {preset[:20]!r} is not a number")
        if not fits(preset, INT_MAX):
            raise InputError(path, line, f"preset {shorten(preset)} is beyond {INT_MAX}")
        conds = [c for c in conditions.split(",") if c.strip()] or ["0-" + str(MAX_VALUE)]
        for cond in conds:
            msg_text, at, comm_text = cond.partition("@")
            msg = _bounds(msg_text, path, line, "message size")
            comm = _bounds(comm_text, path, line, "process count") if at else (0, None)
            rules.append(AdjustRule(int(preset), msg, comm, line))
    return rules


def read(text, path):
    """{collective: [AdjustRule]} of a file of I_MPI_ADJUST_<COLL> assignments (comments and blank lines allowed)."""
    out = {}
    for number, raw in enumerate(text_lines(text), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _LINE.match(stripped)
        if not match:
            raise InputError(path, number, "not an I_MPI_ADJUST_<COLL>=VALUE line")
        collective, value = match.group(1).lower(), match.group(2)
        try:
            parts = shlex.split(value)
        except ValueError as exc:
            raise InputError(path, number, f"unbalanced quotes ({exc})") from None
        if len(parts) != 1:
            raise InputError(path, number, "the value must be one word (quote it)")
        if collective in out:
            raise InputError(path, number, f"I_MPI_ADJUST_{collective.upper()} is set twice")
        out[collective] = parse_value(parts[0], path, number)
    if not out:
        raise InputError(path, None, "no I_MPI_ADJUST_<COLL> line")
    return out


def environment(rules_text, path):
    """{variable: value} the launch of a program using the file gets (what `. FILE` exports)."""
    env = {}
    for number, raw in enumerate(text_lines(rules_text), start=1):
        match = _LINE.match(raw.strip()) if raw.strip() and not raw.strip().startswith("#") else None
        if match:
            env[f"I_MPI_ADJUST_{match.group(1)}"] = shlex.split(match.group(2))[0]
    return env


def lookup(rules: List[AdjustRule], comm, msg):
    """The rule Intel MPI applies (first match; none: the last rule), or None without rules."""
    for rule in rules:
        if rule.matches(comm, msg):
            return rule
    return rules[-1] if rules else None


def pick(path, collective, rules, comm, msg):
    rule = lookup(rules, comm, message_size(collective, msg, comm))
    if rule is None:
        return DEFAULT_PICK
    return Pick(str(rule.preset), 0, (), f"{path}:{rule.line}")


def looks_like(text):
    """Is `text` a file of I_MPI_ADJUST assignments (first meaningful line)?"""
    for raw in text_lines(text):
        line = raw.strip()
        if line and not line.startswith("#"):
            return bool(_LINE.match(line))
    return False
