"""`quadsel verify` as one function: load trees / rules files, time the arms, check the rules are followed."""

import contextlib
import ctypes.util
import importlib
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import List, Optional, Sequence

from ..ingest.identity import oversubscribed_note
from ..libraries import get as get_library, named_label
from ..output import write_text
from ..errors import QuadselError
from ..measure import launch
from ..measure.grid import parse_list
from . import command, default_ran, follow, han, hosts, method_files, speed, statistics, verdict
from . import layouts as layout_plan
from .interference import Sampler
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


@dataclass
class VerifyOptions:
    """What one `quadsel verify` is asked (its options, typed; tune builds one too)."""
    inputs: List[str]                    # trees and rules files
    np: Optional[int] = None             # ranks to launch; None: the MPI job we run in
    comm_sizes: Optional[str] = None     # LIST (default: the trees' or the measurements')
    msg_sizes: Optional[str] = None
    measurements: Sequence[str] = ()     # measurement files: the best arm
    rounds: int = 5
    max_reps: int = 60
    max_time: float = 0.5
    check_rules: bool = True             # the follow check
    mpiexec: Optional[str] = None
    mpiexec_args: Optional[str] = None   # the user's launcher options, before -n in every launch
    confidence: float = statistics.CONFIDENCE
    check_comm_sizes: Optional[str] = None   # LIST of the follow check (default: the timed ones)
    check_methods: bool = False          # also one rules file per measured method
    progress: bool = True                # the timing jobs' display (tune has its own)
    min_gain: float = verdict.MIN_GAIN
    layouts: Optional[list] = None       # [Layout] of a layout forest (default: its measured layouts)
    busy_ok: bool = False                # deploy a gain timed on a host busier than the job itself
    best_arm: bool = True                # time the best arm (a diagnostic: the decision never reads it; tune does
    #                                      without it, docs/tune.md)
    time_default_points: bool = True     # time points where the selection is the default (speed-up 1 by definition;
    #                                      tune does not: their rows say `timed: false`)


def run_verify(options, echo):
    """Run verify (VerifyOptions); None on ranks other than 0 inside an MPI job. `echo` prints a note on stderr.
    Every launch gets the user's launcher options (`mpiexec_args`) before -n."""
    if options.mpiexec_args is not None and launch.inside_mpi_job():
        raise QuadselError("--mpiexec-args goes with --np (verify launches its jobs); under your own launcher give "
                           "its options to it")
    with hosts.passing(options.mpiexec_args):
        return _Verify(options, echo).run()


class _Verify:
    """One verify run's steps: load, time the arms, check the file is followed, decide, write the document."""

    def __init__(self, options, echo):
        self.o, self.echo = options, echo
        self.inside = launch.inside_mpi_job()
        self.np = job_size(options.np)
        self.library, self.library_version = command.current_library_version()
        self.lib = get_library(self.library)
        self.notes, self.failed, self.checks, self.by_method = [], {}, None, None

    def run(self):
        self.load()
        started = time.monotonic()
        if not self.time():
            return None      # a rank other than 0 inside an MPI job
        timed = time.monotonic()
        if self.o.check_rules and not self.inside:
            self.check()
        self.seconds = {"timing": round(timed - started, 1), "check": round(time.monotonic() - timed, 1)}
        return self.decide()

    def load(self):
        o, library = self.o, self.library
        self.loaded = load_inputs(o.inputs, library, self.library_version, mpich_builtin=(
            lambda: rules_module(library).load_base(mpich_library())) if self.lib.whole_selection else None)
        self.on_hosts = bool(hosts.prefix()) or self.inside   # the user's hosts, or the user's launcher
        self.oversubscribed = self.np > (os.cpu_count() or 1) and not self.on_hosts   # every rank on this host
        self.by_layout = layout_plan.chosen_layouts(self.loaded.selections, o.layouts)
        if o.layouts and not self.by_layout:
            raise QuadselError("--layouts applies to layout forests (build of measurements with nodes/ppn)")
        if self.by_layout and o.comm_sizes:
            raise QuadselError("--comm-sizes does not apply to a layout forest: its points are its layouts (--layouts)")
        if launch.job_rank() == 0:
            for note in self.loaded.notes:
                self.echo(note)
            if self.oversubscribed:
                self.echo(oversubscribed_note("verify", {"ranks_per_node": {"this host": self.np},
                                                         "machine": {"cpus": os.cpu_count()}}))

    def time(self):
        """Every selection's arms timed, interleaved over rounds; False on a rank that is not rank 0."""
        o, lib, library = self.o, self.lib, self.library
        comms = parse_list(o.comm_sizes, "communicator size") if o.comm_sizes else None
        msgs = parse_list(o.msg_sizes, "message size") if o.msg_sizes else None
        self.summaries, self.rows, self.plans, results = {}, [], {}, {}
        load_before = statistics.load_average()
        rule = {"max_reps": o.max_reps, "max_time": o.max_time, "min_reps": min(5, o.max_reps)}   # --max-reps 2-4 too
        measured = command.best_measured(o.measurements) if o.measurements else {}
        self.han_collectives = han.collectives(library, self.library_version) if self.on_hosts else ()
        for sel in self.loaded.selections:
            best = measured.get(sel.collective)
            if o.measurements and o.best_arm and best is None and launch.job_rank() == 0:
                self.echo(f"note: no {sel.collective} rows in --measurements: " + (
                    "its best arm is skipped" if sel.comm_sizes is None else "its best arm tries every method of the tree"))
            self.plans[sel.collective] = command.plan(sel, library, self.np, comms, msgs, best,
                                                      self.by_layout.get(sel.collective), o.best_arm)
        untimed = {c: [p for p in plan if not o.time_default_points and _default_only(p)]
                   for c, plan in self.plans.items()}
        # what else ran on this host while the timing jobs did (verify/interference.py); inside an MPI job: not known
        with (Sampler(own=self.np) if not self.inside else contextlib.nullcontext()) as sampler:
            for sel in self.loaded.selections:
                timed = [p for p in self.plans[sel.collective] if p not in untimed[sel.collective]]
                if not timed:
                    continue      # the selection is the default at every point: nothing to compare
                spec = {"collective": sel.collective, "points": timed, "rounds": o.rounds,
                        "rule": rule, "progress": o.progress}
                if lib.env_forced(sel.collective):   # read at start-up only, or read-only through MPI_T
                    result = command.run_speed_env(spec, self.np, lambda coll, label: lib.env_for(coll, label, 0),
                                                   o.mpiexec)
                else:   # Open MPI across hosts: coll/han's default beside the arms it may not take (verify/han.py)
                    if sel.collective in self.han_collectives:
                        spec["han"] = True
                    result = command.run_speed(spec, self.np, o.mpiexec)
                if result is None:
                    return False
                result["collective"] = sel.collective
                results[sel.collective] = result
                rows, self.summaries[sel.collective] = speed.summarize(result)
                self.summaries[sel.collective]["timing"] = result.get("timing")
                for row in rows:   # for a person reading the JSON: the names beside the ids (the ids stay)
                    row["quadsel_name"] = named_label(library, row["collective"], row["quadsel"])
                    row["best_name"] = None if row["best"] is None else named_label(library, row["collective"],
                                                                                   row["best"])
                self.rows += rows
        self.stats = statistics.annotate(results, self.rows, self.summaries, o.confidence, self.np, load_before)
        for coll, points in untimed.items():
            if points:
                self._untimed(coll, points)
        self.stats["interference"] = sampler.summary() if sampler is not None else None
        self.notes = [f"IGNORED: {r.ignored}; the quadsel arm is the library default"
                      for r in self.loaded.rules_files if r.ignored]
        self.notes += [line for line in (han.note(self.rows),) if line]
        return True

    def _untimed(self, coll, points):
        """Rows and counts of the points not timed (time_default_points False): the selection is the default there,
        its speed-up 1 by definition, as a timed default point's (statistics.point_statistics)."""
        rows = [{"collective": coll, "comm_size": p["comm"], "msg_size": p["msg"],
                 **({"nodes": p["layout"][0], "ppn": p["layout"][1]} if p.get("layout") else {}),
                 **({"han": True} if p.get("layout") and p["layout"][0] > 1 and coll in self.han_collectives else {}),
                 "quadsel": speed._key(p["quadsel"]), "quadsel_name": named_label(self.library, coll, "default"),
                 "best": None, "best_name": None, "vs_best": None, "speedup": 1.0, "speedup_low": 1.0,
                 "speedup_high": 1.0, "verdict": "default", "rounds": 0, "log_ratios": [], "timed": False}
                for p in points]
        self.rows += rows
        s = self.summaries.setdefault(coll, {"points": 0, "changed_points": 0, "geomean_speedup": None,
                                             "geomean_low": None, "geomean_high": None, "log_mean": None,
                                             "log_se": None, "dof": None, "worst_vs_best": None,
                                             "verdicts": {v: 0 for v in statistics.VERDICTS}})
        faster = s["verdicts"].get("faster", 0)
        s["points"] += len(rows)
        s["verdicts"]["default"] = s["verdicts"].get("default", 0) + len(rows)
        s["untimed_default_points"] = len(rows)
        s["faster_than_default"] = faster / s["points"]

    def check(self):
        """The follow check: every file the library would load, at the timed points (verify/follow.py)."""
        o, library, loaded = self.o, self.library, self.loaded
        self.checks = {}
        points, check_np = check_points(self.plans, self.np, o.check_comm_sizes)
        if loaded.trees:   # one file, or (a forest, no ppn key in the library's format) one file per ppn...
            base = rules_module(library).load_base(mpich_library()) if self.lib.whole_selection else None   # once
            files = layout_plan.forest_rules(library, loaded.trees, points)
            with follow.ForcedLaunches() as forced:   # the forced side of every check below in one launch where it
                # can, and the probe built once for them all
                forced.prefetch([([s for s in sels if s.collective == fn.collective and s.collective in mine], mine,
                                  fn.collective in self.han_collectives) for _, fns, sels, mine in files for fn in fns],
                                library, check_np, mpiexec=o.mpiexec, echo=self.echo)
                for source, fns, sels, mine in files:
                    for fn in fns:   # ...cut to each collective: a nested call of another collective (the bcast of an
                        own = [s for s in sels if s.collective == fn.collective and s.collective in mine]
                        if not own:  # MPICH smp allreduce) then runs the library's own choice in the file launch too,
                            continue  # as in the forced one it is compared with (follow.py, _own_rules)
                        with tempfile.TemporaryDirectory(prefix="quadsel-rules-") as workdir:
                            path = os.path.join(workdir, "rules")
                            write_text(path, emit_rules(library, [fn], base))   # and coll/han's file of it (han.py)
                            self._check_file(source, own, path, points, check_np, mine,
                                             han.write_han_file(workdir, [fn], self.han_collectives), forced)
        for rules in loaded.rules_files:
            self._check_file(rules.path, [s for s in loaded.selections if getattr(s, "file", None) is rules],
                             rules.path, points, check_np)
        if o.check_methods and self.by_layout:
            self.echo("note: --check-methods checks 2-D trees only; a layout forest is checked per layout with its "
                      "own file")
        elif o.check_methods:
            self._check_methods(points, check_np)

    def _check_file(self, source, selections, path, points, check_np, mine=None, han_rules=None, forced=None):
        mine = points if mine is None else mine
        if source.startswith("emitted from the trees"):   # a tree says nothing outside its measured sizes
            mine = {s.collective: [p for p in mine[s.collective] if min(s.comm_sizes) <= p[0] <= max(s.comm_sizes)]
                    for s in selections if s.collective in mine}
            left = sum(len(points[c]) - len(v) for c, v in mine.items()) if not self.by_layout else 0
            if left:
                self.echo(f"note: the follow check of the trees skips {left} point(s) outside their measured "
                          "communicator sizes (verify the rules file to check what the library does there)")
        try:
            self.checks.setdefault(source, []).extend(follow.check_follows(
                selections, path, self.library, check_np, points=mine, mpiexec=self.o.mpiexec, echo=self.echo,
                identify=True, han_rules=han_rules, forced=forced))
        except QuadselError as exc:   # e.g. the library aborts loading the file: keep the timings
            self._failed(source, str(exc))

    def _failed(self, source, why):
        self.failed[source] = (self.failed[source] + "; " if source in self.failed else "") + why
        self.notes.append(f"RULES CHECK FAILED ({source}): {why}")
        self.echo(self.notes[-1])

    def _check_methods(self, points, check_np):
        methods = method_files.measured_methods(self.o.measurements, self.loaded.trees)
        if not any(c in points for c in methods):
            self.echo("note: --check-methods: no measured method to check (give --measurements, or verify a tree)")
        with tempfile.TemporaryDirectory(prefix="quadsel-methods-") as workdir:
            try:
                self.by_method = method_files.check_methods(methods, points, self.library, check_np,
                                                            lambda fns: emit_rules(self.library, fns), workdir,
                                                            mpiexec=self.o.mpiexec, echo=self.echo)
            except QuadselError as exc:
                self._failed("one file per method", str(exc))
                self.by_method = {}
        for coll, results in self.by_method.items():
            self.notes.append(f"{coll}, one rules file per measured method: " + "; ".join(
                f"{label} " + (", ".join(f"{v} {k}" for k, v in sorted(follow.summary(c).items())) or "—")
                for label, c in results.items()))

    def decide(self):
        """The decision (verify/verdict.py), the JSON document and the table."""
        o, rows, checks, stats = self.o, self.rows, self.checks, self.stats
        default_ran.for_rows(rows, checks, self.library)
        status = verdict.follow_status(checks)
        for r in rows:
            r["followed"] = status.get(verdict.point_key(r)) if checks is not None else None
        evidence = verdict.proof(rows, checks, None if checks is not None else (
            "--no-check-rules" if not o.check_rules else "started under mpiexec: the check launches jobs of its own"),
            self.failed)
        stats["decision"], stats["reason"] = verdict.decide(rows, stats["overall"], evidence, o.min_gain,
                                                            interference=stats["interference"], busy_ok=o.busy_ok)
        stats.update(min_gain=o.min_gain, proof=evidence, seconds=self.seconds)   # the timing jobs, the follow check
        notes = self.notes
        per_layout = layout_plan.layout_summary(rows, checks) if self.by_layout else None
        if per_layout is not None:
            stats["layouts"] = per_layout
            notes = layout_plan.format_layout_lines(per_layout) + notes
        notes = statistics.format_lines(stats, self.summaries) + notes
        return Outcome(command.format_table(rows, self.summaries, checks, notes, self.library), self.document(),
                       self.failed, statistics.regression(rows), verdict.exit_status(evidence, rows))

    def document(self):
        """verify --json (docs/schemas/verify-result.schema.json)."""
        loaded, checks = self.loaded, self.checks
        return {
            "library": self.library, "library_version": self.library_version.strip().splitlines()[0], "np": self.np,
            "cpus": os.cpu_count(), "oversubscribed": self.oversubscribed,
            "hosts": {"mpiexec_args": hosts.prefix() or None, "under_own_launcher": self.inside}
            if self.on_hosts else None,
            "inputs": [{"path": t.path, "kind": "forest" if t.has_layout else "tree", "collectives": [t.collective]}
                       for t in loaded.trees] +
                      [{"path": r.path, "kind": r.format, "collectives": r.collectives, "ignored": r.ignored,
                        "warnings": r.warnings} for r in loaded.rules_files],
            "summary": self.summaries, "points": self.rows, "statistics": self.stats,
            "rules_followed": None if checks is None else {
                "counts": follow.summary([x for c in checks.values() for x in c]),
                "files": {source: follow.summary(c) for source, c in checks.items()},
                "points": [dict(x.__dict__, file=source) for source, c in checks.items() for x in c],
                "methods": None if self.by_method is None else {
                    coll: {label: follow.summary(c) for label, c in results.items()}
                    for coll, results in self.by_method.items()},
                "failed": self.failed}}


def _default_only(point):
    """A point verify would time on the default alone: the selection is the default and there is no best arm."""
    from .forcing import DEFAULT_ARM, norm_arm
    return norm_arm(point["quadsel"]) == DEFAULT_ARM and not point.get("candidates")


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
