"""The commands build, codegen, report and verify (query: query.py; measure: measure.py): each parses its
options, calls the pipeline (heavy imports inside the command) and writes its output through quadsel.output."""

import functools
import json
import os
import shlex

import click

from .echo import say
from .types import FloatRange, MPIEXEC_ARGS, RANKS
from ..errors import QuadselError, missing_extra, one_line
from ..libraries import CLASSES
from ..output import check as check_output, make_folder, write_text, write_together
from .group import main
from ..verify.verdict import MIN_GAIN
from .options import (build_settings, default_mpich_base, echo_notes, file_identity, ingest_options,
                      library_default_options, load_decision_map, load_measurements, model_grid, model_options,
                      paper_tree_options, recorded_libmpi, require_matplotlib, tree_options)


@main.command()
@ingest_options
@tree_options
@library_default_options
@click.option("-o", "--output", type=click.Path(), metavar="FILE",
              help="Tree file to write (- for stdout). Default COLLECTIVE.qt.json, which is never replaced: give -o "
                   "to replace a file.")
@click.option("--json", "as_json", is_flag=True,
              help="Also print the tree's size and penalty as a JSON object on stdout (not with -o -).")
@model_options
@click.pass_context
def build(ctx, files, collective, fmt, comm_size, column_map, paper, split, between, max_leaves, max_depth, threshold,
          leaf_rule, tolerance, pad_mode, keep_default, extrapolate, bound_extrapolation, output, as_json, model,
          predict_comm_sizes, predict_msg_sizes):
    """Build a quadtree decision function from measurement FILES.

    By default the tree a user should deploy (docs/methodology.md, chosen by held-out penalty): cuts at
    measured sizes, its own decision between measured sizes, least-penalty leaves, and the leaf budget that
    holds up best on sizes left out of the build (on a small grid, where those cannot tell sizes apart, the
    measured points decide). --paper builds the paper's tree instead. The mean and worst penalty of the tree
    on FILES are printed on stderr, and one warning line when it loses more than 25 % at a measured point.

    --model FORM builds from a sparse measurement (e.g. `measure --sample model`): each method's model is
    fitted on its points, the grid is predicted where it was not measured, and the tree is built from that
    map; predicted points are marked in the tree file and never scored (docs/methodology.md, *Model-based
    build*).
    """
    from ..pipeline.build import build as build_function, decision_maps
    default_file = output is None
    if not default_file:
        check_output(output, inputs=files)   # before the work: an unusable -o fails at once (quadsel.output)
    if as_json and output == "-":
        raise QuadselError("--json prints on stdout, where -o - writes the tree: give -o FILE")
    if bound_extrapolation and (extrapolate or paper):
        raise QuadselError("--bound-extrapolation bounds the sides the folds extrapolate: it does not combine with "
                           + ("--extrapolate" if extrapolate else "--paper"))
    grid = model_grid(files, model, predict_comm_sizes, predict_msg_sizes)
    rows = load_measurements(files, collective, fmt, comm_size, column_map)
    maps = decision_maps(rows, collective)
    if not maps.layered:
        echo_notes(rows)
    if default_file:
        output = f"{maps.collective}.qt.json"
        if os.path.lexists(output):
            raise QuadselError(f"{output} exists and is not replaced without -o: give -o {output} to replace it")
        check_output(output)
    settings = build_settings(ctx, paper, split, between, max_leaves, max_depth, threshold, leaf_rule, tolerance,
                              pad_mode)
    provenance = {"sources": [os.path.basename(f) for f in files], "inputs": [file_identity(f, output) for f in files]}
    if not maps.layered:
        provenance.update(recorded_libmpi(files))
    if keep_default is None:    # neither flag: the held-out folds decide (the paper's tree: not kept)
        keep_default = False if paper else "auto"
    built = build_function(maps, settings, keep_default, "extrapolate" if extrapolate else "auto", provenance,
                           (model, *grid) if model else None, bound_outside=bound_extrapolation)
    fn, score = built.fn, built.score
    text = fn.dumps()
    _readable_tree(text)
    if maps.layered:
        echo_notes(rows)
    write_text(output, text, exclusive=default_file)   # exclusive: two builds in one folder never both win
    say(_build_line(built) + (f"; wrote {output}" if output != "-" else ""), err=True)
    for warning in built.warnings:
        say(warning, err=True)
    from ..ingest.replaced import replaced_note
    note = replaced_note(files, maps.collective, extra=built.maps.replaced)
    if note:
        say(f"note: {note}", err=True)
    if as_json:
        say(json.dumps(_build_summary(built, output)))


def _build_line(built):
    """What build prints of the function it built: its maps, its size, its penalty on the measured points."""
    fn, maps, score = built.fn, built.maps, built.score
    scored = (f"penalty on the measured points: mean {score.mean:.2f} %, max {score.max:.2f} % ({score.points} "
              f"points, {score.charged} charged, {score.unscored} unscored)")
    if maps.layered:
        layouts = sum(len(layer.nodes) for layer in fn.layers)
        methods = len(set().union(*(d.methods for d in maps.maps.values())))
        return (f"{fn.collective}: {layouts} layouts ({len(maps.maps)} ppn: {', '.join(map(str, maps.maps))}), "
                f"{methods} methods; layout forest of {len(fn.layers)} trees: {fn.leaf_line()}; {scored}")
    dmap, tree, stats = maps.maps[None], fn.size_tree, fn.stats()
    predicted = (f"; {int(dmap.predicted.sum())} points predicted by the {tree.provenance['model']['form']} model "
                 "(never scored)") if dmap.predicted is not None else ""
    return (f"{dmap.collective}: {dmap.shape[0]} comm sizes x {dmap.shape[1]} msg sizes, {len(dmap.methods)} methods; "
            f"{tree.constraint} tree: {stats['leaves']} leaves"
            + (f" (the paper's padded tree: {stats['paper']['leaves']})" if "paper" in stats else "") + ", "
            f"{stats['nodes']} nodes, depth {stats['depth_min']}-{stats['depth_max']}; {scored}{predicted}")


def _build_summary(built, output):
    """build --json: the function's size and its penalty."""
    fn, score = built.fn, built.score
    if built.maps.layered:
        return {"collective": fn.collective, "tree": output, "format": "quadsel-layout-forest", **fn.stats(),
                "penalty_mean": score.mean, "penalty_max": score.max, "points": score.points,
                "charged": score.charged, "unscored": score.unscored}
    tree = fn.size_tree
    summary = {"collective": fn.collective, "tree": output, "constraint": tree.constraint,
               "builder": tree.options.to_json(), **fn.stats()}
    summary.update(score.to_json())
    dmap = built.maps.maps[None]
    if dmap.predicted is not None:
        summary.update(model=tree.provenance["model"]["form"], predicted_points=int(dmap.predicted.sum()))
    return summary


def _readable_tree(text):
    """Never write a tree file that quadsel's own loader would refuse (a grid beyond its cell limit, ...)."""
    from ..decision.decision_function import DecisionFunction
    try:
        DecisionFunction.from_json(json.loads(text), "the tree built", text)
    except QuadselError as exc:
        raise QuadselError(f"not written: {exc} (quadsel's own loader would refuse the file)") from None


@main.command()
@click.argument("trees", metavar="TREE...", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-t", "--target", type=click.Choice(["c", "blob", "ompi-rules", "ompi-json", "ompi-han", "mpich-json",
                                                  "impi-adjust", "impi-json", "env-script"]), default="c",
              show_default=True, help="What to generate: C source, a loadable binary blob (for templates/quadsel_blob.c), "
                                      "Open MPI classic rules file, Open MPI JSON rules, Open MPI coll/han dynamic rules (with the ompi-rules file "
                                      "of the same trees), MPICH csel JSON, Intel MPI I_MPI_ADJUST strings, Intel MPI JSON tuning file (I_MPI_TUNING), "
                                      "a job-environment script exporting the I_MPI_ADJUST strings of the job's layout (env-script).")
@click.option("--flavor", type=click.Choice(["plain", "table", "ompi-tuned"]), default="plain", show_default=True,
              help="C only: plain if/else-if function; table = the same function as a table searched at run "
                   "time (§3.3: the tree's regions as a grid, each size's band found branch-free; the node table "
                   "when the grid would be too large); ompi-tuned = coll/tuned's fixed decision calling <coll>_intra_do_this.")
@click.option("--no-merge", is_flag=True,
              help="If/else-if C: the paper's form (one `if` per quadrant, nothing merged) instead of the merged one.")
@click.option("--order", type=click.Choice(["expected", "tree"]), default=None,
              help="Merged if/else-if C: the tests in the order with the fewest expected tests per random query "
                   "(expected, the default; sizes half uniform, half log-uniform over the measured range) or in the "
                   "quadtree's own order (tree).")
@click.option("--library", type=click.Choice([cls.name for cls in CLASSES]),
              help="c (plain, table) and blob: return this library's own algorithm ids (Open MPI coll/tuned ids; "
                   "MPICH's MPIR_CVAR_<COLL>_INTRA_ALGORITHM values; Intel MPI I_MPI_ADJUST presets) instead of "
                   "quadsel's numbering. The tree's own library (from its measurements) is the default; another one "
                   "is an error.")
@click.option("--runtime", "runtime_dir", type=click.Path(file_okay=False),
              help="blob: also write the C loader (quadsel_blob.h, quadsel_blob.c) into this directory.")
@click.option("-o", "--output", default="-", show_default=True, type=click.Path(), metavar="FILE", help="File to write (- for stdout).")
@click.option("--name", help="C function name (default quadsel_COLLECTIVE_decision; ompi-tuned: ompi_coll_tuned_COLLECTIVE_intra_dec_fixed).")
@click.option("--max-requests", type=click.IntRange(0, 2 ** 31 - 1),
              help="ompi-rules: write rules file version 2 with this MAXREQUESTS on every rule; ompi-json: `reqs`.")
@click.option("--mpich-base", metavar="FILE|LIBMPI|none",
              help="mpich-json: MPICH's own selection (its tuning JSON, or the libmpi.so that embeds it) to keep for the "
                   "other collectives; `none` writes only the given collectives (MPICH then aborts on any other one). "
                   "Default: the libmpi `measure` recorded for the trees' measurements, when it is still there.")
@click.option("--verified", metavar="RESULT.json", multiple=True, type=click.Path(dir_okay=False),
              help="Prune: hand back to the library default every point this `verify --json` result found "
                   "significantly slower than the default (and the sizes between it and its measured neighbours); "
                   "repeatable: the points any of the results found slower.")
@click.option("--ppn", type=click.IntRange(1, 2 ** 31 - 1), default=None,
              help="A layout forest's member for PPN ranks per node, as a 2-D tree: for a target without a ppn key, "
                   "deployed by the job script for its ppn (docs/cluster.md). After --verified pruning.")
def codegen(trees, target, flavor, no_merge, order, library, runtime_dir, output, name, max_requests, mpich_base, verified,
            ppn):
    """Generate the decision function of TREE files as C source, a loadable blob, or a rules file an MPI library reads.

    `c` (one TREE): `int NAME(int comm_size, size_t msg_size, int *segsize)` as if/else-if (§3.2; merged:
    each cut tested once, same-method quadrants and subtrees merged, the tests in the order with the fewest
    expected tests on random queries unless `--order tree`), returning the algorithm id and writing
    the segment size through `segsize` when not NULL; with `--flavor table` the same function as a table
    searched at run time (§3.3: grid table, or the node table when the grid would be too large), with `--flavor ompi-tuned` Open MPI's
    `ompi_coll_tuned_<coll>_intra_dec_fixed` instead. `blob` (one TREE): the node table as a versioned binary
    file that templates/quadsel_blob.c loads, checks and queries (docs/formats-tree.md). The rules-file
    targets take one TREE per collective and agree with `quadsel query` at every size (docs/formats-output.md).
    `env-script` (trees or layout forests, one per collective): a POSIX sh file to source in a job script; it
    exports the I_MPI_ADJUST_<COLL> strings of the forest member the job's ppn selects (QUADSEL_PPN, or
    QUADSEL_NODES with QUADSEL_NP, or Slurm's SLURM_NTASKS_PER_NODE / SLURM_TASKS_PER_NODE; none known: the
    last member, said on stderr).
    """
    from ..targets import emit
    if runtime_dir is not None and target != "blob":
        raise QuadselError("--runtime applies to --target blob only")
    check_output(output, inputs=list(trees) + list(verified) + ([mpich_base] if mpich_base not in (None, "none") else []))
    if runtime_dir is not None:
        make_folder(runtime_dir, create=False)   # fails before the blob is written
    from ..decision.decision_function import DecisionFunction
    fns = [DecisionFunction.load(tree) for tree in trees]
    if verified:   # a layout forest: each member by the result's points of its layouts (verify/prune.py)
        from ..verify.prune import prune_all
        for result in verified:
            fns = prune_all(fns, result, echo=lambda text: say(text, err=True))
    if ppn is not None:   # the layer a job of this ppn runs (decision_function.py's query rule)
        if not any(fn.has_layout for fn in fns):
            raise QuadselError("--ppn picks a layout forest's member: no TREE is a layout forest")
        fns = [fn.at_ppn(ppn) for fn in fns]
    base = None
    if target == "mpich-json":
        if mpich_base is None:
            mpich_base = default_mpich_base(fns, trees)
        if mpich_base is None:
            raise QuadselError("mpich-json needs --mpich-base: MPICH replaces its whole selection with the file and "
                               "aborts on collectives it does not cover (give MPICH's tuning JSON or libmpi.so, or `none`)")
        if mpich_base != "none":
            from ..targets.mpich_json import load_base
            base = load_base(mpich_base)
    from ..targets.method_ids import check_tree
    try:
        result = emit(target, fns, flavor=flavor, name=name, max_requests=max_requests, mpich_base=base,
                      merge=not no_merge, library=library, order=order)
    finally:   # ids per collective, named by tree file:line (exit 2); option errors come first
        for fn, tree in zip(fns, trees):
            for size_tree in fn.size_trees:
                check_tree(size_tree, tree, target, flavor, library)
    outputs = [(output, result if isinstance(result, bytes) else result.encode("utf-8"))]
    if runtime_dir is not None:
        from ..targets.blob import runtime_sources
        outputs += [(os.path.join(runtime_dir, filename), text.encode("utf-8"))
                    for filename, text in runtime_sources().items()]
    # All or nothing (a full disk leaves neither the blob nor the runtime folder); the folder itself is made,
    # never missing parents (docs/conventions.md).
    write_together(outputs, folder=runtime_dir)
    from ..targets import conversion_notes
    for note in conversion_notes(target, fns):
        say(note, err=True)
    if output != "-":
        say(_written_line(target, flavor, output, fns, trees), err=True)


# what each output is, for the line codegen prints after writing it
_WRITTEN = {"c": "C source", "blob": "a loadable blob (templates/quadsel_blob.c reads it)",
            "ompi-rules": "Open MPI's classic rules file", "ompi-json": "Open MPI's JSON rules",
            "ompi-han": "coll/han's rules file", "mpich-json": "MPICH's selection JSON",
            "impi-adjust": "Intel MPI's I_MPI_ADJUST strings", "impi-json": "Intel MPI's JSON tuning file",
            "env-script": "a job-environment script"}


def _written_line(target, flavor, output, fns, trees):
    """One line after codegen wrote its output: what it is, of which collectives, and what to run next."""
    what = _WRITTEN[target] + (f" ({flavor} flavour)" if target == "c" and flavor != "plain" else "")
    collectives = ", ".join(one_line(fn.collective, 40) for fn in fns)
    shown = " ".join(shlex.quote(one_line(t, 200)) for t in trees)
    if target in ("c", "blob"):
        follow = "compile it into your code (docs/formats-tree.md)"
    else:
        follow = (f"load it as docs/deploy.md says, after checking on the real MPI that the library follows it and "
                  f"that it beats the library's default: quadsel verify {shown} --np N")
    return f"wrote {one_line(output, 200)}: {what} of {collectives}; next: {follow}"


@main.command()
@functools.partial(ingest_options, format_alias=False)
@paper_tree_options
@click.option("--format", "out_format", type=click.Choice(["md", "csv", "json"]), default="md",
              show_default=True, help="Output format of the tables.")
@click.option("--json", "as_json", is_flag=True, help="The same as --format json.")
@click.option("--thresholds", default=",".join(f"{t:g}" for t in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)),
              show_default=True, help="Accuracy thresholds of the sweep, comma separated.")
@click.option("--holdout", "holdouts", multiple=True, metavar="SPLIT",
              help="Also build on part of the data and score on the rest: msg (every other message size), "
                   "comm (every other communicator size), msg-edge (each communicator size's smallest and largest "
                   "message size), comm-edge (the smallest and largest communicator size), msg-far / comm-far "
                   "(the two smallest and two largest of each: two measured steps past the range, where the rows "
                   "also show build --bound-extrapolation) or random:FRACTION[:SEED]. Repeatable.")
@click.option("--figures", "figures_dir", type=click.Path(file_okay=False),
              help="Write the figures (PNG, needs matplotlib: quadsel[figures]) into this directory.")
@click.option("--no-compare", is_flag=True, help="The paper's quadtrees and the default only (the paper's Tables 1-2).")
@click.option("--tree", "tree_files", multiple=True, type=click.Path(dir_okay=False), metavar="TREE",
              help="Also score this tree file as it is on the measured points of FILES (e.g. a tree built on "
                   "another run). Repeatable.")
@click.option("-o", "--output", default="-", show_default=True, type=click.Path(), metavar="FILE", help="File to write (- for stdout).")
def report(files, collective, fmt, comm_size, column_map, pad_mode, leaf_rule, out_format, as_json, thresholds, holdouts,
           figures_dir, no_compare, tree_files, output):
    """Penalty table of quadtrees and comparators on FILES, optionally held-out rows and figures.

    Rows: depth-limited, exact and threshold-limited quadtrees (paper Tables 1-2); the library default
    (rows named `default` in the data); the single best method; the run-length rules table per
    communicator size; CART trees with the quadtrees' leaf budgets (needs scikit-learn: quadsel[compare]);
    a fitted analytical model. Penalty at a measured point = (T[chosen] - T[best]) / T[best] x 100 %;
    padded copies and interpolated points are never scored. docs/report.md explains every column.
    """
    from ..evaluate import report as rpt
    from ..evaluate.holdout import parse_holdout
    out_format = "json" if as_json else out_format
    check_output(output, inputs=files + tree_files)
    if figures_dir:
        require_matplotlib("--figures")       # before the work, and before the folder is made
    try:
        sweep = tuple(float(t) for t in thresholds.split(",") if t.strip())
    except ValueError:
        raise QuadselError(f"--thresholds expects comma-separated numbers, got {thresholds!r}") from None
    if any(not 0.0 < t <= 1.0 for t in sweep):
        raise QuadselError("--thresholds values must be in (0, 1]")
    splits = [parse_holdout(h) for h in holdouts]
    from ..decision.decision_function import DecisionFunction
    trees = [(os.path.basename(path), DecisionFunction.load(path)) for path in tree_files]
    if any(fn.has_layout for _, fn in trees):   # the layout key: penalty per layout (report_layouts.py)
        from .layouts import report_forest
        return report_forest(files, collective, fmt, comm_size, column_map, trees, out_format, output)
    trees = [(name, fn.size_tree) for name, fn in trees]
    dmap = load_decision_map(files, collective or (trees[0][1].collective if trees else None), fmt, comm_size,
                             column_map)
    result = rpt.build_report(dmap, pad_mode=pad_mode, leaf_rule=leaf_rule, thresholds=sweep, holdouts=splits,
                              comparators=("default",) if no_compare else rpt.COMPARATORS, trees=trees)
    from ..ingest.replaced import replaced_note
    if replaced_note(files, dmap.collective, extra=dmap.replaced):
        result.notes.append(replaced_note(files, dmap.collective, extra=dmap.replaced))
    for name, fn in trees:   # a model-based tree: say which of its points were predicted, not measured
        model = fn.provenance.get("model") if isinstance(fn.provenance.get("model"), dict) else None
        if model:
            result.notes.append(f"{name} was built with {model.get('predicted_points')} of its points predicted by "
                                f"the {model.get('form')} model (build --model); it is scored here on the measured "
                                "points of FILES only")
    for note in result.notes:
        say(one_line(f"note: {note}"), err=True)
    links = []
    if figures_dir:
        try:
            from ..evaluate.figures import write_figures
            written = write_figures(result, figures_dir)
        except ImportError:
            raise missing_extra("--figures", "matplotlib", "figures") from None
        base = os.path.dirname(os.path.abspath(output)) if output != "-" else os.getcwd()
        links = [(caption, os.path.relpath(os.path.abspath(path), base)) for caption, path in written]
        say(f"wrote {len(written)} figures into {figures_dir}", err=True)
    if out_format == "json":
        meta = result.meta()
        meta["figures"] = [link for _, link in links]
        text = rpt.to_json(result.rows, meta)
    elif out_format == "csv":
        text = rpt.to_csv(result.rows)
    else:
        text = rpt.report_markdown(result, figure_links=links)
    write_text(output, text)
    if out_format == "md":      # a table for a person (csv and json are read by programs)
            say("next: build the tree to deploy (quadsel build FILES -o TREE), write what your library reads "
                   "(quadsel codegen TREE -t ...) and check on the real MPI that it beats the library's default "
                   "(quadsel verify TREE --np N; docs/deploy.md)", err=True)


@main.command()
@click.argument("inputs", metavar="TREE_OR_RULES...", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--np", "np_", type=RANKS, default=None,
              help="Ranks to launch (outside an MPI job); default: the job size under mpiexec.")
@click.option("--comm-sizes", metavar="LIST",
              help="Communicator sizes to verify (default: the tree's or the measurements', up to --np; "
                   "required for a rules file without --measurements).")
@click.option("--msg-sizes", metavar="LIST",
              help="Message sizes to verify (default: the tree's or the measurements'; required for a rules file "
                   "without --measurements).")
@click.option("--measurements", "measurement_files", multiple=True, type=click.Path(dir_okay=False),
              help="Measurement file(s): the `best` arm is the fastest of their per-point three best methods, "
                   "re-timed (default: of every method of the tree; a rules file has no best arm without them).")
@click.option("--rounds", type=click.IntRange(min=1), default=5, show_default=True,
              help="Interleaved rounds: each gives one paired default/selected comparison per point (the "
                   "intervals need 2 or more).")
@click.option("--confidence", type=FloatRange(min=0.5, max=0.999), default=0.95, show_default=True,
              help="Confidence level of the per-point and geometric-mean intervals.")
@click.option("--fail-on-regression", is_flag=True,
              help="Exit with status 3 when a point is significantly slower than the library default, or the "
                   "library does not follow the rules file at a checked point.")
@click.option("--min-gain", type=FloatRange(min=1.0), default=MIN_GAIN, show_default=True,
              help="Smallest geometric-mean speed-up, on the points where the selection changes the default, worth "
                   "deploying (1.05 = 5 %): DECISION is deploy only when its whole interval lies above it "
                   "(docs/deploy.md, \"The decision\").")
@click.option("--busy-ok", is_flag=True,
              help="Deploy even when the timing ran on a host busier than the job itself (other runnable tasks beside "
                   "its ranks, sampled: docs/deploy.md, \"Interference\"); without it such a gain is `unproven`.")
@click.option("--max-reps", type=click.IntRange(min=2), default=60, show_default=True, help="Timed calls per arm and point, at most.")
@click.option("--max-time", type=FloatRange(min=0, min_open=True), default=0.5, show_default=True,
              help="Seconds per arm and point, at most.")
@click.option("--check-rules/--no-check-rules", default=True, show_default=True,
              help="Also prove the library follows the rules file: the one emitted from the TREEs, or each RULES "
                   "file itself (two extra launches each; not under mpiexec).")
@click.option("--check-comm-sizes", metavar="LIST",
              help="Communicator sizes of the follow check (default: the timed ones), launched with as many ranks "
                   "as the largest: the check is no timing, so more ranks than cores do not matter to it "
                   "(docs/deploy.md: most algorithms send alike at 2 ranks).")
@click.option("--check-methods", is_flag=True,
              help="Also check one rules file per measured method (--measurements, or the trees' methods), each "
                   "selecting that method at every checked point: is every method the tree could pick followed?")
@click.option("--mpiexec", default=None, metavar="PATH", help="mpiexec for --np (default: beside python, else PATH).")
@click.option("--mpiexec-args", default=None, type=MPIEXEC_ARGS, metavar="ARGS",
              help="With --np: options passed to mpiexec before -n in every launch (hosts, launcher, network), as "
                   "`measure --mpiexec-args`, e.g. \"--host a:2,b:2\" (Open MPI) or \"-hosts a,b -ppn 2\" (Hydra).")
@click.option("--layouts", metavar="LIST", default=None,
              help="A layout forest's layouts NODESxPPN to verify, e.g. 2x1,1x2,2x2, each on communicators built "
                   "from the node groups as measure builds them (default: the forest's measured layouts).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of the table.")
@click.option("-o", "--output", default="-", show_default=True, type=click.Path(), metavar="FILE", help="File to write (- for stdout).")
def verify(inputs, np_, comm_sizes, msg_sizes, measurement_files, rounds, confidence, fail_on_regression, min_gain,
           busy_ok, max_reps, max_time, check_rules, check_comm_sizes, check_methods, mpiexec, mpiexec_args, layouts,
           as_json, output):
    """Measure on the real MPI whether a selection beats the library default: quadsel TREEs or RULES files.

    RULES: an Open MPI classic rules file (versions 1 and 2, Open MPI 5.0.x matching) or JSON rules
    (rule_file_version 3), or an MPICH selection JSON -- emitted by `quadsel codegen` or hand-written.
    At every grid point: the library default, the method the selection makes (forced through MPI_T) and
    the per-point best of the candidate methods, interleaved in one run over several rounds. Reports the
    geometric-mean speed-up over the default on the points the selection changes, the share of points within
    10 % of the best and the worst point; with --check-rules also whether the library, loading the rules file,
    runs the selected method, and which algorithm the default ran. DECISION: deploy only when the file is
    followed, no point is slower and the gain clears --min-gain; unproven when the follow check did not run
    (docs/deploy.md). A rules file the library ignores as a whole is reported and verified as the default.
    """
    from ..verify.run import VerifyOptions, run_verify
    check_output(output, inputs=inputs + measurement_files)   # before any MPI job runs
    from ..measure.allocation import launcher
    np_, mpiexec_args, _ = launcher(np_, mpiexec_args, mpiexec)    # inside a Slurm allocation: its tasks and nodes
    if np_ is not None:
        from ..measure.capacity import check_ranks
        check_ranks(np_, on_hosts=mpiexec_args is not None)
    if layouts is not None:
        from ..layout import parse_layouts
        layouts = parse_layouts(layouts)
    options = VerifyOptions(list(inputs), np_, comm_sizes, msg_sizes, measurement_files, rounds, max_reps, max_time,
                            check_rules, mpiexec, mpiexec_args, confidence, check_comm_sizes, check_methods,
                            min_gain=min_gain, layouts=layouts, busy_ok=busy_ok)
    outcome = run_verify(options, echo=lambda text: say(text, err=True))
    if outcome is None:   # a rank other than 0 inside an MPI job
        return
    write_text(output, json.dumps(outcome.document, indent=1) + "\n" if as_json else outcome.table)
    if output != "-":   # the decision line also on stderr when the report goes to a file
        say(f"DECISION: {outcome.document['statistics']['decision']}: "
                   f"{outcome.document['statistics']['reason']}", err=True)
    if outcome.failed:
        raise SystemExit(1)
    if fail_on_regression and outcome.regression:
        raise SystemExit(outcome.regression)
