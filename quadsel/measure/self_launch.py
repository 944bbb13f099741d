"""`quadsel measure --np N` starting its own MPI job (the Click code is cli/measure.py): the launch, the
fallback to one launch per method where MPI_T cannot force, and the job-size checks of a rank."""

import os
import shlex
import sys
import tempfile
import time

from ..errors import QuadselError
from ..libraries import open_library
from . import launch, output
from .output import CONTINUED
from .progress import LAUNCH_ENV, START_ENV


def check_job_size(np_):
    size = int(os.environ.get("OMPI_COMM_WORLD_SIZE") or os.environ.get("PMI_SIZE") or 0)
    if size and size != np_:
        raise QuadselError(f"--np {np_} but this MPI job has {size} ranks; drop --np under a launcher")


def with_default_sizes(spec):
    from . import runner   # lazy: numpy (and mpi4py) only when a measurement runs
    if spec.comm_sizes is None:
        size = runner._import_mpi().COMM_WORLD.Get_size()
        if size < 2:
            raise QuadselError("this job has 1 rank: launch under mpiexec -n N or pass --np N")
        spec.comm_sizes = list(range(2, size + 1))
    return spec



def self_launch(spec, np_, mpiexec, mpiexec_args, child_args):
    """`quadsel measure --np N`: start the job under mpiexec (one launch, or one per method where MPI_T cannot
    force); its exit status. `child_args(skip)`: this invocation's options as a command line, without `skip`."""
    from . import runner   # lazy: numpy (and mpi4py) only when a measurement runs
    if spec.comm_sizes is None:
        if np_ < 2:
            raise QuadselError("--np must be at least 2 to measure a collective")
        spec.comm_sizes = list(range(2, np_ + 1))
    runner.check_spec(spec, np_)
    library = open_library(launch.library_without_init())
    labels = library.resolve(spec.collective, spec.algorithms) + spec.alphas   # unknown ones fail here, before mpiexec
    # A file another run still writes, or one that cannot be resumed, is refused here: one line, no MPI job.
    output.check_unlocked(spec.output)
    if spec.resume:
        from .metadata import resume_grid
        grid = resume_grid(spec, library.methods(spec.collective, labels, spec.segments))
        if getattr(library, "env_only", False):
            grid["methods"] = None   # one launch per method: each launch's metadata names its own method only
        output.check_resume(spec.output, spec.collective, library.name, grid)
    exe = launch.find_mpiexec(mpiexec)
    flavor = launch.mpiexec_flavor(exe)
    passed = shlex.split(mpiexec_args) if mpiexec_args else []
    extra = library.forcing_environment()   # coll/han stays on: the ranks keep it off the forced methods (multinode.py)
    args = child_args(("mpiexec", "mpiexec_args", "comm_sizes", "msg_sizes")) + [
        "--msg-sizes", ",".join(map(str, spec.msg_sizes))]
    if not spec.layouts:      # --layouts gives them
        args += ["--comm-sizes", ",".join(map(str, spec.comm_sizes))]
    if spec.progress and sys.stderr.isatty():
        extra["QUADSEL_MEASURE_TTY"] = "1"     # the ranks' stderr is a pipe to mpiexec: say it ends on a terminal
    runner.check_methods(library, spec.collective, labels, spec.algorithms)
    methods = library.methods(spec.collective, labels, spec.segments)
    if getattr(library, "env_only", False):   # read at start-up only (Intel MPI): no launch tries MPI_T first
        if spec.adaptive:
            raise QuadselError(f"{library.version}: --adaptive needs in-process forcing (MPI_T); this library reads "
                               "its algorithm at start-up only: measure without --adaptive")
        sys.stderr.write(f"quadsel measure: {library.version} reads its algorithm at start-up only: one launch per "
                         f"method ({len(methods)} launches)\n")
    else:
        with tempfile.TemporaryDirectory(prefix="quadsel-measure-") as workdir:
            status = os.path.join(workdir, "fallback")   # the ranks say here, quietly, that they cannot force (MPI_T)
            env = launch.launch_env(flavor, dict(extra, **{runner.FALLBACK_STATUS: status}), spec.command)
            code = launch.run(launch.launch_command(exe, flavor, np_, args, prefix=passed), env)
            reason = None
            if os.path.exists(status):
                with open(status) as handle:
                    reason = handle.read().strip()
        if reason is None and code != runner.EXIT_NO_MPIT:
            return code
        # MPI_T cannot force here: one launch per method, each forced by the environment (no interleaving).
        sys.stderr.write(f"quadsel measure: {reason or 'MPI_T cannot force here'}: measuring one launch per method, "
                         "each forced through the environment\n")
    start = f"{time.time():.3f}"      # one progress display over all launches (progress.py)
    for i, (label, seg) in enumerate(methods):
        forcing = {} if label in spec.alphas else library.env_for(spec.collective, label, seg)
        forcing.update({LAUNCH_ENV: f"{i + 1}/{len(methods)}", START_ENV: start})
        method_env = launch.launch_env(flavor, dict(extra, **forcing), spec.command)
        if i:
            method_env[CONTINUED] = "1"   # one stream (-o -): the first launch wrote the header
        method_args = args + ["--env-method", f"{label}:{seg}"]
        code = launch.run(launch.launch_command(exe, flavor, np_, method_args, prefix=passed), method_env)
        if code:
            return code
    return 0
