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

from ..measure import launch
from ..measure.layouts import han_decided

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
    measure does), and Open MPI forwards only OMPI_MCA_* to other hosts, so every other variable verify sets for
    the ranks (the probe's LD_PRELOAD, QUADSEL_*) is named with `-x`. Hydra (MPICH, Intel MPI) forwards the whole
    environment."""
    user = prefix()
    if user and flavor == "openmpi" and (env_extra or {}).get("OMPI_MCA_pml_monitoring_enable"):
        user = with_monitoring(user)
    cmd = [mpiexec] + user
    if not user and flavor == "openmpi" and np_ > (os.cpu_count() or 1):
        cmd.append("--oversubscribe")
    if user and flavor == "openmpi":
        names = sorted(k for k in (env_extra or {}) if not k.startswith("OMPI_MCA_"))
        names += sorted(k for k in os.environ if k.startswith("QUADSEL_") and k not in names)
        for name in names + [launch.LAUNCHED]:
            cmd += ["-x", name]
    return cmd + ["-n", str(np_)] + launch.python_module(module[0], module[1]) + list(args)


def environment(flavor, extra=None, han=False):
    """launch.launch_env for one verify launch; on the user's hosts Open MPI's coll/han is switched off unless
    the user decided about it (HAN_OFF): on 2+ nodes han (priority 35) would take the collectives verify forces
    and checks in coll/tuned (docs/cluster.md, "Verify on the cluster"). `han`: leave it on (the launch times
    coll/han's default beside arms on communicators it may not take, or loads the deployment's files: verify/han.py)."""
    env = dict(extra or {})
    if prefix() and flavor == "openmpi" and not han and not han_decided(env):
        env["OMPI_MCA_coll"] = "^han"
    return launch.launch_env(flavor, env)


def with_monitoring(args):
    """The user's Open MPI options with pml/monitoring allowed: `--mca pml ob1` (a list of PMLs to choose from)
    would keep the follow check's traffic counter (pml/monitoring, which stacks on the PML chosen) from loading,
    so it becomes `--mca pml ob1,monitoring`. An exclusion (`^cm`) or a list naming it stays as it is."""
    out = list(args)
    for i in range(len(out) - 2):
        if out[i] in ("--mca", "-mca", "--omca") and out[i + 1] == "pml":
            value = out[i + 2]
            if not value.startswith("^") and "monitoring" not in value.split(","):
                out[i + 2] = value + ",monitoring"
    return out
