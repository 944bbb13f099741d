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
    every forest's member for that ppn, and beside it coll/han's rules file of the same members, `han-ppnP.rules`,
    for the deployed collectives coll/han takes (targets/ompi_han.py: coll/han where the member keeps the library
    default, measured as coll/han's across nodes; coll/tuned, which runs the member's algorithm, elsewhere); the
    other collectives keep coll/han, the library's default across nodes, which is also what verify times the
    deployment against (verify/han.py). tuned.env picks the pair from the job's ppn (QUADSEL_PPN, QUADSEL_NODES +
    QUADSEL_NP, Slurm's variables; env_script's rule): targets/ompi_env.py writes it, with the library's
    `rules_environment` as verify loads it.
"""

import os

from ..errors import QuadselError
from ..targets.ompi_env import HAN_FILE as OMPI_HAN_FILE, PPN_FILE as OMPI_PPN_FILE


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
    """The tuned-ppnP.rules and han-ppnP.rules files (and the han-route.rules of an earlier quadsel) a former run
    left in the folder (removed when not deployed again)."""
    import re
    names = os.listdir(folder) if os.path.isdir(folder) else []
    return tuple(n for n in names if re.fullmatch(r"(tuned|han)-ppn[0-9]+\.rules|han-route\.rules", n))


def ompi_files(fns, han_collectives=()):
    """{tuned-ppnP.rules: text, han-ppnP.rules: text}: for each measured ppn, the classic rules file of every
    forest's member for that ppn — the file verify's follow check loads for those layouts (verify/layouts.py
    forest_rules, run.emit_rules) — and, when coll/han takes some of the deployed collectives (`han_collectives`),
    its rules file of the same members (verify/han.py han_text), as the follow check loads it too."""
    from ..targets import ompi_rules
    from ..verify.han import han_text
    out = {}
    for ppn in ppns_of(fns):
        members = [fn.at_ppn(ppn) for fn in fns]
        out[OMPI_PPN_FILE.format(ppn)] = ompi_rules.emit(members)
        han = han_text(members, han_collectives)
        if han is not None:
            out[OMPI_HAN_FILE.format(ppn)] = han
    return out


def env_text(library, folder, fns, header):
    """tuned.env of a deployment of one file per ppn (targets/ompi_env.py): the pair of the job's ppn, loaded through
    the library's `rules_environment` (the follow check's): coll/tuned's file and, when coll/han takes some of the
    collectives, coll/han's beside it (ompi_files)."""
    from ..targets import ompi_env
    han = any(fn.collective in set(library.multinode_collectives(library.version)) for fn in fns)
    variables = library.rules_environment(ompi_env.JOB_FILE, ompi_env.JOB_HAN_FILE if han else None)
    return ompi_env.emit(folder, ppns_of(fns), header, variables, han=han)
