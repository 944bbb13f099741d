"""`quadsel tune --sbatch SCRIPT`: the Slurm batch job of a tune (docs/cluster.md, "Slurm").

The script asks for the allocation (--nodes x --ntasks-per-node, --time, the site's own options) and `exec`s the
same tune inside it with the same Python, from the folder it was written in; inside the allocation tune takes its
ranks and hosts from Slurm (measure/allocation.py), so the script names neither. Written for what Slurm does to a
long job (measured: docs/cluster.md, Slurm):
- `--requeue`: a job requeued (by an admin, a preemption, a node failure) runs the script again; tune continues
  from its journal (DIR/tune.json) without measuring again what it finished, as does the script submitted again
  after a time-out or scancel (a time-out is never requeued by Slurm);
- `--open-mode=append`: the output file keeps every run's lines (the default truncates it on a requeue);
- `exec`: tune is the batch shell itself, so a signal to the batch shell (scancel -b, --signal=B:...) reaches it.
"""

import os
import re
import shlex
import sys

from ..errors import QuadselError, one_line

# the options of --sbatch itself, and --np (the allocation gives the ranks): not passed to the job's tune
_OWN = {"--sbatch", "--nodes", "--ntasks-per-node", "--time", "--sbatch-args", "--np"}
# Slurm's time forms (sbatch(1) --time): minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS; and UNLIMITED
_TIME = re.compile(r"^(\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d{1,2}(:\d{1,2}){0,2}|UNLIMITED|INFINITE)$",
                   re.IGNORECASE)


def tune_arguments(given):
    """The job's tune options from the ones given on the command line, [(option, value, is_flag)]: the folder made
    absolute (the job may start elsewhere), --sbatch's own options left out."""
    out = []
    for option, value, is_flag in given:
        if option in _OWN:
            continue
        if is_flag:
            if value:
                out.append(option)
            continue
        if option == "--output":
            value = os.path.abspath(value)
        out += [option, str(value)]
    return out


def check_time(text):
    if text is None:
        return None
    if not _TIME.match(text.strip()):
        raise QuadselError(f"--time {one_line(text, 40)!r}: not a Slurm time (minutes, HH:MM:SS, D-HH:MM:SS, e.g. "
                           "90 or 2:00:00)")
    return text.strip()


def check_extra(text):
    """--sbatch-args as #SBATCH options: each word an option (`--partition=x`, `-A x`), none that tune sets."""
    if text is None:
        return []
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise QuadselError(f"--sbatch-args: {exc}") from None
    for word in words:
        if any(ord(c) < 32 or ord(c) == 127 for c in word):
            raise QuadselError(f"--sbatch-args: {one_line(word, 40)!r} holds a control character")
    if words and not words[0].startswith("-"):
        raise QuadselError(f"--sbatch-args: {one_line(words[0], 40)!r} is not an option (e.g. --partition=batch)")
    for word in words:
        name = word.split("=", 1)[0]
        if name in ("-N", "--nodes", "--ntasks-per-node", "-n", "--ntasks", "-t", "--time"):
            raise QuadselError(f"--sbatch-args: {name} is tune's own (--nodes, --ntasks-per-node, --time)")
    return words


def script_text(folder, nodes, ppn, time_limit, extra, arguments, python=None, workdir=None):
    """The batch script: #SBATCH lines, then `cd` to `workdir` and `exec` the tune."""
    python = python or sys.executable
    workdir = workdir or os.getcwd()
    folder = os.path.abspath(folder)
    sbatch = ["--job-name=quadsel-tune", f"--nodes={int(nodes)}", f"--ntasks-per-node={int(ppn)}"]
    if time_limit:
        sbatch.append(f"--time={time_limit}")
    sbatch += ["--requeue", "--open-mode=append"]
    lines = ["#!/bin/sh",
             "# quadsel tune as a Slurm batch job (written by `quadsel tune --sbatch`; docs/cluster.md, Slurm).",
             "# Submit it with `sbatch THIS-FILE`. Submitted again after a time-out or scancel, or requeued, it",
             f"# continues from {folder}/tune.json: finished steps are not run again.",
             "# Inside the allocation tune takes its ranks and nodes from Slurm (SLURM_TASKS_PER_NODE, the node list)."]
    lines += [f"#SBATCH {word}" for word in sbatch]
    lines += [f"#SBATCH {word}" for word in _pair(extra)]
    lines += [f"cd {shlex.quote(workdir)} || exit 1",
              "exec " + shlex.join([python, "-m", "quadsel", "tune", *arguments])]
    return "\n".join(lines) + "\n"


def _pair(words):
    """#SBATCH takes one option a line: `-A x` stays together."""
    out = []
    for word in words:
        if out and not word.startswith("-") and not out[-1].count(" ") and "=" not in out[-1]:
            out[-1] += " " + shlex.quote(word)
        else:
            out.append(shlex.quote(word) if not word.startswith("-") else word)
    return out


def write_script(path, folder, nodes, ppn, time_limit, extra, arguments):
    """Check and write the script (atomically, never over an input); its path."""
    from .. import output
    time_limit = check_time(time_limit)
    words = check_extra(extra)
    if os.path.abspath(path).startswith(os.path.abspath(folder) + os.sep):
        raise QuadselError(f"--sbatch {one_line(path)}: not inside the tune folder (tune's folder holds only its own "
                           "files): write it beside it")
    output.check(path)
    output.write_text(path, script_text(folder, nodes, ppn, time_limit, words, arguments))
    return path
