"""`quadsel tune` across hosts (`--mpiexec-args`): every layout measured, one layout forest per collective, verified
per layout, deployed per library (docs/tune.md, "Clusters").

What differs from one host, and nothing else:
- measure gets `--mpiexec-args`, `--layouts` and `--sync` (the full sweep unless `--strategy adaptive`: one plan
  per ppn, steps.strategy_for);
- build makes a layout forest (one tree per ppn, `quadsel build`'s default settings);
- verify gets the forests themselves (`verify FOREST --mpiexec-args … --layouts …`), so the follow check loads the
  files verify writes for a forest (verify/layouts.py `forest_rules`), and tune deploys exactly those files:
  - MPICH `tuned-mpich.json` (`comm_avg_ppn<=P`) and Intel MPI `tuned-impi.json` (`ppn=P` blocks): one file;
  - Open MPI: one classic rules file per measured ppn, `tuned-ppnP.rules`, each with every forest's member for that
    ppn, and coll/han's routing file `han-route.rules` that hands the deployed collectives it would take to
    coll/tuned (targets/ompi_han.route_to_tuned); the other collectives keep coll/han, the library's default across
    nodes, which is also what verify times the deployment against (verify/han.py). tuned.env picks the tuned file
    from the job's ppn (QUADSEL_PPN, QUADSEL_NODES + QUADSEL_NP, Slurm's variables; env_script's rule).
"""

import os
import shlex

from ..errors import QuadselError
from ..output import write_text

OMPI_PPN_FILE = "tuned-ppn{}.rules"


def check_spec(spec):
    """The one-line refusals of a multi-host tune (before any job)."""
    if spec.comm_sizes:
        raise QuadselError("--comm-sizes does not apply across hosts: the layouts decide the communicators (--layouts)")


def measure_options(spec):
    """The measure options of a multi-host tune: the launcher's host options, the layouts, the clock sync."""
    out = ["--mpiexec-args", spec.mpiexec_args]
    if spec.layouts:
        out += ["--layouts", spec.layouts]
    if spec.sync:
        out += ["--sync", spec.sync]
    return out


def verify_inputs(folder, fns, label):
    """The decision functions verify checks, written to DIR/verify/LABEL.COLL.qt.json: [paths]."""
    paths = []
    for fn in fns:
        path = folder("verify", f"{label}.{fn.collective}.qt.json")
        write_text(path, fn.dumps())
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


def ompi_env_text(folder, fns, header, routed=False):
    """tuned.env of an Open MPI multi-host deployment: the file of the job's ppn (the forest query's rule: the first
    measured ppn >= the job's, else the largest), coll/tuned's rules variables, and with `routed` coll/han's routing
    file (ompi_files)."""
    from ..targets.env_script import LAYOUT_SH, UNSET_SH, UNSET_FUNCTIONS_SH
    lines = [f"# {line}" for line in header]
    ppns = ppns_of(fns)
    if not fns:
        return "\n".join(lines + [": # nothing to set: every collective keeps the library's own choice"]) + "\n"
    lines += ["# shellcheck shell=sh",
              "# Open MPI across hosts: one coll/tuned rules file per ranks-per-node, chosen from the job's layout:",
              "# QUADSEL_PPN, or QUADSEL_NODES with QUADSEL_NP, or Slurm's SLURM_NTASKS_PER_NODE / SLURM_TASKS_PER_NODE.",
              "# coll/han stays on: its routing file hands the tuned collectives it would take to coll/tuned, the",
              "# others keep coll/han's own choice, as verify timed and proved them (docs/tune.md, Clusters)."]
    lines.append(LAYOUT_SH.replace("FALLBACK", f"ppn {ppns[-1]}"))
    path = lambda p: shlex.quote(os.path.abspath(os.path.join(folder, OMPI_PPN_FILE.format(p))))  # noqa: E731
    for i, ppn in enumerate(ppns):
        if i == len(ppns) - 1:
            lines += ["else" if len(ppns) > 1 else "", f"  quadsel_file={path(ppn)}"]
        else:
            test = "if" if i == 0 else "elif"
            lines += [f'{test} [ -n "$quadsel_ppn" ] && [ "$quadsel_ppn" -le {int(ppn)} ]; then',
                      f"  quadsel_file={path(ppn)}"]
    if len(ppns) > 1:
        lines.append("fi")
    lines = [line for line in lines if line != ""]
    lines += ["export OMPI_MCA_coll_tuned_use_dynamic_rules=1",
              'export OMPI_MCA_coll_tuned_dynamic_rules_filename="$quadsel_file"',
              "unset quadsel_file", UNSET_SH, UNSET_FUNCTIONS_SH]
    if routed:
        from ..verify.han import ROUTE_FILE
        lines[-3:-3] = ["export OMPI_MCA_coll_han_use_dynamic_file_rules=1",
                        "export OMPI_MCA_coll_han_dynamic_rules_filename="
                        + shlex.quote(os.path.abspath(os.path.join(folder, ROUTE_FILE)))]
    return "\n".join(lines) + "\n"
