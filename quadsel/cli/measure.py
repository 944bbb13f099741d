"""`quadsel measure`: parse options, then either self-launch under mpiexec or run the sweep."""

import os
import shlex
import sys

import click

from .echo import say
from .types import FloatRange, MPIEXEC_ARGS, RANKS
from ..errors import QuadselError, ctrl_c_says
from ..output import check as check_output
from .options import input_library, library_option
from ..libraries import COLLECTIVES
from ..measure import launch
from ..measure.grid import DATATYPES, TIMINGS, parse_list
from ..measure.output import interrupted_note
from ..pipeline.measure_job import check_job_size, with_default_sizes


@click.command("measure")
@click.argument("replay_files", nargs=-1, type=click.Path(dir_okay=False), metavar="[FILES]...")
@click.option("-c", "--collective", type=click.Choice(COLLECTIVES), required=True, help="Collective to measure.")
@click.option("-o", "--output", type=click.Path(), metavar="FILE", required=True,
              help="CSV to append to (metadata goes to NAME.meta.json beside it); - streams the CSV to stdout "
                   "(metadata as `# quadsel-meta:` comment lines in it; no resume).")
@click.option("--algorithms", metavar="LIST", default=None,
              help="Comma list of algorithms (Open MPI id or name, MPICH name, `default`). "
                   "Default: every algorithm the library offers, plus `default`.")
@click.option("--segments", metavar="LIST", default="0,1K,8K,64K", show_default=True,
              help="Segment sizes in bytes for Open MPI algorithms that segment (others: 0 only).")
@click.option("--comm-sizes", metavar="LIST", default=None,
              help="Communicator sizes, e.g. `2-8` or `2,4,8`. Default: 2 to the job size.")
@click.option("--msg-sizes", metavar="LIST", default="1-1M:pow2", show_default=True,
              help="Message sizes in bytes per rank (docs/collectives.md): list, ranges, `A-B:pow2`, K/M "
                   "suffixes; barrier: 0 only (its default).")
@click.option("--np", "np_", type=RANKS, default=None,
              help="Outside an MPI job: start `mpiexec -n NP` on this command yourself.")
@click.option("--mpiexec", default=None, metavar="PATH", help="mpiexec for --np (default: beside python, else PATH).")
@click.option("--mpiexec-args", default=None, type=MPIEXEC_ARGS, metavar="ARGS",
              help="With --np: options passed to mpiexec before -n, split like a shell (hosts, launcher, network), "
                   "e.g. \"--host a:2,b:2\" (Open MPI) or \"-hosts a,b -ppn 2\" (Hydra).")
@click.option("--layouts", metavar="LIST", default=None,
              help="Layouts NODESxPPN to measure, e.g. 2x1,1x2,2x2: each on the first NODES node groups "
                   "(MPI_COMM_TYPE_SHARED), the first PPN ranks of each. Default across hosts: nodes and ppn each "
                   "a power of two or the job's maximum; on one host: the first n ranks (no layout columns).")
@click.option("--precision", type=FloatRange(0, 1, min_open=True, max_open=True), default=0.025,
              show_default=True, help="Stop when the CI half-width is below this fraction of the mean.")
@click.option("--confidence", type=FloatRange(0, 1, min_open=True, max_open=True), default=0.95,
              show_default=True, help="Confidence level of that interval.")
@click.option("--min-reps", type=click.IntRange(min=2), default=5, show_default=True,
              help="Timed calls each method gets at a point in every round, at least.")
@click.option("--max-reps", type=click.IntRange(min=2), default=200, show_default=True,
              help="Timed calls of one method at one point, all rounds together, at most.")
@click.option("--max-time", type=FloatRange(min=0, min_open=True), default=2.0, show_default=True,
              help="Seconds of one method at one point, all rounds together, at most.")
@click.option("--fence", type=FloatRange(min=0), default=3.0, show_default=True,
              help="Drop samples slower than Q3 + FENCE*IQR before the statistics (0: keep all).")
@click.option("--warmup", type=click.IntRange(min=0), default=2, show_default=True,
              help="Untimed calls of each method at each point before timing.")
@click.option("--batch", type=click.IntRange(min=1), default=5, show_default=True,
              help="Timed calls per visit of a method before the next method's turn.")
@click.option("--rounds", type=click.IntRange(min=1), default=2, show_default=True,
              help="Passes over the whole grid; samples of all rounds are pooled (--adaptive: each point "
                   "is measured in one visit; this only describes the full sweep a share --budget means).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the shuffled visiting order.")
@click.option("--datatype", type=click.Choice(["auto"] + list(DATATYPES)), default="auto",
              show_default=True, help="auto: byte for the collectives that move data; float for reductions "
                                      "(uint8 if a size is not 4k).")
@click.option("--timing", type=click.Choice(TIMINGS), default="auto", show_default=True,
              help="span: latest end - earliest start over the ranks on the clock they share (one host "
                   "only); local: max over ranks of each rank's own call time (fooled by ranks leaving "
                   "the barrier at different times); auto: span when all ranks are on one host, else local.")
@click.option("--hang-timeout", type=FloatRange(min=0), default=300.0, show_default=True,
              help="Abort the job when no timed batch finished for this many seconds (0: never).")
@click.option("--resume/--no-resume", default=True, show_default=True,
              help="Keep the rows already in OUTPUT and measure only the missing points.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--adaptive", is_flag=True,
              help="Measure where the decision needs it: communicator sizes by bisection, methods far behind "
                   "the best not measured again until their trend closes the gap, repetitions stopped once the "
                   "ranking at a point is clear. Skipped pairs are `# skipped` lines in the CSV.")
@click.option("--budget", metavar="TIME|SHARE", default=None,
              help="With --adaptive or --sample: stop after this wall time (90m, 2h, 1h30m, 600s) or this share of "
                   "the full sweep's benchmarking time (25%; estimated in a real run, exact in a replay; --sample "
                   "takes a share only in a replay).")
@click.option("--behind", type=FloatRange(min=1, min_open=True), default=None, metavar="FACTOR",
              help="--adaptive: a method slower than FACTOR x the best is far behind.  [default: 1.3]")
@click.option("--agree", type=FloatRange(0, 1, max_open=True), default=None, metavar="FRACTION",
              help="--adaptive: communicator sizes between two measured ones are skipped when the winners of "
                   "each are within FRACTION of the best of the other at every message size.  [default: 0.05]")
@click.option("--cheap", type=FloatRange(0, 1), default=None, metavar="FRACTION",
              help="--adaptive: a method far behind is still measured where its predicted cost is below FRACTION "
                   "of the benchmarking time spent so far.  [default: 0.003]")
@click.option("--hopeless", type=FloatRange(min=1, min_open=True), default=None, metavar="FACTOR",
              help="--adaptive: a method measured twice in a row and still FACTOR x the best by its ratio is "
                   "pruned for good (no probe, no trend brings it back).  [default: 2]")
@click.option("--sample", type=click.Choice(["model"]), default=None,
              help="Measure the sparse sample a model-based build (`build --model`) predicts the grid from: every "
                   "method at the cheapest points first (comm size x (1 + msg/32K)) until --budget is spent.")
@click.option("--replay", is_flag=True,
              help="Answer measurements from the recorded full sweeps FILES (any format `build` reads) instead "
                   "of running MPI; the grid is what they record unless the grid options narrow it.")
@click.option("--alpha", "alpha", metavar="LIST", default=None,
              help="bcast: also measure quadsel's alpha-tree broadcast at these alpha values (0 = flat, 0.5 = "
                   "binomial; steps of 0.01), methods `alpha-A` (docs/alpha-tree.md). --algorithms also takes "
                   "alpha-tree names: `alpha-0.25`, `alpha-0.10-0.35`.")
@click.option("--alpha-depth", type=click.IntRange(1, 3), default=1, show_default=True,
              help="Levels of the --alpha methods: 2 = one alpha across nodes and one within a node "
                   "(every pair of the --alpha values), 3 adds sockets.")
@click.option("--alpha-levels", metavar="auto|blocks:K[,J]", default="auto", show_default=True,
              help="Where the levels of multilevel alpha-trees come from: auto = MPI_Comm_split_type (node: "
                   "MPI_COMM_TYPE_SHARED, socket: MPI_COMM_TYPE_HW_GUIDED); blocks:K[,J] = emulated nodes of "
                   "K consecutive ranks (and sockets of J).")
@click.option("--sync", type=click.Choice(["auto", "barrier", "ring", "start"]), default="auto", show_default=True,
              help="Before every timed call: MPI_Barrier; the paper's ring semi-barrier (a token from the "
                   "root around the ring, rank r from r+1 to r-1; span timing then starts at the root); or start, "
                   "every rank starting at one time of the (offset-corrected) clock. auto: start across hosts, "
                   "else barrier.")
@library_option()   # --replay: the library of the recorded FILES (cli/options.py)
@click.option("--env-method", default=None, hidden=True)   # internal: one launch per method, forced by env
def measure(replay_files, collective, output, algorithms, segments, comm_sizes, msg_sizes, np_, mpiexec, mpiexec_args,
            layouts, precision,
            confidence, min_reps, max_reps, max_time, fence, warmup, batch, rounds, seed, datatype, timing,
            hang_timeout, resume, quiet, adaptive, budget, behind, agree, cheap, hopeless, sample, replay, alpha,
            alpha_depth, alpha_levels, sync, env_method):
    """Measure the installed MPI's own collective algorithms and write the CSV `build` reads.

    Every algorithm of the library (Open MPI coll/tuned ids forced through MPI_T; MPICH algorithm
    names forced through MPIR_CVAR_*) and the library's default are timed at every communicator size
    and message size of the grid, SKaMPI style: warm-up, barrier before each call, time of a call
    taken over all ranks (--timing), repeated until the 95 % confidence interval is within --precision of the mean (or a
    budget is spent), methods visited in shuffled order, the grid repeated --rounds times.

    Run it under your launcher (sub-communicators of the first n ranks give every smaller size):

    \b
        mpiexec -n 8 quadsel measure -c bcast --comm-sizes 2-8 -o bcast.csv

    or let it start mpiexec itself (adds --oversubscribe and the run-as-root variables if needed):

    \b
        quadsel measure --np 8 -c bcast -o bcast.csv

    Rows are appended and flushed one by one; rerunning the same command after an interruption
    measures only the missing points.

    --adaptive measures where the decision needs it (docs/measure.md, *Adaptive measurement*); --sample model
    --budget TIME the sparse sample `build --model` predicts from (docs/measure.md, *Sampling for a model*);
    --replay FILES answers from recorded sweeps instead of MPI, to try a strategy without a cluster:

    \b
        quadsel measure --replay bcast_*.csv -c bcast --adaptive -o adaptive.csv
    """
    launch.exit_with_launcher()   # a rank of a killed `quadsel measure --np` ends too, releasing the output
    from ..measure import runner   # lazy: numpy (and mpi4py) only when a measurement runs
    ctx = click.get_current_context()
    if replay:
        # a replay appends rows like a measurement: say what was kept
        with ctrl_c_says(lambda: interrupted_note(output)):
            return _replay(ctx, replay_files, np_)
    if replay_files:
        raise click.UsageError(f"unexpected argument {replay_files[0]!r}: measurement files are read only "
                               "with --replay")
    if collective == "barrier" and ctx.get_parameter_source("msg_sizes") == click.core.ParameterSource.DEFAULT:
        msg_sizes = "0"    # a barrier carries no data: its one message size
    try:
        spec = _spec(collective, output, algorithms, segments, comm_sizes, msg_sizes, precision, confidence,
                     min_reps, max_reps, max_time, fence, warmup, batch, rounds, seed, datatype, timing,
                     hang_timeout, resume, quiet, env_method)
        _adaptive_options(ctx, spec)
        _alpha_options(ctx, spec)
        from ..measure.allocation import launcher
        np_, mpiexec_args, _ = launcher(np_, mpiexec_args, mpiexec)   # inside a Slurm allocation: its tasks, nodes
        ctx.params["mpiexec_args"] = mpiexec_args
        _layout_options(ctx, spec, np_)
        if np_ is not None and launch.inside_mpi_job():
            check_job_size(np_)
        elif np_ is not None:      # what this host (or the user's hosts) can start, before anything is launched
            from ..measure.capacity import check_ranks
            check_ranks(np_, on_hosts=mpiexec_args is not None)
        _check_outputs(output)   # before anything runs: no folder is created, a stream is written in place
    except (QuadselError, click.UsageError):
        if launch.inside_mpi_job() and launch.job_rank() != 0:
            sys.exit(2)      # under a launcher, one line from rank 0 is enough
        raise
    # Rows and rounds are flushed one by one: all finished ones are kept. One line, from the process the user
    # started (rank 0, or the self-launcher, which waited for its job to stop); the others end quietly.
    quiet_end = (launch.inside_mpi_job() and launch.job_rank() != 0) or os.environ.get(launch.LAUNCHED)
    with ctrl_c_says(None if quiet_end else lambda: interrupted_note(output)):
        if np_ is not None and not launch.inside_mpi_job():
            from ..pipeline.measure import MeasureFailed, measure as measure_job
            try:
                measure_job(spec, np_, mpiexec, mpiexec_args)
            except MeasureFailed as exc:
                if exc.said:
                    sys.exit(exc.code)      # the job said what went wrong itself
                raise
            return
        planned = None
        if spec.adaptive or spec.sample:   # the plan inside the job (sampling/adaptive_run.py)
            from ..sampling.adaptive_run import sweep_adaptive as planned
        runner.run(with_default_sizes(spec), planned)


def _spec(collective, output, algorithms, segments, comm_sizes, msg_sizes, precision, confidence, min_reps,
          max_reps, max_time, fence, warmup, batch, rounds, seed, datatype, timing, hang_timeout, resume, quiet,
          env_method):
    from ..measure import runner   # lazy: numpy (and mpi4py) only when a measurement runs
    return runner.Spec(
        collective=collective, output=output,
        comm_sizes=parse_list(comm_sizes, "communicator size") if comm_sizes else None,
        msg_sizes=parse_list(msg_sizes, "message size"),
        segments=parse_list(segments, "segment size"),
        algorithms=[a.strip() for a in algorithms.split(",") if a.strip()] if algorithms else None,
        datatype=datatype,
        rule=_rule(precision, confidence, min_reps, max_reps, max_time, fence),
        warmup=warmup, batch=batch, rounds=rounds, seed=seed, resume=resume, progress=not quiet, timing=timing,
        hang_timeout=hang_timeout,
        env_method=_env_method(env_method),
        command=os.environ.get("QUADSEL_MEASURE_COMMAND") or _command_line(),
    )


def _adaptive_options(ctx, spec):
    """--adaptive, --sample, --budget, --behind, --agree into the spec (errors are usage errors)."""
    params = ctx.params
    if params["sample"]:
        _sample_options(params, spec)
        return
    if not params["adaptive"]:
        for name in ("budget", "behind", "agree", "cheap", "hopeless"):
            if params[name] is not None:
                raise click.UsageError(f"--{name} needs --adaptive")
        return
    from ..sampling.adaptive import Strategy
    from ..sampling.budget import parse_budget
    defaults = Strategy()
    spec.adaptive = True
    spec.strategy = Strategy(behind=params["behind"] or defaults.behind,
                             tolerance=defaults.tolerance if params["agree"] is None else params["agree"],
                             cheap=defaults.cheap if params["cheap"] is None else params["cheap"],
                             hopeless=params["hopeless"] or defaults.hopeless)
    spec.budget = parse_budget(params["budget"]) if params["budget"] else None
    if spec.env_method is not None:
        raise QuadselError("--adaptive needs MPI_T forcing (all methods interleaved at a point); this MPI "
                           "offers only one launch per method")


def _alpha_options(ctx, spec):
    """--alpha, --alpha-depth, --alpha-levels, --sync and the α-tree names of --algorithms into the spec."""
    from ..libraries.alpha_bcast import alpha_methods, parse_levels, split_algorithms
    params = ctx.params
    values = [v.strip() for v in params["alpha"].split(",") if v.strip()] if params["alpha"] else []
    if params["alpha_depth"] != 1 and not values:
        raise click.UsageError("--alpha-depth needs --alpha")
    spec.alphas, spec.algorithms = split_algorithms(spec.collective, spec.algorithms,
                                                    alpha_methods(values, params["alpha_depth"]))
    spec.alpha_levels = parse_levels(params["alpha_levels"])
    spec.sync = params["sync"]


def _layout_options(ctx, spec, np_):
    """--layouts into the spec (its communicator sizes are the layouts' products); --mpiexec-args needs --np."""
    from ..layout import parse_layouts
    params = ctx.params
    if params["mpiexec_args"] is not None and (np_ is None or launch.inside_mpi_job()):
        raise click.UsageError("--mpiexec-args goes with --np (self-launch); under your own launcher give its "
                               "options to it")
    if params["layouts"] is None:
        return
    if params["comm_sizes"] is not None:
        raise click.UsageError("--layouts gives the communicator sizes (nodes x ppn): drop --comm-sizes")
    spec.layouts = parse_layouts(params["layouts"])
    spec.comm_sizes = sorted({a * b for a, b in spec.layouts})


def _sample_options(params, spec):
    """--sample model: a planned run like --adaptive, which it excludes; it needs a budget."""
    from ..sampling.budget import parse_budget
    if params["adaptive"]:
        raise click.UsageError("--sample and --adaptive are two different plans: give one")
    for name in ("behind", "agree", "cheap", "hopeless"):
        if params[name] is not None:
            raise click.UsageError(f"--{name} needs --adaptive")
    if params["budget"] is None:
        raise click.UsageError("--sample needs --budget (a share of the full sweep such as 25%, or a time such "
                               "as 2h): without one it measures every point")
    spec.sample = params["sample"]
    spec.budget = parse_budget(params["budget"])
    if spec.budget.share is not None and not params["replay"]:
        # the sample leaves out the expensive points that an estimate of the full sweep would extrapolate from
        raise click.UsageError("--sample on a real MPI needs a time --budget (90m, 2h): the full sweep's time is "
                               "known only to a replay, and the sample never measures the points it is spent on")
    if spec.env_method is not None:
        raise QuadselError("--sample needs MPI_T forcing (all methods of a point in one visit); this MPI "
                           "offers only one launch per method")


def _given(ctx, name):
    """Did the user pass option `name` (rather than take its default)?"""
    return ctx.get_parameter_source(name) not in (click.core.ParameterSource.DEFAULT,
                                                  click.core.ParameterSource.DEFAULT_MAP)


def _replay(ctx, files, np_):
    """--replay FILES: the same plan as a real run, answered from the recorded rows (no MPI)."""
    from ..sampling.replay import run_replay
    p = ctx.params
    if not files:
        raise click.UsageError("--replay needs the recorded FILES")
    if p["alpha"] or p["sync"] not in ("auto", "barrier"):
        raise click.UsageError("--replay answers from recorded rows: --alpha and --sync only apply to real runs "
                               "(name recorded alpha-tree methods in --algorithms)")
    if np_ is not None or p["mpiexec"]:
        raise click.UsageError("--replay runs no MPI: drop --np and --mpiexec")
    spec = _spec(p["collective"], p["output"], p["algorithms"], p["segments"], p["comm_sizes"], p["msg_sizes"],
                 p["precision"], p["confidence"], p["min_reps"], p["max_reps"], p["max_time"], p["fence"],
                 p["warmup"], p["batch"], 1, p["seed"], "auto", "auto", 0, p["resume"], p["quiet"], None)
    for name, attr in (("comm_sizes", "comm_sizes"), ("msg_sizes", "msg_sizes"), ("segments", "segments"),
                       ("algorithms", "algorithms")):
        if not _given(ctx, name):
            setattr(spec, attr, None)   # the recorded grid
    _adaptive_options(ctx, spec)
    _check_outputs(spec.output, inputs=files)   # before the files are read; the guard then knows every input
    meta = run_replay(spec, files, input_library())
    say(_replay_line(meta, spec.output), err=True)


def _check_outputs(output, inputs=()):
    """The CSV and the metadata beside it (NAME.meta.json) checked by the output guard, both before either is
    written: a metadata path that is an input (a link to it) must not leave a CSV written behind the refusal."""
    from ..ingest.metadata import meta_path
    from ..output import is_stream
    check_output(output, inputs=inputs)
    if not is_stream(output):
        check_output(meta_path(output), inputs=inputs)


def _replay_line(meta, output):
    share = meta["benchmarking_time_us"] / meta["full_sweep_benchmarking_time_us"]
    done = meta.get("adaptive") or meta.get("sample")
    points = f"{done['points_measured']}/{done['points']} points, " if done else ""
    return (f"replay {meta['collective']}: {points}{share:.1%} of the full sweep's benchmarking time"
            f"{'' if meta['complete'] else ' (budget spent)'}; wrote {output}")


def _command_line():
    argv = list(sys.argv)
    if argv and argv[0].endswith(os.path.join("quadsel", "__main__.py")):
        argv[0:1] = ["python", "-m", "quadsel"]
    elif argv:
        argv[0] = os.path.basename(argv[0])
    return shlex.join(argv)


def _rule(precision, confidence, min_reps, max_reps, max_time, fence):
    from ..measure.timing import StoppingRule
    try:
        return StoppingRule(precision, confidence, min_reps, max_reps, max_time, fence)
    except ValueError as exc:
        raise click.UsageError(str(exc))


def _env_method(text):
    if not text:
        return None
    label, _, seg = text.rpartition(":")
    return (label, int(seg))
