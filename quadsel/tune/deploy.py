"""What each library reads, as `quadsel tune` deploys it: the file (or strings), the target that writes it, and
the environment variables that make the library use it (`tuned.env`, sourced before mpiexec). Each is the library
class's (libraries/: `deployment`, `rules_environment`, the method verify's follow check loads the file with):

- Open MPI: one classic rules file for every tuned collective (`-t ompi-rules`, read by coll/tuned on 5.0.x; the
  JSON rules of main/6.x are written beside it for those versions, not sourced);
- MPICH: one csel JSON over MPICH's own selection, read from the libmpi mpi4py loads (`-t mpich-json`); MPICH
  replaces its whole selection with the file, so the other collectives keep MPICH's own choice;
- Intel MPI: its JSON tuning file (`-t impi-json`, `I_MPI_TUNING`), which expresses every tree; the
  `I_MPI_ADJUST_<COLL>` strings (`-t impi-adjust`) are written beside it, for sites that set the environment only,
  when every deployed tree can be one (not when a tree changes with both sizes: targets/impi_adjust.py).
"""

import os
import shlex

from ..errors import QuadselError
from ..libraries import CLASSES, get as get_library

DEPLOYMENTS = {cls.name: cls.deployment for cls in CLASSES if cls.deployment is not None}


def deployment(library):
    try:
        return DEPLOYMENTS[library]
    except KeyError:
        raise QuadselError(f"quadsel tune deploys for Open MPI, MPICH and Intel MPI; mpi4py loads {library}, whose "
                           "files quadsel cannot write (measure and build it with the separate commands)") from None


def emit(dep, fns, mpich_base=None, notes=None):
    """{file name: text} of the deployment of the trees `fns` (one per collective; none: nothing to write).
    The extra file is left out, with a line in `notes` (a list), when its target cannot express the trees."""
    from ..targets import emit as emit_target
    if not fns:
        return {}
    base = None
    if get_library(dep.library).whole_selection:   # the file is written over the library's own selection
        from ..verify.run import rules_module
        base = rules_module(dep.library).load_base(mpich_base)
    out = {dep.file: emit_target(dep.target, fns, mpich_base=base)}
    if dep.extra:
        try:
            out[dep.extra[0]] = emit_target(dep.extra[1], fns)
        except QuadselError as exc:
            if not dep.extra_optional:
                raise
            if notes is not None:
                notes.append(f"{dep.extra[0]} not written: {exc}")
    return out


def environment(dep, folder, deployed):
    """The variables of tuned.env ({name: value}) that make the library read the deployed file; none when no
    collective is deployed (the library keeps its own choice everywhere)."""
    if not deployed:
        return {}
    return get_library(dep.library).rules_environment(os.path.abspath(os.path.join(folder, dep.file)),
                                                      collectives=[fn.collective for fn in deployed])


def env_text(variables, header):
    """tuned.env: `export NAME=value` lines a POSIX shell sources, after a comment header."""
    lines = [f"# {line}" for line in header] or []
    lines += [f"export {name}={shlex.quote(value)}" for name, value in variables.items()]
    if not variables:
        lines.append(": # nothing to set: every collective keeps the library's own choice")
    return "\n".join(lines) + "\n"
