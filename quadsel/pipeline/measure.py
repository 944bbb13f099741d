"""Measure one collective on the real MPI in a job started from here: what `quadsel measure --np N` and `quadsel
tune` both run (the user's own `mpiexec -n N quadsel measure ...` runs the sweep itself: measure/runner.py).

The measurement is a runner.Spec; the job's ranks read it from a file (pipeline/measure_spec.py, pipeline/measure_job.py),
not from a command line rebuilt from options. One launch interleaves every method through MPI_T; where the
library cannot force in-process (read at start-up only, or MPI_T unavailable) one launch per method, each forced
through the environment -- a plan that needs in-process forcing (--adaptive, --sample) is then refused with
NeedsFullSweep, a typed refusal, before anything is measured where the library's class can tell.
"""

import os
import re
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass

from ..errors import QuadselError
from ..measure import launch




class NeedsFullSweep(QuadselError):
    """--adaptive or --sample cannot run: this library cannot force the collective in-process (MPI_T)."""


class MeasureFailed(QuadselError):
    """The job failed with exit status `code`; the message is its own error line, which `said` says it printed
    itself already (no on_line: the job's stderr went to ours)."""

    def __init__(self, message, code, said):
        super().__init__(message)
        self.code, self.said = code, said


@dataclass
class Measured:
    stopped: bool        # ended at `stop_after`: the finished rows are kept, the rest is not measured
    seconds: float


def measure(spec, np_, mpiexec=None, mpiexec_args=None, on_line=None, stop_after=None):
    """Measure `spec` with `np_` ranks (on the user's hosts with `mpiexec_args`). on_line(text): every line the job
    prints (its progress reports among them, measure/progress.py), else they go to stderr; stop_after: seconds,
    then the job is ended (SIGTERM: its finished rows are kept). MeasureFailed with the job's error line."""
    from ..libraries import open_library
    from ..measure import launch, output, runner
    from ..measure.output import CONTINUED
    from ..measure.progress import LAUNCH_ENV, START_ENV
    started = time.monotonic()
    if spec.comm_sizes is None:
        if np_ < 2:
            raise QuadselError("--np must be at least 2 to measure a collective")
        spec.comm_sizes = list(range(2, np_ + 1))
    runner.check_spec(spec, np_)
    library = open_library(launch.library_without_init())
    labels = library.resolve(spec.collective, spec.algorithms) + spec.alphas   # unknown ones fail here, before mpiexec
    if (spec.adaptive or spec.sample) and library.env_forced(spec.collective):
        raise NeedsFullSweep(f"{library.title}: --{'adaptive' if spec.adaptive else 'sample'} needs in-process "
                             f"forcing (MPI_T), and this library forces {spec.collective} through the environment "
                             "only: measure without it")
    output.check_unlocked(spec.output)   # a file another run still writes: one line, no MPI job
    methods = library.methods(spec.collective, labels, spec.segments)
    if spec.resume:
        from ..measure.metadata import resume_grid
        grid = resume_grid(spec, methods)
        if library.env_forced(spec.collective):
            grid["methods"] = None   # one launch per method: each launch's metadata names its own method only
        output.check_resume(spec.output, spec.collective, library.name, grid)
    runner.check_methods(library, spec.collective, labels, spec.algorithms)
    exe = launch.find_mpiexec(mpiexec)
    flavor = launch.mpiexec_flavor(exe)
    passed = shlex.split(mpiexec_args) if mpiexec_args else []
    extra = library.forcing_environment()   # coll/han stays on: the ranks keep it off the forced methods (multinode.py)
    if spec.progress and on_line is None and sys.stderr.isatty():
        extra["QUADSEL_MEASURE_TTY"] = "1"     # the ranks' stderr is a pipe to mpiexec: say it ends on a terminal
    if on_line is not None:
        from ..measure.progress import REPORT_ENV
        extra[REPORT_ENV] = "1"                # progress as report lines for the caller, not a bar
    job = _Job(spec, np_, exe, flavor, passed, on_line, None if stop_after is None else started + stop_after)
    with tempfile.TemporaryDirectory(prefix="quadsel-measure-") as workdir:
        job.workdir = workdir
        if not library.env_forced(spec.collective):
            status = os.path.join(workdir, "fallback")   # the ranks say here, quietly, that they cannot force
            job.run(spec, launch.launch_env(flavor, dict(extra, **{runner.FALLBACK_STATUS: status}), spec.command))
            if not os.path.exists(status) or job.stopped:
                return Measured(job.stopped, round(time.monotonic() - started, 1))
            with open(status) as handle:
                reason = handle.read().strip()
            if spec.adaptive or spec.sample:
                raise NeedsFullSweep(reason)
            job.say(f"quadsel measure: {reason}: measuring one launch per method, each forced through the "
                    "environment")
        else:
            job.say(f"quadsel measure: {library.title} forces {spec.collective} through the environment only "
                    f"(read at start-up): one launch per method ({len(methods)} launches)")
        start = f"{time.time():.3f}"      # one progress display over all launches (progress.py)
        for i, (label, seg) in enumerate(methods):
            forcing = {} if label in spec.alphas else library.env_for(spec.collective, label, seg)
            forcing.update({LAUNCH_ENV: f"{i + 1}/{len(methods)}", START_ENV: start})
            env = launch.launch_env(flavor, dict(extra, **forcing), spec.command)
            if i:
                env[CONTINUED] = "1"   # one stream (-o -): the first launch wrote the header
            from dataclasses import replace
            job.run(replace(spec, env_method=(label, seg)), env)
            if job.stopped:
                break
    return Measured(job.stopped, round(time.monotonic() - started, 1))


class _Job:
    """The launches of one measurement: each its spec file, the same launcher, one deadline."""

    def __init__(self, spec, np_, exe, flavor, passed, on_line, deadline):
        self.np, self.exe, self.flavor, self.passed = np_, exe, flavor, passed
        self.on_line, self.deadline, self.stopped, self.workdir = on_line, deadline, False, None
        self.said, self.held, self.framed = [], [], False

    def say(self, text):
        (self.on_line or (lambda line: sys.stderr.write(line + "\n")))(text)

    def _line(self, text):
        """Every line of the job: the caller's (tune), or passed on -- but a launcher's framed notice (Open MPI's
        block between lines of dashes) and its `[host:pid] ...` diagnostics, which are held until the job ends
        (run): a failure is then said in a few lines, not thirty."""
        self.said.append(text)
        del self.said[:-200]
        if self.on_line is not None:
            self.on_line(text)
            return True
        if launch.DASHES.match(text):
            self.framed = not self.framed
            self.held.append(text)
            return True
        if self.framed or launch.LAUNCHER_NOTE.match(text):
            self.held.append(text)
            return True
        return False

    def launcher_failure(self):
        """The launcher's own notice in one line (its first sentence and its `Name: value` lines), or None."""
        lines = [line.strip() for line in self.held if line.strip() and not launch.DASHES.match(line)]
        lines = [line for line in lines if not launch.LAUNCHER_NOTE.match(line)] or lines   # its notice first
        if not lines:
            return None
        first = " ".join(lines[:4]).split(". ")[0].rstrip(".")
        facts = [line for line in lines if re.match(r"^[A-Z][A-Za-z ]{1,30}:\s+\S", line)]
        return "; ".join([first] + facts[:4])

    def run(self, spec, env):
        import subprocess
        from ..measure import launch
        from . import measure_spec
        from ..output import write_text
        path = os.path.join(self.workdir, "spec.json")
        write_text(path, measure_spec.dumps(spec))
        timeout = None if self.deadline is None else max(0.1, self.deadline - time.monotonic())
        try:
            code = launch.run(launch.launch_command(self.exe, self.flavor, self.np, [path], prefix=self.passed), env,
                              timeout=timeout, on_line=self._line)
        except subprocess.TimeoutExpired:
            self.stopped = True    # ended at the deadline: what finished is kept
            return
        errors = [line for line in self.said if line.startswith("Error: ")]
        if code and not errors and self.launcher_failure():     # mpiexec failed before any rank said a word
            raise MeasureFailed(f"measuring {spec.collective} failed: {os.path.basename(self.exe)} (exit {code}): "
                                f"{self.launcher_failure()}", code, said=False)
        # The launcher's notice of a job that ran is passed on as it was -- unless a rank said what went wrong in
        # its own `Error:` line: the notice then only says that the job ended (MPI_Abort's), and it may reach us
        # before that line, which the launcher forwards from the rank on its own time (a fresh clone's full disk).
        if self.held and self.on_line is None and not errors:
            sys.stderr.write("\n".join(self.held) + "\n")
        self.held = []
        if code:
            last = errors[-1][len("Error: "):] if errors else (   # a rank's exception, else its last line
                launch.failure_reason(self.said) or f"the job ended with status {code}")
            raise MeasureFailed(f"measuring {spec.collective} failed: {last}", code, said=self.on_line is None)
