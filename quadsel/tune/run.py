"""`quadsel tune` as one function: every collective measured and built, the deployment verified, pruned, verified
again, and only what is worth it deployed (docs/tune.md)."""

import os
import sys
import time
from dataclasses import dataclass
from typing import List, Optional

from ..errors import QuadselError, escaped
from . import deploy, hosts, report, steps, verdict
from .folder import Folder, Journal
from .progress import Display, Plan


@dataclass
class TuneSpec:
    folder: str
    np: int
    msg_sizes: str
    collectives: Optional[List[str]] = None
    comm_sizes: Optional[str] = None
    strategy: str = "auto"                    # auto: adaptive where MPI_T forces in-process (tune/steps.py)
    budget: Optional[float] = None            # seconds for the whole run (measure's share is cut to fit)
    mpiexec: Optional[str] = None
    mpiexec_args: Optional[str] = None        # across hosts: the launcher's host options (tune/hosts.py)
    layouts: Optional[list] = None            # [Layout] (default: every layout the job can form)
    sync: Optional[str] = None                # measure --sync (across hosts)
    max_time: float = 2.0                     # measure's stopping rule: seconds of one method at one point, at most
    max_reps: int = 200                       # ... and timed calls
    rounds: int = 2                           # measure's passes over the grid
    command: str = "quadsel tune"             # the command line, recorded in each measurement's metadata
    busy_ok: bool = False                     # deploy a gain timed on a host busier than the job itself
    verify_rounds: int = 5
    verify_max_reps: int = 30
    verify_max_time: float = 0.15
    min_gain: float = verdict.MIN_GAIN
    figures: bool = True
    display: str = "auto"                     # auto (live on a terminal, lines elsewhere) | lines | quiet
    allocation: Optional[object] = None       # the Slurm allocation tune runs in (measure/allocation.py)
    hosts_from_allocation: bool = False       # mpiexec_args are the allocation's host options, not the user's

    @property
    def hosts(self):
        """The hosts a journal records and a rerun must share: the user's launcher options, or the allocation's
        shape (a job requeued or submitted again onto other nodes of the same shape continues the run)."""
        if self.hosts_from_allocation and self.allocation is not None:
            return f"Slurm allocation {self.allocation.shape}"
        return self.mpiexec_args


def run_tune(spec, stream=None):
    """Tune; returns the summary dict (also in the journal and report.md). Progress and messages go to `stream`
    (default stderr) through one display (tune/progress.py)."""
    from ..libraries import COLLECTIVES, open_library
    from ..measure import launch
    if launch.inside_mpi_job():
        raise QuadselError("quadsel tune starts its own jobs: run it outside mpiexec/srun, and give your hosts with "
                           "--np N --mpiexec-args \"HOST OPTIONS\" (docs/tune.md, Clusters)")
    if spec.mpiexec_args:
        from .hosts import check_spec
        check_spec(spec)
    library = open_library(launch.library_without_init())
    dep = deploy.deployment(library.name)
    wanted = spec.collectives or [c for c in COLLECTIVES if library.algorithms(c)]
    unknown = [c for c in wanted if not library.algorithms(c)]
    if unknown:
        raise QuadselError(f"{library.name} cannot force {', '.join(unknown)}: nothing to tune there")
    # decided before anything is measured: only what the library's file can carry is tuned (issue 41)
    left_out = [c for c in wanted if not library.deployable(c)]
    if left_out and spec.collectives:
        raise QuadselError(f"{library.title}'s files carry no rules for {', '.join(left_out)} that quadsel can write: "
                           "they could be measured but never deployed; leave them out of -c")
    wanted = [c for c in wanted if c not in left_out]
    left_out = {c: f"{library.title}'s files carry no rules for it that quadsel can write" for c in left_out}
    plan = Plan({c: len(library.algorithms(c)) + 1 for c in wanted})     # + 1: the library default
    display = Display(stream or sys.stderr, plan, len(wanted), verbose=spec.display == "lines",
                      quiet=spec.display == "quiet")
    launch.find_mpiexec(spec.mpiexec)      # a launcher that is not there: one line before any folder is made
    folder = Folder(spec.folder)
    try:
        folder.make()
        return _run(spec, library, dep, wanted, plan, display, folder, left_out)
    except BaseException:
        folder.abandon()      # failed before anything but the journal was written: nothing of this run stays
        raise
    finally:
        folder.release()
        display.close()


def _run(spec, library, dep, wanted, plan, display, folder, left_out):
    echo = display.message
    settings = {"library": library.name, "library_version": library.version, "np": spec.np,
                "comm_sizes": spec.comm_sizes, "msg_sizes": spec.msg_sizes, "strategy": spec.strategy}
    if spec.mpiexec_args:     # a run on other hosts or layouts is another run (one-host journals stay as they were)
        settings.update(mpiexec_args=spec.hosts, sync=spec.sync,
                        layouts=",".join(map(str, spec.layouts)) if spec.layouts else None)
    journal = Journal(folder, settings)
    if journal.resumed:
        echo(f"tune: continuing the run in {escaped(spec.folder)} (finished steps are not run again)")
    built, budget_cut, measured = {}, [], {}
    for i, coll in enumerate(wanted):
        name = f"measure:{coll}"
        done = journal.data["steps"].get(name)
        if done is None or not done.get("complete"):
            seconds = None
            if spec.budget is not None:
                left = spec.budget * 0.6 - plan.elapsed()     # 60 % of the budget measures, the rest verifies
                if left <= 0:
                    budget_cut.append(coll)
                    plan.end_measure(coll, measured=False)
                    echo(f"tune [{i + 1}/{len(wanted)} {coll}] not measured: the budget is spent")
                    continue
                seconds = left / (len(wanted) - i)
            plan.start_measure(coll)
            display.step(i, coll, "measuring")
            result = steps.measure(spec, folder, coll, seconds, display.points_done)
            plan.end_measure(coll)
            if result["stopped"]:
                budget_cut.append(coll)
            journal.finish(name, [], **result)
        else:
            plan.end_measure(coll, measured=False)
        measured[coll] = journal.data["steps"][name]
        if not steps.has_rows(folder, coll):     # the budget ended it before its first row: nothing to build
            echo(f"tune [{i + 1}/{len(wanted)} {coll}] nothing measured before the budget ran out: not built")
            continue
        display.step(i, coll, "building")
        fn, summary, maps = steps.build(folder, coll)
        built[coll] = (fn, summary, maps)
        journal.finish(f"build:{coll}", [folder.measurement(coll)], **summary)
    if not built:
        raise QuadselError("nothing was measured: give a larger --budget")
    fns = [fn for fn, _, _ in built.values()]
    measurements = [folder.measurement(c) for c in built]
    mpich_base = _mpich_base(library)
    first = _verified_round(spec, folder, journal, dep, fns, measurements, mpich_base, "first", display)
    pruned = steps.prune(fns, folder("verify", "first.json"), lambda text: echo(f"tune: prune: {text}"))
    # verified again: only what pruning changed (a tree it left as it was keeps the first verify's evidence)
    changed = [p for p, fn in zip(pruned, fns) if p is not fn]
    display.plan.verify_share = len(changed) / len(fns)
    second = _verified_round(spec, folder, journal, dep, changed, measurements, mpich_base, "pruned", display) \
        if changed else None
    if not changed:     # an earlier run's second verify (other settings) is not this run's: it goes
        journal.forget("verify:pruned")
        for name in [n for n in list(folder.journal.written) if n.startswith(os.path.join("verify", "pruned."))]:
            folder.remove(folder(name))
        display.plan.end_verify(ran=False)
    judged = verdict.judge_rounds(first, second, spec.min_gain, spec.busy_ok)
    final = [fn for fn in pruned if judged.get(fn.collective) and judged[fn.collective].deploy]
    skipped = []
    header = [f"quadsel tune for {library.version}: {len(final)} of {len(wanted)} collectives tuned",
              "source it before mpiexec: . tuned.env"]
    per_ppn = bool(spec.mpiexec_args) and library.per_ppn_files
    if per_ppn:      # one coll/tuned file and one coll/han file per ppn, as verify proved them (tune/hosts.py)
        files = hosts.ompi_files(final, library.multinode_collectives(library.version))
    else:
        files = deploy.emit(dep, final, mpich_base, notes=skipped)
    for line in skipped:
        echo(f"tune: note: {line}")
    for stale in (dep.file,) + ((dep.extra[0],) if dep.extra else ()) + hosts.ppn_files(folder.path):
        if stale not in files and os.path.lexists(folder(stale)):
            folder.remove(folder(stale))    # nothing deployed: no file the environment could still point at
    for name, text in files.items():
        folder.write(folder(name), text)
    if per_ppn:
        folder.write(folder("tuned.env"), hosts.env_text(library, spec.folder, final, header))
    else:
        env = deploy.environment(dep, spec.folder, final)
        folder.write(folder("tuned.env"), deploy.env_text(env, header + _alternative(dep, files)))
    overall = verdict.overall(judged)
    summary = report.summary(library, wanted, built, judged, overall, budget_cut, measured, spec, plan.elapsed(),
                             left_out, {"first": first, "pruned": second} if second else {"first": first})
    last = verdict.final_document(first, second)      # each collective's last verify
    from ..verify.han import note as han_note     # Open MPI across hosts: whose default the gains are against
    folder.write(folder("report.md"), report.markdown(summary, folder, built, spec.figures, echo,
                                                      last["layouts"], [han_note(last["points"])]))
    journal.finish("summary", [], **summary)
    return summary


def read_verified(path):
    """A verify result tune reads back: the schema of every verify result, then what tune needs of it."""
    from ..schemas import check_doc
    from ..verify.prune import read_result
    return check_doc(read_result(path), path, "verify-decision")


def _verify_settings(spec):
    """What makes a verify result: reused only when a rerun asks for the same (and its file is unchanged)."""
    return {"rounds": spec.verify_rounds, "max_reps": spec.verify_max_reps, "max_time": spec.verify_max_time,
            "min_gain": spec.min_gain, "np": spec.np, "comm_sizes": spec.comm_sizes, "msg_sizes": spec.msg_sizes,
            "mpiexec_args": spec.hosts, "layouts": ",".join(map(str, spec.layouts)) if spec.layouts else None,
            "busy_ok": spec.busy_ok}


def _alternative(dep, files):
    """The file beside the deployed one that can stand in for it (Intel MPI: the I_MPI_ADJUST strings, for sites that
    set the environment only): tuned.env's line offering it."""
    if not dep.extra_note or not dep.extra or dep.extra[0] not in files:
        return []
    return [dep.extra_note.format(file=dep.extra[0])]


def _mpich_base(library):
    """The libmpi whose own selection the deployed file is written over (the library's `whole_selection`)."""
    if not library.whole_selection:
        return None
    from ..verify.run import mpich_library
    return mpich_library()


def _verified_round(spec, folder, journal, dep, fns, measurements, mpich_base, label, display):
    """Write the deployment of `fns` to DIR/verify/LABEL.<file> and verify it (skipped when the journal has this
    same file verified); the verify document."""
    if spec.mpiexec_args:    # across hosts: the forests, whose files verify writes per layout as tune deploys them
        paths = hosts.verify_inputs(folder, fns, label)
    else:
        texts = deploy.emit(dep, fns, mpich_base)
        paths = [folder("verify", f"{label}.{dep.file}")]
        folder.write(paths[0], texts[dep.file])
    result = folder("verify", f"{label}.json")
    made_by = _verify_settings(spec)
    folder.claim(result)      # a result someone changed is neither reused nor replaced: one line
    step = journal.done(f"verify:{label}", paths)
    if step and step.get("settings") == made_by and os.path.exists(result) and \
            folder.journal.written.get(os.path.relpath(result, folder.path)) == step.get("result_sha256"):
        try:
            document = read_verified(result)
            display.plan.end_verify(ran=False)
            return document
        except QuadselError as exc:             # it was tune's and unchanged: a bug or a disk fault; verify again
            display.message(f"tune: {exc}: verifying again")
    display.plan.start_verify()
    display.step(None, "", f"verifying the {label} deployment of {len(fns)} collective{'s' if len(fns) != 1 else ''}")
    started = time.monotonic()
    document = steps.verify(spec, folder, paths, measurements, result,
                            lambda text: display.message(f"tune: verify: {text}"))
    display.plan.end_verify()
    journal.finish(f"verify:{label}", paths, result=os.path.basename(result), settings=made_by,
                   seconds=round(time.monotonic() - started, 1),
                   result_sha256=folder.journal.written[os.path.relpath(result, folder.path)])
    return document
