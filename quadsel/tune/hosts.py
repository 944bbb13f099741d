"""`quadsel tune` across hosts (`--mpiexec-args`): every layout measured, one layout forest per collective, verified
per layout, deployed per library (docs/tune.md, "Clusters").

What differs from one host, and nothing else:
- measure gets the launcher's host options, the layouts and the clock sync (steps.measure_spec; the full sweep
  unless `--strategy adaptive`: one plan per ppn, steps.strategy_for);
- build makes a layout forest (one tree per ppn, `quadsel build`'s default settings);
- verify gets the forests themselves (`verify FOREST --mpiexec-args … --layouts …`), so the follow check loads the
  files verify writes for a forest (verify/layouts.py `forest_rules`), and tune deploys exactly those files:
  - MPICH `tuned-mpich.json` (`comm_avg_ppn<=P`) and Intel MPI `tuned-impi.json` (`ppn=P` blocks): one file;
  - Open MPI (its class's `per_ppn_files`): one classic rules file per measured ppn, `tuned-ppnP.rules`, each with
    every forest's member for that ppn, and coll/han's routing file `han-route.rules` that hands the deployed
    collectives it would take to coll/tuned (targets/ompi_han.route_to_tuned); the other collectives keep coll/han,
    the library's default across nodes, which is also what verify times the deployment against (verify/han.py).
    tuned.env picks the tuned file from the job's ppn (QUADSEL_PPN, QUADSEL_NODES + QUADSEL_NP, Slurm's variables;
    env_script's rule): targets/ompi_env.py writes it, with the library's `rules_environment` as verify loads it.
"""

import os

from ..errors import QuadselError
from ..targets.ompi_env import PPN_FILE as OMPI_PPN_FILE


def check_spec(spec):
    """The one-line refusals of a multi-host tune (before any job)."""
    if spec.comm_sizes:
        raise QuadselError("--comm-sizes does not apply across hosts: the layouts decide the communicators (--layouts)")


def verify_inputs(folder, fns, label):
    """The decision functions verify checks, written to DIR/verify/LABEL.COLL.qt.json: [paths]."""
    paths = []
    for fn in fns:
        path = folder("verify", f"{label}.{fn.collective}.qt.json")
        folder.write(path, fn.dumps())
        paths.append(path)
    return paths


def ppns_of(fns):
    """The measured ppn of the forests, ascending: Open MPI's one file per ppn."""
    return sorted({p for fn in fns for layer in fn.layers for p in layer.measured_ppn})


def ppn_files(folder):
    """The tuned-ppnP.rules files (and coll/han's routing file) a former run left in the folder (removed when not
    deployed again)."""
    import re
    names = os.listdir(folder) if os.path.isdir(folder) else []
    return tuple(n for n in names if re.fullmatch(r"tuned-ppn[0-9]+\.rules|han-route\.rules", n))


def ompi_files(fns, han_collectives=()):
    """{tuned-ppnP.rules: text, han-route.rules: text}: for each measured ppn, the classic rules file of every
    forest's member for that ppn — the file verify's follow check loads for those layouts (verify/layouts.py
    forest_rules, run.emit_rules) — and, when coll/han takes some of the deployed collectives (`han_collectives`,
    verify/han.py), its routing file handing them to coll/tuned, as the follow check loads it too."""
    from ..targets import ompi_han, ompi_rules
    from ..verify.han import ROUTE_FILE
    if not fns:
        return {}
    out = {OMPI_PPN_FILE.format(ppn): ompi_rules.emit([fn.at_ppn(ppn) for fn in fns])
           for ppn in ppns_of(fns)}
    routed = sorted({fn.collective for fn in fns} & set(han_collectives))
    if routed:
        out[ROUTE_FILE] = ompi_han.route_to_tuned(routed)
    return out


def env_text(library, folder, fns, header, routed=False):
    """tuned.env of a deployment of one file per ppn (targets/ompi_env.py): the file of the job's ppn, loaded through
    the library's `rules_environment` (the follow check's), with `routed` the multi-node component's routing file
    (ompi_files) beside it."""
    from ..targets import ompi_env
    from ..verify.han import ROUTE_FILE
    route = os.path.abspath(os.path.join(folder, ROUTE_FILE)) if routed else None
    return ompi_env.emit(folder, ppns_of(fns), header, library.rules_environment(ompi_env.JOB_FILE, route))
