"""Self-launching: `quadsel measure --np N` outside an MPI job re-executes itself as
`mpiexec -n N sys.executable -m quadsel.measure <same options>`.
"""

import os
import shutil
import subprocess
import sys

from ..errors import QuadselError

# Set in every rank by the launchers we know: Open MPI/PRRTE, PMIx (also srun --mpi=pmix), Hydra and
# srun --mpi=pmi2 (PMI_*). Not Slurm's own SLURM_* variables: a batch script has them outside any job step.
_JOB_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "PMI_FD")


def inside_mpi_job(environ=None):
    environ = os.environ if environ is None else environ
    return any(v in environ for v in _JOB_VARIABLES)


def job_rank(environ=None):
    """This process's rank in the MPI job from the launcher's variables (0 when unknown)."""
    environ = os.environ if environ is None else environ
    for name in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"):
        if environ.get(name, "").isdigit():
            return int(environ[name])
    return 0


def find_mpiexec(explicit=None):
    """--mpiexec, else the mpiexec beside this Python (a venv's MPI wheel), else the first on PATH."""
    if explicit:
        found = shutil.which(explicit)
        if not found:
            raise QuadselError(f"mpiexec not found: {explicit}")
        return found
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.access(beside, os.X_OK):
        return beside
    found = shutil.which("mpiexec") or shutil.which("mpirun")
    if not found:
        raise QuadselError("no mpiexec found: install the [mpi] extra, put mpiexec on PATH or pass --mpiexec")
    return found


def mpiexec_flavor(mpiexec):
    """'openmpi', 'mpich' (Hydra) or 'unknown', from `mpiexec --version`."""
    try:
        text = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if "Open MPI" in text or "OpenRTE" in text or "PRRTE" in text:
        return "openmpi"
    if "HYDRA" in text or "MPICH" in text:
        return "mpich"
    return "unknown"


def launch_command(mpiexec, flavor, np, child_args, cpus=None):
    cmd = [mpiexec]
    if flavor == "openmpi" and np > (cpus or os.cpu_count() or 1):
        cmd.append("--oversubscribe")   # Open MPI refuses more ranks than cores without it
    return cmd + ["-n", str(np), sys.executable, "-m", "quadsel.measure"] + list(child_args)


def launch_env(flavor, extra=None, command=""):
    env = dict(os.environ)
    if flavor in ("openmpi", "unknown") and hasattr(os, "geteuid") and os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")        # containers and CI run as root
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    if command:
        env["QUADSEL_MEASURE_COMMAND"] = command
    env.update(extra or {})
    return env


def library_without_init():
    """MPI_Get_library_version() of the MPI that mpi4py would load, without starting MPI."""
    try:
        import mpi4py
        if "mpi4py.MPI" not in sys.modules:
            mpi4py.rc.initialize = False
            mpi4py.rc.finalize = False
        from mpi4py import MPI
        return MPI.Get_library_version()
    except Exception as exc:  # ImportError, or mpi4py failing to find a libmpi
        raise QuadselError(f"cannot load mpi4py / an MPI library ({exc}); pip install '.[mpi]'") from None


def run(cmd, env):
    """Run one launch; returns its exit status (the children's stderr goes straight through)."""
    try:
        return subprocess.call(cmd, env=env)
    except OSError as exc:
        raise QuadselError(f"cannot start {cmd[0]}: {exc.strerror}") from None
