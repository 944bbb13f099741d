"""The `tune` command: measure → build → codegen → verify → prune → verify for every collective, one folder."""

import os

import click

from .echo import say
from .types import FloatRange, MPIEXEC_ARGS
from ..errors import QuadselError, ctrl_c_says, one_line

DEFAULT_MSG_SIZES = "1,8,64,512,4K,32K,256K,1M"


@click.command()
@click.option("-o", "--output", "folder", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="Folder of the deployment (made if missing; its parent must exist). Run the same command again "
                   "to continue an interrupted tuning there.")
@click.option("--np", "np_", type=click.IntRange(2, 1 << 20), default=None,
              help="Ranks of the jobs tune starts: on this host (more than the cores: oversubscribed, and said), or "
                   "on the hosts of --mpiexec-args. Inside a Slurm allocation: its tasks, on all its nodes (leave "
                   "it out; docs/cluster.md, Slurm).")
@click.option("-c", "--collectives", metavar="LIST", default=None,
              help="Comma list of collectives (default: every collective the library can force).")
@click.option("--comm-sizes", metavar="LIST", default=None, help="Communicator sizes (default 2 to --np).")
@click.option("--msg-sizes", metavar="LIST", default=DEFAULT_MSG_SIZES, show_default=True,
              help="Message sizes in bytes per rank, measured and verified (e.g. 1-1M:pow2, 8,1K,64K).")
@click.option("--strategy", type=click.Choice(["auto", "full", "adaptive"]), default="auto", show_default=True,
              help="How each collective is measured: auto = `measure --adaptive` where the library forces "
                   "in-process (MPI_T), the full sweep otherwise and across hosts (chosen on replayed sweeps, "
                   "docs/tune.md); full; adaptive (MPI_T forcing only).")
@click.option("--budget", metavar="TIME", default=None,
              help="Time limit of the whole run (90m, 1h30m, 600s): 60 %% measures, shared over the collectives "
                   "(a collective's measurement is stopped, keeping its rows, when its share is spent); the "
                   "report says what the budget cut.")
@click.option("--max-time", type=FloatRange(0.01, 60), default=0.3, show_default=True,
              help="Measure: at most this many seconds per method and point.")
@click.option("--max-reps", type=click.IntRange(2, 10 ** 6), default=40, show_default=True,
              help="Measure: at most this many timed calls per method and point.")
@click.option("--rounds", type=click.IntRange(1, 100), default=2, show_default=True,
              help="Measure: passes over the grid.")
@click.option("--verify-rounds", type=click.IntRange(2, 1000), default=5, show_default=True,
              help="Verify: rounds (the unit of its intervals).")
@click.option("--min-gain", type=FloatRange(1.0, 100.0), default=None,
              help="A collective is deployed only when verify would deploy it alone: followed, no point slower, and "
                   "the whole interval of its speed-up on the points its selection changes above this (default: "
                   "verify's --min-gain).")
@click.option("--busy-ok", is_flag=True,
              help="Deploy even when the timing ran on a host busier than the job itself (other runnable tasks beside "
                   "its ranks, sampled: docs/deploy.md, \"Interference\"); without it such a gain is `unproven`.")
@click.option("--mpiexec", metavar="PATH", default=None, help="mpiexec to use (default: beside this Python).")
@click.option("--mpiexec-args", default=None, type=MPIEXEC_ARGS, metavar="ARGS",
              help="Across hosts: your launcher's host options (split like a shell, put before -n in every job tune "
                   "starts, as measure and verify --mpiexec-args): every layout is measured, one layout forest per "
                   "collective is built, verified per layout and deployed per library (docs/tune.md, Clusters).")
@click.option("--layouts", metavar="LIST", default=None,
              help="With --mpiexec-args: the NODESxPPN layouts to tune (default: every layout the job can form, "
                   "as measure's).")
@click.option("--sync", type=click.Choice(["auto", "barrier", "ring", "start"]), default=None,
              help="With --mpiexec-args: measure's clock synchronisation (docs/measure.md, Across hosts).")
@click.option("--sbatch", "sbatch", metavar="SCRIPT", type=click.Path(dir_okay=False), default=None,
              help="Run nothing: write SCRIPT, the Slurm batch job of this tune (sbatch SCRIPT), with --nodes, "
                   "--ntasks-per-node and --time; submitted again after a time-out or scancel, or requeued, it "
                   "continues from DIR's journal (docs/cluster.md, Slurm).")
@click.option("--nodes", type=click.IntRange(1, 1 << 16), default=None, help="With --sbatch: the job's nodes.")
@click.option("--ntasks-per-node", "ntasks_per_node", type=click.IntRange(1, 1 << 12), default=None,
              help="With --sbatch: ranks per node (the largest layout tuned).")
@click.option("--time", "time_limit", metavar="TIME", default=None,
              help="With --sbatch: the job's time limit, as Slurm writes it (90, 1:30:00, 1-00:00:00).")
@click.option("--sbatch-args", metavar="ARGS", default=None,
              help="With --sbatch: more #SBATCH options (split like a shell: e.g. \"--partition=batch --account=x\").")
@click.option("--no-figures", is_flag=True, help="No decision-map figures in report.md.")
@click.option("--verbose", is_flag=True, help="A plain line per step, on a terminal too (the default there is one "
                                               "line rewritten in place).")
@click.option("--quiet", is_flag=True, help="No progress; messages, errors and the last line only.")
def tune(folder, np_, collectives, comm_sizes, msg_sizes, strategy, budget, max_time, max_reps, rounds, verify_rounds,
         min_gain, busy_ok, mpiexec, mpiexec_args, layouts, sync, sbatch, nodes, ntasks_per_node, time_limit,
         sbatch_args, no_figures, verbose, quiet):
    """Tune every collective of the MPI library mpi4py loads, and write a folder ready to deploy.

    For each collective the library can force: measure it (`quadsel measure`), build the default tree; then
    write the library's rules or tuning file, verify it on the real MPI with the proof that the library follows
    it, hand back to the library what verify found slower, verify again, and deploy only the collectives whose
    gain is beyond the noise (docs/tune.md). DIR gets the files, `tuned.env` to source before mpiexec,
    `report.md`, the verify results and the measurements. The last line says what to do:

    \b
        quadsel tune --np 2 -o deploy
        . deploy/tuned.env && mpiexec -n 2 ./your_app
    """
    from ..measure.grid import parse_list
    from ..tune.report import last_line
    from ..tune.run import TuneSpec, run_tune
    from ..libraries import COLLECTIVES
    ctx_mpiexec_args = mpiexec_args
    if not folder.strip():
        raise QuadselError("-o: an empty folder name: give the folder to write, e.g. -o deploy")
    wanted = None
    if collectives is not None:     # -c '' names no collective: not every one
        wanted = [c.strip().lower() for c in collectives.split(",") if c.strip()]
        if not wanted:
            raise QuadselError("-c: no collective named: give one or more, e.g. -c bcast,allreduce (without -c: "
                               "every one the library can force)")
        bad = [c for c in wanted if c not in COLLECTIVES]
        if bad:
            raise QuadselError(f"unknown collective {bad[0]!r} (known: {', '.join(COLLECTIVES)})")
    parse_list(msg_sizes, "message size")     # a bad list fails here, before any job
    if sbatch is not None or nodes or ntasks_per_node or time_limit or sbatch_args is not None:
        return _sbatch(folder, sbatch, nodes, ntasks_per_node, time_limit, sbatch_args)
    from ..measure.allocation import launcher, outside_note
    np_, mpiexec_args, allocation = launcher(np_, mpiexec_args, mpiexec)
    if np_ is None:
        raise click.UsageError("Missing option '--np' (the ranks of the jobs tune starts; inside a Slurm "
                               "allocation they are its tasks)")
    from ..measure.capacity import check_ranks
    check_ranks(np_, on_hosts=mpiexec_args is not None)
    if allocation is None and mpiexec_args is None:
        note = outside_note(np_)
        if note:
            say(note, err=True)
    if (layouts or sync) and not mpiexec_args:
        raise QuadselError("--layouts and --sync go with --mpiexec-args (tuning across hosts)")
    if layouts:
        from ..layout import parse_layouts
        layouts = parse_layouts(layouts)
    if comm_sizes:
        comms = parse_list(comm_sizes, "communicator size")
        if min(comms) < 2 or max(comms) > np_:
            raise QuadselError(f"--comm-sizes must lie between 2 and --np {np_}")
    seconds = None
    if budget:
        from ..sampling.budget import parse_budget
        parsed = parse_budget(budget)
        if parsed.seconds is None:
            raise QuadselError("tune's --budget is a time (90m, 600s): a share of a sweep means nothing across "
                               "collectives")
        seconds = parsed.seconds
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise QuadselError(f"{one_line(folder)} exists and is not a folder")
    spec = TuneSpec(folder=folder, np=np_, msg_sizes=msg_sizes, collectives=wanted, comm_sizes=comm_sizes,
                    strategy=strategy, budget=seconds, mpiexec=mpiexec, mpiexec_args=mpiexec_args, layouts=layouts,
                    sync=sync, max_time=max_time, max_reps=max_reps, rounds=rounds, command=_command_line(),
                    verify_rounds=verify_rounds, figures=not no_figures, busy_ok=busy_ok, allocation=allocation,
                    hosts_from_allocation=allocation is not None and ctx_mpiexec_args is None,
                    display="quiet" if quiet else "lines" if verbose else "auto")
    if min_gain is not None:
        spec.min_gain = min_gain
    with ctrl_c_says(f"quadsel tune: interrupted; what was finished is kept in {one_line(folder)}: run the "
                     "same command again to continue"):
        summary = run_tune(spec)
    say(last_line(summary, folder))


def _sbatch(folder, script, nodes, ppn, time_limit, extra):
    """--sbatch: the batch script of this tune, written (tune/batch.py); nothing runs."""
    from ..tune.batch import tune_arguments, write_script
    ctx = click.get_current_context()
    if script is None:
        raise click.UsageError("--nodes, --ntasks-per-node, --time and --sbatch-args go with --sbatch SCRIPT")
    if nodes is None or ppn is None:
        raise click.UsageError("--sbatch needs --nodes and --ntasks-per-node (the allocation to tune)")
    if ctx.params.get("np_") is not None:
        raise click.UsageError("--sbatch: the job's ranks are --nodes x --ntasks-per-node; leave --np out")
    given = [(p.opts[-1] if p.opts[-1].startswith("--") else p.opts[0], ctx.params[p.name], p.is_flag)
             for p in ctx.command.params
             if ctx.get_parameter_source(p.name) == click.core.ParameterSource.COMMANDLINE]
    path = write_script(script, folder, nodes, ppn, time_limit, extra, tune_arguments(given))
    say(f"wrote {one_line(path)}: submit it with `sbatch {one_line(path)}`; submitted again after a time-out "
               f"or scancel (or requeued), it continues from {one_line(os.path.join(folder, 'tune.json'))}")


def _command_line():
    """The tune command as typed (each measurement's metadata records it)."""
    import shlex
    import sys
    return shlex.join(["quadsel", *sys.argv[1:]]) if sys.argv and sys.argv[0] else "quadsel tune"
