"""Open MPI's job-environment script across hosts: the `tuned.env` of `quadsel tune --mpiexec-args`.

Open MPI 5.0.x's classic rules file has no ppn key, so a deployment across hosts is one coll/tuned rules file per
ranks per node (`tuned-ppnP.rules`, each the layout forest's member for that ppn). The script picks the file of the
job's layout (QUADSEL_PPN, or QUADSEL_NODES with QUADSEL_NP, or Slurm's variables: env_script.py's rule) and
exports the variables that make Open MPI load it, which are the Open MPI class's `rules_environment` (with
coll/han's routing file): the same method verify's follow check loads the files with.
"""

import os
import shlex

from .env_script import LAYOUT_SH, UNSET_FUNCTIONS_SH, UNSET_SH

PPN_FILE = "tuned-ppn{}.rules"
JOB_FILE = '"$quadsel_file"'   # the shell word of the file chosen from the job's layout


def emit(folder, ppns, header, variables):
    """tuned.env: `header` as comments, the rules file in `folder` of the job's ppn among the measured `ppns` (the
    forest query's rule: the first measured ppn >= the job's, else the largest), then `variables` exported ({name:
    value}; JOB_FILE stands for the chosen file). No ppns: nothing to set."""
    lines = [f"# {line}" for line in header]
    if not ppns:
        return "\n".join(lines + [": # nothing to set: every collective keeps the library's own choice"]) + "\n"
    lines += ["# shellcheck shell=sh",
              "# Open MPI across hosts: one coll/tuned rules file per ranks-per-node, chosen from the job's layout:",
              "# QUADSEL_PPN, or QUADSEL_NODES with QUADSEL_NP, or Slurm's SLURM_NTASKS_PER_NODE / SLURM_TASKS_PER_NODE.",
              "# coll/han stays on: its routing file hands the tuned collectives it would take to coll/tuned, the",
              "# others keep coll/han's own choice, as verify timed and proved them (docs/tune.md, Clusters)."]
    lines.append(LAYOUT_SH.replace("FALLBACK", f"ppn {ppns[-1]}"))
    path = lambda p: shlex.quote(os.path.abspath(os.path.join(folder, PPN_FILE.format(p))))  # noqa: E731
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
    lines += [f"export {name}={value if value == JOB_FILE else shlex.quote(value)}" for name, value in variables.items()]
    return "\n".join(lines + ["unset quadsel_file", UNSET_SH, UNSET_FUNCTIONS_SH]) + "\n"
