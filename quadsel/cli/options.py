"""Options shared by the commands and what they turn into: measurement files, tree building, sizes."""

import os

import click

from .echo import say
from .types import FloatRange
from ..errors import QuadselError, one_line
from ..inputs import BUILD_OPTION_MAX
from .group import MESSAGE_LIMIT

PAD_MODES = ("spread", "edge")            # decision.padding.PAD_MODES (not imported: numpy at start-up)
LEAF_RULES = ("majority", "penalty")      # decision.quadtree.LEAF_RULES


# --library NAME: the MPI library the measurement files come from (build, report, measure --replay).


def _library(ctx, param, value):
    if value is not None:
        from ..libraries import library_name
        ctx.meta["quadsel.library"] = library_name(value)
    return value


def library_option():
    """--library NAME: the MPI library the measurement files come from (stored in ctx.meta for the reader)."""
    return click.option("--library", "input_library", metavar="NAME", expose_value=False, callback=_library,
                        help="MPI library of the files (openmpi, mpich, intelmpi, or any other name), over what a "
                             ".meta.json or the algorithm names say. Another library's numeric ids stay its own ids: "
                             "the C returns them, and other libraries' rules files refuse the tree.")


def input_library():
    """The --library of the running command, or None."""
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get("quadsel.library") if ctx is not None else None


def _layout(ctx, param, value):
    """--layout NODESxPPN -> its Layout in ctx.meta for the reader (docs/formats-input.md, The layout)."""
    if value is not None:
        from ..layout import Layout
        try:
            ctx.meta["quadsel.layout"] = Layout.parse(value, "--layout")
        except QuadselError as exc:
            raise click.BadParameter(str(exc).split(": ", 1)[1]) from None
    return value


def input_layout():
    """The --layout (nodes, ppn) of the running command, or None."""
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get("quadsel.layout") if ctx is not None else None


def _parse_column_map(values):
    """--map FIELD=COLUMN pairs; the ingest layer checks the field names."""
    mapping = {}
    for item in values:
        field, sep, column = item.partition("=")
        if not sep or not field.strip() or not column:
            raise QuadselError(f"--map expects FIELD=COLUMN, got {item!r}")
        mapping[field.strip()] = column
    return mapping


def _no_input_format(ctx, param, value):
    if value is not None:
        raise QuadselError("--format names an output format in every quadsel command; the format of the "
                           "measurement files is --input-format")


def ingest_options(command, format_alias=True):
    """The options of every command that reads measurement files (`format_alias`: the command has no output
    format, and `--format` gets a one-line pointer to --input-format instead of a usage error)."""
    from ..ingest import FORMATS
    names = ("--input-format", "fmt")
    options = [
        *([click.option("--format", "old_format", hidden=True, expose_value=False, callback=_no_input_format)]
          if format_alias else []),
        click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False)),
        click.option("--collective", "-c", help="Collective to use (bcast, reduce, ...); needed when the files do not say it or hold several."),
        click.option(*names, type=click.Choice(FORMATS), default="auto", show_default=True,
                     help="Input format; auto detects each file by its content."),
        click.option("--comm-size", type=click.IntRange(min=1), help="Communicator size of OSU files (which do not record it)."),
        click.option("--map", "column_map", multiple=True, metavar="FIELD=COLUMN",
                     help="CSV: read FIELD (collective, algorithm, segsize, comm_size, msg_size, time, stddev, reps, "
                          "nodes, ppn) from COLUMN. Repeatable."),
        library_option(),
        click.option("--layout", metavar="NODESxPPN", expose_value=False, callback=_layout,
                     help="The layout of every row whose file has no nodes/ppn columns (nodes x ranks per node, e.g. "
                          "4x8; its communicator size must be their product). Layouts are never pooled: build makes "
                          "one tree per ppn."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def paper_tree_options(command):
    """--pad and --leaf-rule of the paper's trees (report's paper rows)."""
    options = [
        click.option("--pad", "pad_mode", type=click.Choice(PAD_MODES), default="spread", show_default=True,
                     help="Paper's trees: padding to 2^k x 2^k, copies spread evenly or the last row/column "
                          "repeated (edge)."),
        click.option("--leaf-rule", type=click.Choice(LEAF_RULES), default="majority", show_default=True,
                     help="Paper's trees: method of a restricted leaf, the block's majority (the paper) or the "
                          "method with the least penalty over the block."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _max_leaves(value):
    text = str(value).strip().lower()
    if text in ("auto", "none"):
        return text
    if text.isdigit() and 1 <= int(text) <= BUILD_OPTION_MAX:
        return int(text)
    raise click.BadParameter(f"expected a number of leaves from 1 to {BUILD_OPTION_MAX} (what a tree file records), "
                             f"`auto` or `none`, not {one_line(value, 40)!r}")


def _tolerance(value):
    text = str(value).strip().lower()
    if text == "ci":
        return text
    try:
        number = float(text)
    except ValueError:
        number = -1.0
    if not 0.0 <= number <= 1000.0:
        raise click.BadParameter(f"expected a percentage between 0 and 1000 or `ci`, not {value!r}")
    return number


def tree_options(command):
    """How `quadsel build` builds: the default (docs/methodology.md) or the paper's, and every constraint."""
    options = [
        click.option("--paper", is_flag=True,
                     help="The paper's tree: midpoint splits of the padded map, floor between sizes, majority "
                          "leaves, exact unless --max-depth/--threshold (other options still apply)."),
        click.option("--split", type=click.Choice(("measured", "midpoint")), default="measured", show_default=True,
                     help="Where a node cuts: at measured sizes, chosen to lose the least penalty; or at the "
                          "midpoint of the padded 2^k x 2^k map (the paper)."),
        click.option("--between", type=click.Choice(("least-bad", "floor")), default="least-bad",
                     show_default=True,
                     help="A size between two measured sizes gets the method least bad at both (its own decision), "
                          "or the lower size's decision (floor, the paper)."),
        click.option("--max-leaves", callback=lambda ctx, param, value: _max_leaves(value), default="auto",
                     show_default=True, metavar="N|auto|none",
                     help="Leaf budget of the deployed tree (--split measured), grown best-first; it includes the "
                          "leaves (up to 6) that hand the sizes outside the measured range back to the "
                          "library unless --extrapolate; auto: the budget with the least "
                          "penalty on held-out sizes; none: no budget (the exact tree unless --max-depth or "
                          "--threshold). auto becomes none when --max-depth or --threshold is given."),
        click.option("--max-depth", type=click.IntRange(0, BUILD_OPTION_MAX),
                     help="Maximum quadtree depth (root = 0)."),
        click.option("--threshold", type=FloatRange(0.0, 1.0, min_open=True),
                     help="Accuracy threshold: a block becomes a leaf when one method is the best at this share of "
                          "its cells."),
        click.option("--leaf-rule", type=click.Choice(LEAF_RULES[::-1]), default="penalty", show_default=True,
                     help="Method of a leaf: the least penalty over its cells, or the majority (the paper)."),
        click.option("--tolerance", callback=lambda ctx, param, value: _tolerance(value), default="ci",
                     show_default=True, metavar="PERCENT|ci",
                     help="Penalties up to PERCENT count as ties when building (smaller trees on noisy data); ci: "
                          "a method within two standard errors of the best (stddev and reps of the data) is a tie "
                          "where the tree cuts, and each leaf takes the method of least measured penalty. Reports "
                          "still score the real penalty."),
        click.option("--pad", "pad_mode", type=click.Choice(PAD_MODES), default="spread", show_default=True,
                     help="--split midpoint: copies spread evenly, or the last row/column repeated (edge)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def library_default_options(command):
    """Where `quadsel build` hands sizes back to the library's own choice (decision/library_default.py)."""
    command = click.option("--extrapolate", is_flag=True,
                           help="Sizes outside the measured range take the nearest measured size's decision (the "
                                "paper's boundary expansion) on every side; default: each side (below/above the "
                                "communicator and the message sizes) is handed back to the library (algorithm 0, "
                                "MPICH auto, 0 from the C) or extrapolated, whichever lost less on the held-out "
                                "folds' sizes beyond their range (all handed back without a measured default).")(
        command)
    command = click.option("--bound-extrapolation", is_flag=True,
                           help="Try each side the folds extrapolate two measured steps out (a tree trained without "
                                "the axis' two end sizes, scored at the outer one): where it loses to the library "
                                "default there, extrapolate it one step past the measured range and hand the sizes "
                                "beyond back. Off by default: on 14 data sets the bounded sides lost held out "
                                "(docs/methodology.md, Extrapolating up to a bound).")(command)
    return click.option("--keep-default/--no-keep-default", default=None,
                        help="When the measurements hold the library default: it is one more method, winning every "
                             "tie, so a region whose method does not beat it beyond the noise gets it. Neither "
                             "flag: kept by every build (docs/methodology.md) but --paper's (the paper's "
                             "algorithm-only set) and Intel MPI's (I_MPI_ADJUST cannot name its default).")(command)


def build_settings(ctx, paper, split, between, max_leaves, max_depth, threshold, leaf_rule, tolerance, pad_mode):
    """The keyword arguments of build_decision_function from the build options (--paper sets the paper's
    defaults; options given on the command line win)."""
    given = lambda name: ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE  # noqa: E731
    if paper:
        from ..decision.options import PAPER_BUILD
        split = split if given("split") else PAPER_BUILD["split"]
        between = between if given("between") else PAPER_BUILD["between"]
        leaf_rule = leaf_rule if given("leaf_rule") else PAPER_BUILD["leaf_rule"]
        max_leaves = max_leaves if given("max_leaves") else "none"
        tolerance = tolerance if given("tolerance") else PAPER_BUILD["tolerance"]
    if max_leaves == "auto" and not given("max_leaves") and (max_depth is not None or threshold is not None):
        max_leaves = "none"
    if split == "midpoint" and max_leaves != "none":
        if given("max_leaves"):
            raise QuadselError("--max-leaves needs --split measured (the paper's midpoint tree has no leaf budget)")
        max_leaves = "none"
    return {"split": split, "between": between, "max_leaves": None if max_leaves == "none" else max_leaves,
            "max_depth": max_depth, "accuracy_threshold": threshold or 1.0, "leaf_rule": leaf_rule,
            "tolerance": tolerance, "pad_mode": pad_mode}


def load_decision_map(files, collective, fmt, comm_size, column_map):
    from ..decision.decision_map import build_decision_map
    rows = load_measurements(files, collective, fmt, comm_size, column_map)
    dmap = build_decision_map(rows, collective)
    echo_notes(rows)
    return dmap


def load_measurements(files, collective, fmt, comm_size, column_map):
    """The ingest table of FILES under the command's ingest options (--library, --layout included)."""
    from ..ingest import read_measurements
    return read_measurements(list(files), fmt=fmt, collective=collective, comm_size=comm_size,
                             column_map=_parse_column_map(column_map), library=input_library(), columns=True,
                             layout=input_layout())


def echo_notes(rows):
    for note in rows.notes:   # identity notes and warnings (docs/formats-input.md, Identity); after any error
        say(one_line(note, MESSAGE_LIMIT), err=True)


def file_identity(path, output):
    """Where a tree's data came from: the file relative to the tree file's folder (stdout: the current folder),
    so that the two can move together, and its SHA-256."""
    import hashlib
    from ..inputs import read_bytes
    base = os.path.dirname(os.path.abspath(output)) if output not in (None, "-") else os.getcwd()
    return {"path": os.path.relpath(os.path.abspath(path), base),
            "sha256": hashlib.sha256(read_bytes(path)).hexdigest()}


def model_options(command):
    """--model FORM and the grid it predicts (build)."""
    from ..models import MODEL_FORMS
    options = [
        click.option("--model", type=click.Choice(MODEL_FORMS), default=None,
                     help="Build from a sparse measurement: fit each method's model (hockney: quadsel's "
                          "Hockney-style form; paper: Nuriyev et al.'s form for the Open MPI bcast algorithms it "
                          "models, hockney for the others), predict the grid where it was not measured, build the "
                          "tree from that map. Predicted points are marked and never scored."),
        click.option("--predict-comm-sizes", metavar="LIST", default=None,
                     help="--model: communicator sizes of the predicted map, e.g. 2-256:pow2. Default: the grid in "
                          "the FILE's .meta.json (quadsel measure), else the measured sizes."),
        click.option("--predict-msg-sizes", metavar="LIST", default=None,
                     help="--model: message sizes of the predicted map, e.g. 1-1M:pow2 (default as above)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def model_grid(files, model, comm_sizes, msg_sizes):
    """(comm sizes, msg sizes) the model predicts (None: the measured sizes): the options, else the grid the
    one measured FILE's metadata records (`quadsel measure` writes NAME.meta.json beside it)."""
    from ..ingest.metadata import recorded_grid
    from ..measure.grid import parse_list
    if not model:
        if comm_sizes or msg_sizes:
            raise QuadselError("--predict-comm-sizes and --predict-msg-sizes need --model")
        return None, None
    recorded = recorded_grid(files[0]) if len(files) == 1 else {}
    comm = parse_list(comm_sizes, "communicator size") if comm_sizes else recorded.get("comm_sizes")
    msg = parse_list(msg_sizes, "message size") if msg_sizes else recorded.get("msg_sizes")
    if comm is not None and min(comm) < 1:
        raise QuadselError("--predict-comm-sizes: communicator sizes must be at least 1")
    return comm, msg


def recorded_libmpi(files):
    """{"libmpi": path} when the metadata `measure` wrote beside every input records the same libmpi, else {}."""
    from ..ingest.metadata import read_meta
    found = set()
    for f in files:
        try:
            meta = read_meta(f) or {}
        except QuadselError:
            return {}
        if not isinstance(meta.get("libmpi"), str) or not meta["libmpi"]:
            return {}
        found.add(meta["libmpi"])
    return {"libmpi": found.pop()} if len(found) == 1 else {}


def default_mpich_base(fns, trees):
    """The libmpi `measure` recorded for the trees' MPICH measurements (their provenance), when it is there: MPICH's
    own selection, embedded in it, is kept for the other collectives (said in one line). None otherwise."""
    paths = {fn.provenance.get("libmpi") for fn in fns}
    if len(paths) != 1 or not isinstance(next(iter(paths)), str):
        return None
    path = paths.pop()
    if not os.path.isfile(path):
        say(f"note: {one_line(trees[0])} was measured with {one_line(path)}, which is no longer there", err=True)
        return None
    say(f"note: --mpich-base {one_line(path)} (the libmpi `measure` recorded): MPICH's own selection is kept "
               f"for the other collectives", err=True)
    return path


def require_matplotlib(option):
    """One line, exit status 2, before any work or folder, when `option` (--figures, --timemap) lacks matplotlib."""
    from ..errors import missing_extra
    try:
        import matplotlib  # noqa: F401 (only whether it is there)
        import matplotlib.pyplot  # noqa: F401
    except ImportError:
        raise missing_extra(option, "matplotlib", "figures") from None

