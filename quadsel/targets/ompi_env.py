"""Open MPI's job-environment script across hosts: the `tuned.env` of `quadsel tune --mpiexec-args`.

Open MPI 5.0.x's classic rules file has no ppn key, so a deployment across hosts is one coll/tuned rules file per
ranks per node (`tuned-ppnP.rules`, each the layout forest's member for that ppn) and, for the collectives coll/han
takes, coll/han's rules file of the same member (`han-ppnP.rules`: coll/han where the member keeps the library
default, coll/tuned elsewhere). The script picks the pair of the job's layout (QUADSEL_PPN, or QUADSEL_NODES with
QUADSEL_NP, or Slurm's variables: env_script.py's rule) and exports the variables that make Open MPI load it, which
are the Open MPI class's `rules_environment`: the same method verify's follow check loads the files with.
"""

import os
import shlex

from .env_script import LAYOUT_SH, UNSET_FUNCTIONS_SH, UNSET_SH

PPN_FILE = "tuned-ppn{}.rules"
HAN_FILE = "han-ppn{}.rules"
JOB_FILE = '"$quadsel_file"'   # the shell word of the file chosen from the job's layout
JOB_HAN_FILE = '"$quadsel_han_file"'   # and of coll/han's file beside it


def emit(folder, ppns, header, variables, han=False):
    """tuned.env: `header` as comments, the rules file in `folder` of the job's ppn among the measured `ppns` (the
    forest query's rule: the first measured ppn >= the job's, else the largest), and with `han` coll/han's file of
    that ppn, then `variables` exported ({name: value}; JOB_FILE and JOB_HAN_FILE stand for the chosen files). No
    ppns: nothing to set."""
    lines = [f"# {line}" for line in header]
    if not ppns:
        return "\n".join(lines + [": # nothing to set: every collective keeps the library's own choice"]) + "\n"
    lines += ["# shellcheck shell=sh",
              "# Open MPI across hosts: one coll/tuned rules file per ranks-per-node, chosen from the job's layout:",
              "# QUADSEL_PPN, or QUADSEL_NODES with QUADSEL_NP, or Slurm's SLURM_NTASKS_PER_NODE / SLURM_TASKS_PER_NODE.",
              "# coll/han stays on: its rules file of the same ppn keeps it where the tuned collectives measured",
              "# fastest with it and hands them to coll/tuned elsewhere; the other collectives keep coll/han's own",
              "# choice, as verify timed and proved them (docs/tune.md, Clusters)."]
    lines.append(LAYOUT_SH.replace("FALLBACK", f"ppn {ppns[-1]}"))
    path = lambda name, p: shlex.quote(os.path.abspath(os.path.join(folder, name.format(p))))  # noqa: E731
    for i, ppn in enumerate(ppns):
        chosen = [f"  quadsel_file={path(PPN_FILE, ppn)}"] + ([f"  quadsel_han_file={path(HAN_FILE, ppn)}"] if han else [])
        if i == len(ppns) - 1:
            lines += ["else" if len(ppns) > 1 else ""] + chosen
        else:
            test = "if" if i == 0 else "elif"
            lines += [f'{test} [ -n "$quadsel_ppn" ] && [ "$quadsel_ppn" -le {int(ppn)} ]; then'] + chosen
    if len(ppns) > 1:
        lines.append("fi")
    lines = [line for line in lines if line != ""]
    lines += [f"export {name}={value if value in (JOB_FILE, JOB_HAN_FILE) else shlex.quote(value)}"
              for name, value in variables.items()]
    return "\n".join(lines + ["unset quadsel_file quadsel_han_file", UNSET_SH, UNSET_FUNCTIONS_SH]) + "\n"
