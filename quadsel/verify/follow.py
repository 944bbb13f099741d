"""Proof that the MPI library follows an emitted rules file (not only that it parses it).

Open MPI silently ignores a whole rules file whose first message rule is not 0, and MPICH silently keeps
its own choice where a file does not match: a parse check proves nothing. So two launches are compared:

  file    the library loads the emitted file (OMPI_MCA_coll_tuned_dynamic_rules_filename /
          MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE / I_MPI_TUNING: the library class's `rules_environment`, from
          which tune writes tuned.env too) and decides by itself;
  forced  no file; every method the selection uses and the library default are forced through MPI_T.

At every point the fingerprint of the file launch must equal the forced fingerprint of the method the
selection chooses there (quadsel.verify.fingerprint): a tree's method (the file is the one emitted from
the trees), or for a rules file what quadsel.targets.rules_file reads the library doing with it. Where that
method's fingerprint equals the default's the point cannot tell them apart and is reported as such.
"""

import json
import os
import sys
import tempfile
from dataclasses import dataclass

from ..errors import QuadselError
from ..libraries import get as get_library
from ..measure import launch
from ..output import write_text
from .forcing import DEFAULT_ARM, arm_key, json_arm, norm_arm
from .probe import environment as probe_environment


@dataclass
class PointCheck:
    collective: str
    comm: int
    msg: int
    method: str                 # arm key ("label:segsize[:param=value]") the selection chooses
    status: str                 # follows | differs | indistinguishable | unchecked
    matches: list               # forced arms whose fingerprint equals the file launch's
    default_ran: dict = None    # which algorithm the library default ran there (verify/default_ran.identify)
    layout: list = None         # [nodes, ppn] of a layout forest's point (verify/layouts.py); None: the first comm ranks


def pick_at(sel, point, call=None):
    """The selection's Pick at a check point (comm, msg) or (comm, msg, nodes, ppn): a forest picks per ppn."""
    if len(point) > 2:
        return sel.pick(point[0], point[1], call=call, ppn=point[3])
    return sel.pick(point[0], point[1], call=call)


def file_environment(library, rules_path, multinode=None, collectives=None):
    """The environment of the launch that loads `rules_path` for `collectives` (None: all it holds): the library's
    `rules_environment` of it (and of the multi-node component's rules file `multinode`), which tune's tuned.env is
    written from too; for a file of `export` lines (Intel MPI's I_MPI_ADJUST strings, -t impi-adjust) what `. FILE`
    exports."""
    from ..inputs import read_text
    from ..targets.impi_adjust import environment
    from ..targets.rules_file import detect_format
    text = read_text(rules_path, what="rules file")
    if detect_format(text) == "impi-adjust":
        return environment(text, rules_path)
    return get_library(library).rules_environment(os.path.abspath(rules_path), multinode, collectives)


def _launch(np_, spec, env_extra, python, mpiexec, timeout, workdir, han=False, marked=None):
    """{point: {arm key or "library": fingerprint}} of one fingerprint launch (a spec {"batch": [spec, ...]}: a list
    of them, one per spec); `marked` (a set) gets the points whose communicator coll/han may take (spec `han`)."""
    spec_path = os.path.join(workdir, f"spec{len(os.listdir(workdir))}.json")
    out_path = spec_path.replace("spec", "out")
    with open(spec_path, "w") as handle:
        json.dump(spec, handle)
    flavor = launch.mpiexec_flavor(mpiexec)
    from . import hosts
    cmd = hosts.command(mpiexec, flavor, np_, (python, "quadsel.verify.fingerprint"), [spec_path, out_path], env_extra)
    env = hosts.environment(flavor, env_extra, han=han)
    done = launch.run(cmd, env, timeout=timeout, capture=True)   # Ctrl-C: the job is stopped, not orphaned
    if done.returncode != 0 or not os.path.exists(out_path):
        why = launch.failure_reason(done.stderr.splitlines()) or "it said nothing"
        raise QuadselError(f"fingerprint launch failed (exit {done.returncode}): {why}")
    with open(out_path) as handle:
        out = json.load(handle)
    if "batch" in spec:     # ForcedLaunches: one {point: arms} per spec of the batch
        return [_by_point(part["points"]) for part in out["batch"]]
    return _by_point(out["points"], marked)


def _by_point(points, marked=None):
    key = lambda p: (p["comm"], p["msg"]) + tuple(p.get("layout") or ())   # noqa: E731
    if marked is not None:
        marked.update(key(p) for p in points if p.get("han"))
    return {key(p): p["arms"] for p in points}


def check_follows(fns, rules_path, library, np_, points=None, kind=None, python=None, mpiexec=None,
                  timeout=900, probe=True, echo=None, identify=False, han_rules=None, forced=None):
    """[PointCheck] for every (comm <= np_, msg) grid point of the selections, or of `points` {collective: [(n, m)]}
    (then only those collectives).

    fns: DecisionFunctions (rules_path is the file emitted from them) or selections
    (quadsel.verify.selection; a rules file's own selections with rules_path that file).
    probe: preload quadsel.verify.probe into every launch where it can be built (`echo` says where not).
    identify: also force every algorithm of the collective in the forced launch (MPI_T-forced libraries), so that
    each PointCheck's `default_ran` names the algorithm the default ran (verify/default_ran.py).
    han_rules: Open MPI across hosts, for collectives coll/han takes: its rules file (verify/han.py), which the file
    launch loads beside `rules_path` with coll/han on, as `quadsel tune` deploys the pair. Then both launches keep
    coll/han on and the forced arms off it, the fingerprint is the function probe's alone (no pml/monitoring), and
    where the selection keeps the default on 2+ nodes the check is that coll/han's algorithm ran (`_status`).
    forced: a ForcedLaunches whose one launch already forced these selections' methods (`prefetch`): used where it
    covers a check, else the check forces them in a launch of its own.
    """
    from .default_ran import identify as identify_default
    python = python or sys.executable
    mpiexec = launch.find_mpiexec(mpiexec)
    lib = get_library(library)
    checks = []
    with tempfile.TemporaryDirectory(prefix="quadsel-follow-") as workdir:
        probe_env, why = (forced.probe_environment(library, python) if forced is not None else
                          probe_environment(library, workdir, python)) if probe else ({}, None)
        if why and echo and lib.probe:   # a library without a probe (Intel MPI) is no news (docs/deploy.md)
            echo(f"note: the follow check runs without its probe: {why}")
        for job in _jobs(fns, points, library, np_, kind, probe_env, why, han_rules is not None):
            coll, spec, extra = job.collective, job.spec, job.extra
            files = file_environment(library, _own_rules(rules_path, coll, workdir), han_rules, [coll])
            on_han = set()   # the points whose communicator coll/han may take
            by_file = _launch(np_, dict(spec, forced=None), dict(extra, **files), python, mpiexec, timeout, workdir,
                              han=job.han, marked=on_han)
            by_force = forced.lookup(job) if forced is not None and identify else None
            if by_force is not None:
                pass
            elif lib.env_forced(coll):   # read at start-up only: one launch per forced arm
                by_force = _forced_by_env(np_, spec, job.forced, library, python, mpiexec, timeout, workdir, extra)
            elif identify:
                try:
                    by_force = _launch(np_, dict(spec, forced=job.forced, identify=True), extra, python, mpiexec,
                                       timeout, workdir, han=job.han)
                except QuadselError as exc:   # an algorithm forced only to be named crashed: check without them
                    if echo:
                        echo(f"note: {coll}: the default's algorithm is named among the selected methods only "
                             f"(forcing every algorithm failed: {exc})")
                    by_force = _launch(np_, dict(spec, forced=job.forced), extra, python, mpiexec, timeout, workdir,
                                       han=job.han)
            else:
                by_force = _launch(np_, dict(spec, forced=job.forced), extra, python, mpiexec, timeout, workdir,
                                   han=job.han)
            for p in job.grid:
                name = arm_key(job.chosen[p].arm())
                got, arms = by_file.get(p, {}).get("library"), by_force.get(p, {})
                status, matches = _status(name, got, arms, p in on_han and job.chosen[p].is_default,
                                          coll if p in on_han and not job.chosen[p].is_default else None)
                checks.append(PointCheck(coll, p[0], p[1], name, status, matches,
                                         identify_default(arms) if identify else None, list(p[2:4]) or None))
    return checks


@dataclass
class _Job:
    """One selection's check: its points, the method it picks at each, the arms the forced launch forces, the
    launches' spec and environment."""
    collective: str
    grid: list
    chosen: dict
    forced: list
    spec: dict
    extra: dict
    han: bool


def _jobs(fns, points, library, np_, kind, probe_env, why, han):
    """The _Job of each selection `points` asks for (every one without `points`)."""
    from ..targets.library_call import CallModel
    from .selection import as_selection
    out = []
    for sel in [as_selection(f, library) for f in fns]:
        coll = sel.collective
        if points is not None and coll not in points:
            continue   # e.g. a rules file's other collectives, not verified
        grid = (points or {}).get(coll) or [(int(n), int(m)) for n in (sel.comm_sizes or []) if n <= np_
                                            for m in (sel.msg_sizes or [])]
        if not grid:
            raise QuadselError(f"{coll}: no communicator size <= {np_} to check")
        if han and not probe_env:
            raise QuadselError(f"{coll}: the follow check across nodes needs the function probe to see coll/han "
                               f"run ({why or 'not asked'}); pml/monitoring, the traffic counter, crashes "
                               "coll/han's bcast on Open MPI 5.0.11")
        kind_of = "probe" if han else (kind or _kind(library, sel, grid, bool(probe_env)))
        # the order fingerprint calls with a user operation: an MPICH selection may test that
        call_of = (lambda m: CallModel.of_order_call(m)) if kind_of == "order" else (lambda m: None)
        grid = [tuple(int(v) for v in p) for p in grid]
        chosen = {p: pick_at(sel, p, call=call_of(p[1])) for p in grid}
        forced = [json_arm(a) for a in [DEFAULT_ARM] + sorted({norm_arm(c.arm()) for c in chosen.values()
                                                               if not c.is_default})]
        extra = dict(probe_env or {})
        if any(len(p) > 2 for p in grid):   # a layout: MPICH's node map must stay the job's (verify/layouts.py)
            extra.pop("MPIR_CVAR_NOLOCAL", None)
        if kind_of == "traffic":
            from .traffic import MONITORING_ENV
            extra.update(MONITORING_ENV)
        spec = {"collective": coll, "kind": kind_of, "points": [list(p) for p in grid], "han": han}
        out.append(_Job(coll, grid, chosen, forced, spec, extra, han))
    return out


class ForcedLaunches:
    """The forced side of many follow checks in as few launches as their environments allow (issue 40: a
    verify of 14 layout forests made two launches per collective and layout file; the forced one loads no file,
    so one launch serves every file's check of every collective). `prefetch` runs them; `lookup` answers a
    check from them when they forced all its points and arms, else None (the check then launches its own)."""

    def __init__(self):
        self.got = {}     # (collective, kind, han) -> ({point: {arm key: fingerprint}}, {arm keys forced})
        self._dir = tempfile.TemporaryDirectory(prefix="quadsel-forced-")
        self._probe = {}  # (library, python) -> probe.environment's (env, why): the shim built once, not per check

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._dir.cleanup()

    def probe_environment(self, library, python):
        key = (library, python)
        if key not in self._probe:
            self._probe[key] = probe_environment(library, self._dir.name, python)
        return self._probe[key]

    def prefetch(self, items, library, np_, python=None, mpiexec=None, timeout=900, probe=True, echo=None):
        """items: [(fns, points, han)] as check_follows will be asked them. Failure is no error: every check
        then forces its own methods, as before."""
        lib = get_library(library)
        python = python or sys.executable
        mpiexec = launch.find_mpiexec(mpiexec)
        workdir = self._dir.name
        probe_env, why = self.probe_environment(library, python) if probe else ({}, None)
        merged, seen_points = {}, {}     # (env, han) -> {(collective, kind): spec}; id(spec) -> its points
        for fns, points, han in items:
            try:
                jobs = _jobs(fns, points, library, np_, None, probe_env, why, han)
            except QuadselError:
                continue     # the check itself says why
            for job in jobs:
                if lib.env_forced(job.collective):
                    continue
                group = merged.setdefault((json.dumps(job.extra, sort_keys=True), job.han), {})
                spec = group.setdefault((job.collective, job.spec["kind"]), dict(
                    job.spec, points=[], forced=[json_arm(DEFAULT_ARM)], identify=True))
                seen = seen_points.setdefault(id(spec), set())     # a set: a sweep's thousands of points
                spec["points"] += [list(p) for p in job.grid if p not in seen and not seen.add(p)]
                spec["forced"] += [a for a in job.forced if a not in spec["forced"]]
        for (env, han), specs in merged.items():
            try:
                outs = _launch(np_, {"batch": list(specs.values())}, json.loads(env), python, mpiexec, timeout,
                               workdir, han=han)
            except QuadselError as exc:
                if echo:
                    echo(f"note: the follow check forces each collective in a launch of its own (one launch "
                         f"for all failed: {exc})")
                continue
            for (coll, kind), out in zip(specs, outs):
                self.got[(coll, kind, han)] = (out, {arm_key(norm_arm(a)) for a in specs[(coll, kind)]["forced"]})

    def lookup(self, job):
        entry = self.got.get((job.collective, job.spec["kind"], job.han))
        if entry is None:
            return None
        by_point, arms = entry
        if not all(p in by_point for p in job.grid) or not {arm_key(norm_arm(a)) for a in job.forced} <= arms:
            return None
        return {p: by_point[p] for p in job.grid}


def _status(name, got, arms, multinode_default, own=None):
    """(status, matches) of one point: the file launch's fingerprint `got` against the forced ones `arms`.
    `multinode_default`: the selection keeps the default on a communicator coll/han takes, so where coll/han's
    algorithm ran in the forced default the proof is that it ran in the file launch too (its functions and their
    calls on every rank): coll/han's steps follow coll/tuned's rules file in the file launch, so the rest of the
    fingerprint may differ. Where coll/han hands the call to coll/tuned itself (one rank per node) the usual rule.
    `own`: a collective whose non-default choice is checked on a communicator coll/han takes: its own functions
    only are compared (probe.own_part: its nested calls reach coll/han in one launch and not in the other)."""
    from .probe import multinode_part, own_part
    if got is None or name not in arms:
        return "unchecked", []
    if own is not None:
        got, arms = own_part(got, own), {k: own_part(v, own) for k, v in arms.items()}
    mine, theirs = (multinode_part(got), multinode_part(arms[name])) if multinode_default else ([], [])
    if mine or theirs:
        if mine == theirs:
            return "follows", [name]
        return "differs", sorted(k for k, v in arms.items() if v == got or (mine and multinode_part(v) == mine))
    matches = sorted(k for k, v in arms.items() if v == got)
    if arms[name] != got:
        return "differs", matches
    if arms.get(arm_key(DEFAULT_ARM)) == got:
        return "indistinguishable", matches
    return "follows", matches


def _own_rules(rules_path, collective, workdir):
    """The rules file the follow check loads for `collective`: an Open MPI classic file cut down to that collective's
    rules (targets/ompi_rules.py `one_collective`), else the file itself. The forced launches it is compared with
    load no file, so with every collective's rules loaded a nested call (the reduce of reduce_scatter_block's
    basic_linear, the bcast of a composed allreduce) would follow another collective's rules in one launch and not
    in the other, and a followed rule would read "differs". Whether the whole file is loaded at all is the
    reader's finding (rules_file.RulesFile.ignored, Open MPI's own conditions)."""
    from ..inputs import read_text
    from ..libraries import openmpi
    from ..targets import ompi_rules
    from ..targets.rules_file import detect_format
    text = read_text(rules_path, what="rules file")
    if detect_format(text) != "ompi-rules":
        return rules_path
    cut = ompi_rules.one_collective(text, rules_path, openmpi.COLLECTIVE_IDS[collective])
    if cut is None:
        return rules_path
    path = os.path.join(workdir, f"{collective}.rules")
    write_text(path, cut)
    return path


def _kind(library, sel, grid, probed):
    """The fingerprint of a collective's check: Open MPI's traffic; else the reduction order, except for MPICH
    reductions (with the probe) whose selection picks an algorithm MPICH runs for built-in operations only
    (libraries/fallbacks: `builtin-op`): the order call's user operation would turn it away, so their
    check is the probe's messages of verify's own call ("sends")."""
    from ..libraries import fallbacks
    from ..libraries.base import is_reduction
    from ..targets.library_call import CallModel
    lib = get_library(library)
    if lib.fingerprint != "order":
        return lib.fingerprint
    if not (probed and lib.probe == "sends" and is_reduction(sel.collective)):
        return "order"
    for point in grid:
        n, m = point[0], point[1]
        label = pick_at(sel, point, call=CallModel.of_verify_call(sel.collective, m)).arm()[0]
        user, built_in = (fallbacks.replacement(library, sel.collective, label, fallbacks.Call(n, m // 8, 8,
                                                                                               built_in_op=b))
                          for b in (False, True))
        if user != built_in:
            return "sends"
    return "order"


def _forced_by_env(np_, spec, forced, library, python, mpiexec, timeout, workdir, extra=None):
    """{(comm, msg): {arm_key: fingerprint}} from one launch per arm, each forced by its environment (the library's
    `env_forced` collectives: Intel MPI's, Open MPI 5.0.x allgatherv, read-only through MPI_T); with spec `han` a
    forced arm runs where coll/han may not take it, the default where it may."""
    from ..libraries.fallbacks import fails
    out = {}
    for arm in forced:
        label, segsize = norm_arm(arm)[0], norm_arm(arm)[1]
        # forced for the whole job: never at a point where the library fails the call (two_proc at 4 ranks ended
        # the launch of every point, and with it the check: the 2 x 2 Slurm run's allgatherv)
        points = [p for p in spec["points"] if not fails(library, spec["collective"], label, segsize, p[0], p[1])]
        if not points:
            continue
        env = dict(extra or {}, **get_library(library).env_for(spec["collective"], label, 0))
        flat = norm_arm(arm) != DEFAULT_ARM
        got = _launch(np_, dict(spec, points=points, forced=None, flat_library=flat), env, python, mpiexec, timeout,
                      workdir, han=bool(spec.get("han")))
        for point, arms in got.items():
            if "library" in arms:
                out.setdefault(point, {})[arm_key(arm)] = arms["library"]
    return out


def summary(checks):
    counts = {}
    for c in checks:
        counts[c.status] = counts.get(c.status, 0) + 1
    return counts


def default_ran(library, collective, points, np_, algorithms, python=None, mpiexec=None, timeout=900, probe=True,
                echo=None, keep_selection=False):
    """{(comm, msg): DefaultRan} of what the library default runs at each point (comm <= np_).

    library: its quadsel name (openmpi, mpich, intelmpi); algorithms: the labels to force (every forcible one
    of the collective: libraries' `algorithms(collective)`); python: the ranks' interpreter. keep_selection: the
    launch keeps the selection files of this environment (trace: the default it traced ran with them)."""
    from ..libraries.base import is_reduction
    from .default_ran import DefaultRan, compare
    python = python or sys.executable
    mpiexec = launch.find_mpiexec(mpiexec)
    lib = get_library(library)
    points = sorted({(int(n), int(m)) for n, m in points if n <= np_})
    arms = [json_arm(DEFAULT_ARM)] + [json_arm((str(lab), 0, ())) for lab in algorithms]
    with tempfile.TemporaryDirectory(prefix="quadsel-default-ran-") as workdir:
        extra, why = probe_environment(library, workdir, python) if probe else ({}, "not asked")
        extra = dict(extra or {})
        if keep_selection:
            extra.update({name: os.environ[name] for name in launch.selection_variables()})
        if why and echo and lib.probe:
            echo(f"note: which algorithm the default ran is judged without the probe: {why}")
        if lib.fingerprint == "traffic":
            from .traffic import MONITORING_ENV
            extra.update(MONITORING_ENV)
            kind = "traffic"
        else:
            kind = "order"
            if not extra and not is_reduction(collective):
                return {p: DefaultRan("unchecked", [], f"no fingerprint of {library}'s {collective} without the probe")
                        for p in points}
        spec = {"collective": collective, "kind": kind, "points": [list(p) for p in points]}
        if lib.env_forced(collective):
            by_arm = _forced_by_env(np_, spec, arms, library, python, mpiexec, timeout, workdir, extra)
        else:
            by_arm = _launch(np_, dict(spec, forced=arms), extra, python, mpiexec, timeout, workdir)
    functions = lib.probe == "functions" and bool(extra.get("LD_PRELOAD"))
    out = {}
    for p in points:
        got = by_arm.get(p, {})
        default = got.get(arm_key(DEFAULT_ARM))
        forced = {str(a[0]): got.get(arm_key(a)) for a in arms[1:]}
        out[p] = compare(default, forced, functions)
    return out
