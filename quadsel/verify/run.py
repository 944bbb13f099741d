"""`quadsel verify` as one function: load trees / rules files, time the arms, check the rules are followed."""

import ctypes.util
import importlib
import os
import sys
import tempfile
from dataclasses import dataclass

from ..ingest.identity import oversubscribed_note
from ..libraries import get as get_library, named_label
from ..output import write_text
from ..errors import QuadselError
from ..measure import launch
from ..measure.grid import parse_list
from . import command, default_ran, follow, han, hosts, method_files, speed, statistics, verdict
from . import layouts as layout_plan
from .selection import load_inputs


@dataclass
class Outcome:
    table: str          # the Markdown table and summary lines
    document: dict      # the same as JSON (--json)
    failed: dict        # rules file -> why the library could not be shown to follow it
    slower: list = None  # rows significantly slower than the default (verify/statistics.py)
    regression: int = 0  # --fail-on-regression's exit status: 3 when a point is slower or the file not followed


def job_size(np_):
    """--np, or the size of the MPI job we run in."""
    if np_ is not None:
        return np_
    if not launch.inside_mpi_job():
        raise QuadselError("give --np N (or run under mpiexec)")
    size = int(os.environ.get("OMPI_COMM_WORLD_SIZE") or os.environ.get("PMI_SIZE") or 0)
    if not size:
        raise QuadselError("cannot tell the job size: give --np")
    return size


def run_verify(*args, mpiexec_args=None, **options):
    """run_verify_here with every launch on the user's hosts: `mpiexec_args` (verify --mpiexec-args) before -n."""
    if mpiexec_args is not None and launch.inside_mpi_job():
        raise QuadselError("--mpiexec-args goes with --np (verify launches its jobs); under your own launcher give "
                           "its options to it")
    with hosts.passing(mpiexec_args):
        return run_verify_here(*args, **options)


def run_verify_here(inputs, np_, comm_sizes, msg_sizes, measurement_files, rounds, max_reps, max_time, check_rules,
                    mpiexec, echo, confidence=statistics.CONFIDENCE, check_comm_sizes=None, check_methods=False,
                    progress=True, min_gain=verdict.MIN_GAIN, layouts=None, busy_ok=False):
    """Run verify; None on ranks other than 0 inside an MPI job. `echo` prints a note on stderr.

    check_comm_sizes: communicator sizes of the follow check (LIST; default: the timed ones), launched with as
    many ranks as the largest (the check is no timing: more ranks than cores do not matter to it).
    check_methods: also check one rules file per measured method (quadsel.verify.method_files). progress: the
    timing jobs' progress display (quadsel tune has its own).
    min_gain: the smallest geometric-mean speed-up on the changed points worth deploying (verify/verdict.py).
    layouts: --layouts (NODESxPPN list) for layout forests; default each forest's measured layouts."""
    inside = launch.inside_mpi_job()
    np_ = job_size(np_)
    library, library_version = command.current_library_version()
    lib = get_library(library)
    loaded = load_inputs(inputs, library, library_version,
                         mpich_builtin=(lambda: rules_module(library).load_base(mpich_library())) if lib.whole_selection
                         else None)
    on_hosts = bool(hosts.prefix()) or inside   # the user's hosts, or the user's launcher: maybe several hosts
    oversubscribed = np_ > (os.cpu_count() or 1) and not on_hosts   # self-launched: every rank on this host
    by_layout = layout_plan.chosen_layouts(loaded.selections, layouts)
    if layouts and not by_layout:
        raise QuadselError("--layouts applies to layout forests (build of measurements with nodes/ppn)")
    if by_layout and comm_sizes:
        raise QuadselError("--comm-sizes does not apply to a layout forest: its points are its layouts (--layouts)")
    if launch.job_rank() == 0:
        for note in loaded.notes:
            echo(note)
        if oversubscribed:
            echo(oversubscribed_note("verify", {"ranks_per_node": {"this host": np_},
                                                "machine": {"cpus": os.cpu_count()}}))
    comms = parse_list(comm_sizes, "communicator size") if comm_sizes else None
    msgs = parse_list(msg_sizes, "message size") if msg_sizes else None
    summaries, all_rows, plans, results = {}, [], {}, {}
    load_before = statistics.load_average()
    rule = {"max_reps": max_reps, "max_time": max_time, "min_reps": min(5, max_reps)}   # --max-reps 2-4 too
    measured = command.best_measured(measurement_files) if measurement_files else {}
    han_collectives = han.collectives(library, library_version) if on_hosts else ()
    for sel in loaded.selections:
        best = measured.get(sel.collective)
        if measurement_files and best is None and launch.job_rank() == 0:
            echo(f"note: no {sel.collective} rows in --measurements: "
                 + ("its best arm is skipped" if sel.comm_sizes is None else "its best arm tries every method of the tree"))
        plans[sel.collective] = command.plan(sel, library, np_, comms, msgs, best, by_layout.get(sel.collective))
    import contextlib
    from .interference import Sampler
    # what else ran on this host while the timing jobs did (verify/interference.py); inside an MPI job: not known
    with (Sampler(own=np_) if not inside else contextlib.nullcontext()) as sampler:
        for sel in loaded.selections:
            spec = {"collective": sel.collective, "points": plans[sel.collective], "rounds": rounds, "rule": rule,
                    "progress": progress}
            if lib.env_forced(sel.collective):   # read at start-up only (Intel MPI), or read-only through MPI_T
                result = command.run_speed_env(spec, np_, lambda coll, label: lib.env_for(coll, label, 0), mpiexec)
            else:   # Open MPI across hosts: coll/han's default beside the arms it may not take (verify/han.py)
                if sel.collective in han_collectives:
                    spec["han"] = True
                result = command.run_speed(spec, np_, mpiexec)
            if result is None:   # a rank other than 0 inside an MPI job
                return None
            result["collective"] = sel.collective
            results[sel.collective] = result
            rows, summaries[sel.collective] = speed.summarize(result)
            summaries[sel.collective]["timing"] = result.get("timing")
            for row in rows:      # for a person reading the JSON: the names beside the ids (the ids stay as they were)
                row["quadsel_name"] = named_label(library, row["collective"], row["quadsel"])
                row["best_name"] = None if row["best"] is None else named_label(library, row["collective"], row["best"])
            all_rows += rows
    stats = statistics.annotate(results, all_rows, summaries, confidence, np_, load_before)
    stats["interference"] = sampler.summary() if sampler is not None else None
    checks, failed, by_method = None, {}, None
    notes = [f"IGNORED: {r.ignored}; the quadsel arm is the library default" for r in loaded.rules_files if r.ignored]
    notes += [line for line in (han.note(all_rows),) if line]
    if check_rules and not inside:
        checks = {}
        points, check_np = check_points(plans, np_, check_comm_sizes)

        def check(source, selections, path, mine=points, han_rules=None):
            if source.startswith("emitted from the trees"):   # a tree says nothing outside its measured sizes
                mine = {s.collective: [p for p in mine[s.collective]
                                       if min(s.comm_sizes) <= p[0] <= max(s.comm_sizes)]
                        for s in selections if s.collective in mine}
                left = sum(len(points[c]) - len(v) for c, v in mine.items()) if not by_layout else 0
                if left:
                    echo(f"note: the follow check of the trees skips {left} point(s) outside their measured "
                         "communicator sizes (verify the rules file to check what the library does there)")
            try:
                checks.setdefault(source, []).extend(follow.check_follows(
                    selections, path, library, check_np, points=mine, mpiexec=mpiexec, echo=echo, identify=True,
                    han_rules=han_rules))
            except QuadselError as exc:   # e.g. the library aborts loading the file: keep the timings
                failed[source] = (failed[source] + "; " if source in failed else "") + str(exc)
                notes.append(f"RULES CHECK FAILED ({source}): {exc}")
                echo(notes[-1])

        if loaded.trees:   # one file, or (a forest, no ppn key in the library's format) one file per ppn...
            base = rules_module(library).load_base(mpich_library()) if lib.whole_selection else None   # read once
            for source, fns, sels, mine in layout_plan.forest_rules(library, loaded.trees, points):
                for fn in fns:   # ...cut to each collective: a nested call of another collective (the bcast of an
                    own = [s for s in sels if s.collective == fn.collective and s.collective in mine]
                    if not own:  # MPICH smp allreduce) then runs the library's own choice in the file launch too,
                        continue  # as in the forced one it is compared with (follow.py, _own_rules)
                    with tempfile.TemporaryDirectory(prefix="quadsel-rules-") as workdir:
                        path = os.path.join(workdir, "rules")
                        write_text(path, emit_rules(library, [fn], base))   # and coll/han's file of it (han.py)
                        check(source, own, path, mine, han.write_han_file(workdir, [fn], han_collectives))
        for rules in loaded.rules_files:
            check(rules.path, [s for s in loaded.selections if getattr(s, "file", None) is rules], rules.path)
        if check_methods and by_layout:
            echo("note: --check-methods checks 2-D trees only; a layout forest is checked per layout with its own file")
        elif check_methods:
            methods = method_files.measured_methods(measurement_files, loaded.trees)
            if not any(c in points for c in methods):
                echo("note: --check-methods: no measured method to check (give --measurements, or verify a tree)")
            with tempfile.TemporaryDirectory(prefix="quadsel-methods-") as workdir:
                try:
                    by_method = method_files.check_methods(methods, points, library, check_np,
                                                           lambda fns: emit_rules(library, fns), workdir,
                                                           mpiexec=mpiexec, echo=echo)
                except QuadselError as exc:
                    failed["one file per method"] = str(exc)
                    notes.append(f"RULES CHECK FAILED (one file per method): {exc}")
                    echo(notes[-1])
                    by_method = {}
            for coll, results in by_method.items():
                notes.append(f"{coll}, one rules file per measured method: " + "; ".join(
                    f"{label} " + (", ".join(f"{v} {k}" for k, v in sorted(follow.summary(c).items())) or "—")
                    for label, c in results.items()))
    default_ran.for_rows(all_rows, checks, library)
    status = verdict.follow_status(checks)
    for r in all_rows:
        r["followed"] = status.get(verdict.point_key(r)) if checks is not None else None
    evidence = verdict.proof(all_rows, checks, None if checks is not None else (
        "--no-check-rules" if not check_rules else "started under mpiexec: the check launches jobs of its own"), failed)
    stats["decision"], stats["reason"] = verdict.decide(all_rows, stats["overall"], evidence, min_gain,
                                                        interference=stats["interference"], busy_ok=busy_ok)
    stats.update(min_gain=min_gain, proof=evidence)
    per_layout = layout_plan.layout_summary(all_rows, checks) if by_layout else None
    if per_layout is not None:
        stats["layouts"] = per_layout
        notes = layout_plan.format_layout_lines(per_layout) + notes
    document = {
        "library": library, "library_version": library_version.strip().splitlines()[0], "np": np_,
        "cpus": os.cpu_count(), "oversubscribed": oversubscribed,
        "hosts": {"mpiexec_args": hosts.prefix() or None, "under_own_launcher": inside} if on_hosts else None,
        "inputs": [{"path": t.path, "kind": "forest" if t.has_layout else "tree", "collectives": [t.collective]}
                   for t in loaded.trees] +
                  [{"path": r.path, "kind": r.format, "collectives": r.collectives, "ignored": r.ignored,
                    "warnings": r.warnings} for r in loaded.rules_files],
        "summary": summaries, "points": all_rows, "statistics": stats,
        "rules_followed": None if checks is None else {
            "counts": follow.summary([x for c in checks.values() for x in c]),
            "files": {source: follow.summary(c) for source, c in checks.items()},
            "points": [dict(x.__dict__, file=source) for source, c in checks.items() for x in c],
            "methods": None if by_method is None else {
                coll: {label: follow.summary(c) for label, c in results.items()} for coll, results in by_method.items()},
            "failed": failed}}
    notes = statistics.format_lines(stats, summaries) + notes
    return Outcome(command.format_table(all_rows, summaries, checks, notes, library), document, failed,
                   statistics.regression(all_rows), verdict.exit_status(evidence, all_rows))


def emit_rules(library, fns, base=None):
    """The rules file verify checks for trees: the file tune deploys (the library's `deployment.target`; Intel MPI's
    JSON tuning file, as I_MPI_ADJUST cannot express every tree), over the library's own selection where the file
    replaces it whole (MPICH: `base` when the caller read it already)."""
    module = rules_module(library)
    if get_library(library).whole_selection:
        return module.emit(fns, base=base if base is not None else module.load_base(mpich_library()))
    return module.emit(fns)


def rules_module(library):
    """The targets/ module that writes the file the library loads (its class's `deployment.target`)."""
    return importlib.import_module(f"..targets.{get_library(library).deployment.target.replace('-', '_')}", __package__)


def check_points(plans, np_, check_comm_sizes=None):
    """({collective: [(comm, msg)]}, ranks) of the follow check: the timed points, or every message size timed
    at each of `check_comm_sizes`."""
    if not check_comm_sizes:
        return {c: [(p["comm"], p["msg"]) + tuple(p.get("layout") or ()) for p in ps] for c, ps in plans.items()}, np_
    if any(p.get("layout") for ps in plans.values() for p in ps):
        raise QuadselError("--check-comm-sizes applies to 2-D trees and rules files; a layout forest is checked at its "
                           "layouts (--layouts)")
    comms = sorted(set(parse_list(check_comm_sizes, "communicator size")))
    if comms[0] < 2:
        raise QuadselError("--check-comm-sizes: a follow check needs communicators of 2 or more ranks")
    points = {c: [(n, m) for n in comms for m in sorted({p["msg"] for p in ps})] for c, ps in plans.items()}
    return points, max(comms)


def mpich_library():
    """The libmpi that mpi4py loads (MPICH embeds its own selection there)."""
    import mpi4py
    path = None
    try:
        path = mpi4py.get_config().get("mpicc")
    except Exception:   # mpi4py built without a config: fall back to the folders below
        pass
    for folder in (os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(path or ""))), "lib"),
                   os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(sys.executable))), "lib")):
        candidate = os.path.join(folder, "libmpi.so")
        if os.path.exists(candidate):
            return candidate
    found = ctypes.util.find_library("mpi")
    if not found:
        raise QuadselError("cannot find MPICH's libmpi.so to keep its selection for the other collectives")
    return found
