"""The `query` command: the method a tree (a layout forest: --ppn/--nodes), or the MPI library loading a rules file
(query_rules.py), selects for communicator and message sizes."""

import json
import shlex

import click

from .echo import say
from ..errors import QuadselError, escaped
from ..libraries import COLLECTIVES
from ..output import check as check_output, write_text
from .group import main


def _outside(fn, comm, msg):
    """{axis: the measured size whose decision answers} for each size outside the tree's measured range."""
    out = {}
    for axis, size, values in (("comm_size", comm, fn.comm_sizes), ("msg_size", msg, fn.msg_sizes)):
        if size < values[0] or size > values[-1]:
            out[axis] = int(values[0] if size < values[0] else values[-1])
    return out


def _query_pairs(comm, msg, stdin):
    """(comm, msg) pairs: the product of --comm and --msg lists, or `COMM MSG` lines on stdin."""
    from ..inputs import INT64_MAX, INT_MAX, parse_size
    from ..measure.grid import parse_list
    if comm is not None and msg is not None:
        return _in_c_range([(c, m) for c in parse_list(comm, "--comm-sizes") for m in parse_list(msg, "--msg-sizes")])
    if comm is not None or msg is not None:
        raise QuadselError("give both --comm-sizes and --msg-sizes, or neither and `COMM MSG` pairs on stdin")
    pairs = []
    for number, line in enumerate(stdin, start=1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2 or not words[0].isdigit():
            raise QuadselError(f"<stdin>:{number}: expected `COMM MSG`, e.g. `8 4K`")
        pairs.append((int(words[0]) if len(words[0]) < 20 else INT_MAX + 1,
                      parse_size(words[1], f"<stdin>:{number}: message size")))
    if not pairs:
        raise QuadselError("no queries: give --comm-sizes and --msg-sizes, or `COMM MSG` pairs on stdin")
    return _in_c_range(pairs)


def _in_c_range(pairs):
    """The sizes the generated C takes (`int comm_size`, a 64-bit message size): beyond, the C could not be asked."""
    from ..inputs import INT64_MAX, INT_MAX
    for comm, msg in pairs:
        if not 1 <= comm <= INT_MAX:
            raise QuadselError(f"communicator size {comm} is outside 1..{INT_MAX} (a C int, as the generated C and "
                               "MPI take it)")
        if msg > INT64_MAX:
            raise QuadselError(f"message size {msg} is beyond {INT64_MAX}")
    return pairs


@main.command()
@click.argument("tree", metavar="TREE_OR_RULES", type=click.Path(dir_okay=False))
@click.option("-c", "--collective", type=click.Choice(COLLECTIVES), default=None, metavar="COLLECTIVE",
              help="A rules file's collective (needed when it has several).")
@click.option("--comm-sizes", "--comm", "comm", metavar="LIST", help="Communicator size(s): 8, 2,4,8, 2-64, 2-64:pow2.")
@click.option("--msg-sizes", "--msg", "msg", metavar="LIST",
              help="Message size(s) in bytes per rank (K, M, G suffixes): 4096, 1-1M:pow2.")
@click.option("--ppn", type=click.IntRange(1, 2 ** 31 - 1), help="Layout forest: ranks per node of the queries.")
@click.option("--nodes", type=click.IntRange(1, 2 ** 31 - 1),
              help="Layout forest: nodes of the queries (ppn = communicator size / nodes, rounded up).")
@click.option("--json", "as_json", is_flag=True, help="JSON instead of text (one object per line for several).")
@click.option("-o", "--output", default="-", show_default=True, type=click.Path(), metavar="FILE",
              help="File to write (- for stdout).")
def query(tree, collective, comm, msg, ppn, nodes, as_json, output):
    """Print the method the TREE, or the MPI library loading a RULES file, selects for communicator and message sizes.

    One query (`--comm 8 --msg 4K`) prints `ALGORITHM SEGSIZE NAME`; lists (`--comm-sizes 2-8 --msg-sizes
    1-1M:pow2`) or `COMM MSG` pairs on stdin (neither option) print `COMM MSG ALGORITHM SEGSIZE NAME` per line; NAME is
    the library's name of the algorithm id (`6 0 binomial`), the algorithm itself when it is a name. A size outside
    the measured range is answered with the library default (`default 0`), or with --extrapolate builds the nearest
    measured size's decision, and said so on stderr. A rules file (codegen's ompi-rules, ompi-json, mpich-json and
    impi-adjust targets) is answered as the library reads it (the readers `verify` uses): `default 0` where the
    file leaves the choice to the library (Open MPI's fixed decision, Intel MPI's preset 0); an MPICH file holds
    MPICH's own selection wherever it does not tune, and there the answer is what that selection picks. A layout forest (built from measurements with nodes and ppn) needs the layout
    of the queries: --ppn P, or --nodes N (docs/formats-tree.md, Layout forest).
    """
    import sys

    import numpy as np

    from ..decision.decision_function import DecisionFunction
    from ..inputs import read_text
    from ..targets.rules_file import detect_format
    check_output(output, inputs=[tree])
    if ppn is not None and nodes is not None:
        raise QuadselError("give --ppn or --nodes, not both")
    text = read_text(tree, what="tree file")
    if detect_format(text) != "tree" and "quadsel-layout-forest" not in text[:4096] and \
            not text.lstrip().startswith("["):    # JSON, but no rules file: the tree loader says what is wrong
        if ppn is not None or nodes is not None:
            raise QuadselError(f"{tree} is a rules file: --ppn and --nodes apply to a layout forest")
        from .query_rules import query_rules
        pairs = _query_pairs(comm, msg, sys.stdin if comm is None and msg is None else ())
        return query_rules(tree, text, collective, pairs, as_json, output)
    fn = DecisionFunction.load(tree)
    if collective is not None and collective != fn.collective:
        raise QuadselError(f"{tree} is a {fn.collective} tree, not {collective}")
    pairs = _query_pairs(comm, msg, sys.stdin if comm is None and msg is None else ())
    if fn.has_layout:      # its answers name the layer too
        from .layouts import query_forest, write_query
        return write_query(output, *query_forest(fn, tree, pairs, ppn, nodes, as_json))
    if ppn is not None or nodes is not None:
        raise QuadselError(f"{tree} is a 2-D tree (communicator and message size): --ppn and --nodes apply to a "
                           "layout forest")
    fn = fn.size_tree
    chosen = fn.choices(np.array([c for c, _ in pairs]), np.array([m for _, m in pairs]))
    from ..libraries import algorithm_name
    outside, lines = 0, []
    for (c, m), index in zip(pairs, chosen.tolist()):
        method, extra = fn.methods[index], _outside(fn, c, m)
        outside += bool(extra)
        # the id's name: "6" is another algorithm for each collective (none: the algorithm is a name already)
        name = algorithm_name(fn.provenance.get("library"), fn.collective, method.algorithm)
        if as_json:
            lines.append(json.dumps({"collective": fn.collective, "comm_size": c, "msg_size": m,
                                     "algorithm": method.algorithm, "algorithm_name": name or method.algorithm,
                                     "segsize": method.segsize, "outside_measured_range": extra}))
            continue
        answer = f"{shlex.quote(escaped(method.algorithm))} {method.segsize}"
        answer += f" {shlex.quote(escaped(name or method.algorithm))}"
        lines.append(answer if len(pairs) == 1 else f"{c} {m} {answer}")
    write_text(output, "\n".join(lines) + "\n")
    if outside:
        span = (f"comm sizes {fn.comm_sizes[0]}-{fn.comm_sizes[-1]}, message sizes {fn.msg_sizes[0]}-"
                f"{fn.msg_sizes[-1]}")
        if fn.options.outside == "default":      # the tree hands these sizes back (decision/library_default.py)
            from ..decision.library_default import handed_words
            words = handed_words(fn)              # only some sides, or beyond a bound (issue 39)
            say(f"note: {outside} of {len(pairs)} queries lie outside the measured range ({span}): the "
                       "library's default decides there " + (f"{words}, the nearest measured size elsewhere" if words
                                                             else "(the tree was built without --extrapolate)"),
                       err=True)
        elif len(pairs) == 1:
            used = ", ".join(f"{k.replace('_size', '')} {v}" for k, v in _outside(fn, *pairs[0]).items())
            say(f"warning: outside the measured range ({span}): answered with the decision for {used}",
                       err=True)
        else:
            say(f"warning: {outside} of {len(pairs)} queries lie outside the measured range ({span}): "
                       f"each answered with the nearest measured size's decision", err=True)
