"""verify's jobs on the user's hosts: the launcher options passed through (`verify --mpiexec-args`, as
`quadsel measure --mpiexec-args`), for every launch verify makes (timing, follow check, default-ran).

The options are set once per verify run (`passing`) and read by each launch (`command`, `environment`), so the
many launch sites (verify/command.py, verify/follow.py) need no new argument. Without options every launch is
the one-host `mpiexec -n N ...` of before.
"""

import contextlib
import contextvars
import os
import shlex

from ..libraries import get as get_library
from ..measure import launch

_ARGS = contextvars.ContextVar("quadsel_verify_mpiexec_args", default=())


@contextlib.contextmanager
def passing(mpiexec_args):
    """Within the block every verify launch puts `mpiexec_args` (a shell-like string, or None) before -n."""
    token = _ARGS.set(tuple(shlex.split(mpiexec_args)) if mpiexec_args else ())
    try:
        yield
    finally:
        _ARGS.reset(token)


def prefix():
    return list(_ARGS.get())


def command(mpiexec, flavor, np_, module, args, env_extra=None):
    """[mpiexec, user options..., -x NAME..., -n NP, python -m MODULE, args...].

    With the user's options the ranks may be on other hosts: Open MPI's --oversubscribe is theirs to give (as
    measure does), and a launcher that does not forward the whole environment to other hosts (Open MPI: only
    OMPI_MCA_*) is told every variable verify sets for the ranks (the probe's LD_PRELOAD, QUADSEL_*): the
    launcher's class says how (`forward_args`, `-x NAME`). Hydra (MPICH, Intel MPI) forwards the whole environment."""
    launcher = get_library(flavor)
    user = launcher.host_args(prefix(), env_extra)
    cmd = [mpiexec] + user
    if not user:
        cmd += launcher.oversubscribe(np_, os.cpu_count() or 1)
    else:
        names = sorted(env_extra or {})
        names += sorted(k for k in os.environ if k.startswith("QUADSEL_") and k not in names)
        cmd += launcher.forward_args(names + [launch.LAUNCHED])
    return cmd + ["-n", str(np_)] + launch.python_module(module[0], module[1]) + list(args)


def environment(flavor, extra=None, han=False):
    """launch.launch_env for one verify launch; on the user's hosts the library's multi-node components are switched
    off unless the user decided about them (Open MPI's coll/han, libraries/openmpi.py HAN_OFF): on 2+ nodes han
    (priority 35) would take the collectives verify forces and checks in coll/tuned (docs/cluster.md, "Verify on the
    cluster"). `han`: leave it on (the launch times coll/han's default beside arms on communicators it may not
    take, or loads the deployment's files: verify/han.py)."""
    env = dict(extra or {})
    if prefix() and not han:
        env.update(get_library(flavor).flat_environment(env))
    return launch.launch_env(flavor, env)
