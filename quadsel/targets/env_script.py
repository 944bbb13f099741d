"""A job-environment script (`-t env-script`): a POSIX sh file to source in a job script that picks the settings of
a layout forest's member from the job's allocation and exports Intel MPI's `I_MPI_ADJUST_<COLL>` strings for it.

For the libraries that read their collective settings from the environment only: Intel MPI's `I_MPI_ADJUST_*`
key on process count and message size, never on ranks per node (its JSON tuning file does: `-t impi-json`), so a
site that deploys the strings per layout must choose them before mpiexec/srun, from what the job knows.

The job's ppn, first found of (docs/formats-output.md, "env-script"):
  1. QUADSEL_PPN;
  2. QUADSEL_NODES with QUADSEL_NP (or SLURM_NTASKS): ceil(np / nodes), the `quadsel query --nodes` rule;
  3. SLURM_NTASKS_PER_NODE (Slurm sets it when the job asked --ntasks-per-node);
  4. SLURM_TASKS_PER_NODE ("2(x3),1": tasks per node, run-length): ceil(tasks / nodes).
Member rule (the forest query's, decision/layouts.py): the first member whose ppn bound is >= the job's ppn, else
the last. No layout known (none of them set, or not a positive integer): the **last** member (the one the forest
query and MPICH's csel give a layout they cannot place, and a one-node `mpiexec -n N` with N above every bound),
with one line on stderr saying so. Each member's strings are impi_adjust's for that member's tree, word for word
(its refusal included: a tree whose rules change with both sizes cannot be a string; `-t impi-json` then).
A 2-D tree is one member: its strings are exported whatever the layout.
"""

import shlex

from ..errors import QuadselError
from ..libraries import intelmpi
from .escape import comment_text
from .impi_adjust import adjust_value
from .layout_rules import layout_rules
from .rule_list import header_lines

# POSIX sh, sourced: every helper variable is quadsel_* and unset at the end; no `local`, no arrays, no $(( )) on
# an unchecked value: quadsel_digits accepts 1 to 999999999 written without a leading zero (an octal in $(( ))).
LAYOUT_SH = r'''quadsel_ppn=
quadsel_digits() { case $1 in ''|0*|*[!0-9]*|??????????*) return 1 ;; esac; }
if [ -n "${QUADSEL_PPN:-}" ]; then
  quadsel_ppn=$QUADSEL_PPN
elif [ -n "${QUADSEL_NODES:-}" ]; then
  quadsel_np=${QUADSEL_NP:-${SLURM_NTASKS:-}}
  if quadsel_digits "$QUADSEL_NODES" && quadsel_digits "$quadsel_np"; then
    quadsel_ppn=$(( (quadsel_np + QUADSEL_NODES - 1) / QUADSEL_NODES ))
  else
    quadsel_ppn=bad
  fi
elif [ -n "${SLURM_NTASKS_PER_NODE:-}" ]; then
  quadsel_ppn=$SLURM_NTASKS_PER_NODE
elif [ -n "${SLURM_TASKS_PER_NODE:-}" ]; then
  quadsel_tasks=0
  quadsel_nodes=0
  quadsel_rest=$SLURM_TASKS_PER_NODE,
  while [ -n "$quadsel_rest" ]; do
    quadsel_item=${quadsel_rest%%,*}
    quadsel_rest=${quadsel_rest#*,}
    quadsel_count=${quadsel_item%%"("*}
    quadsel_times=1
    case $quadsel_item in
      *"(x"*")") quadsel_times=${quadsel_item#*"(x"}
                 quadsel_times=${quadsel_times%")"} ;;
      *"("*) quadsel_times=bad ;;
    esac
    if quadsel_digits "$quadsel_count" && quadsel_digits "$quadsel_times"; then
      quadsel_tasks=$(( quadsel_tasks + quadsel_count * quadsel_times ))
      quadsel_nodes=$(( quadsel_nodes + quadsel_times ))
    else
      quadsel_nodes=0
      quadsel_rest=
    fi
  done
  if [ "$quadsel_nodes" -gt 0 ]; then
    quadsel_ppn=$(( (quadsel_tasks + quadsel_nodes - 1) / quadsel_nodes ))
  else
    quadsel_ppn=bad
  fi
fi
if ! quadsel_digits "$quadsel_ppn"; then
  echo "quadsel: no job layout known (set QUADSEL_PPN, or QUADSEL_NODES and QUADSEL_NP; Slurm sets its own): \
exporting the last layout's settings (FALLBACK)" >&2
  quadsel_ppn=
fi'''
UNSET_SH = "unset quadsel_ppn quadsel_np quadsel_tasks quadsel_nodes quadsel_rest quadsel_item quadsel_count quadsel_times"
UNSET_FUNCTIONS_SH = "unset -f quadsel_digits"


def layer_values(rules):
    """[(bound or None for the last layer, value of I_MPI_ADJUST_<COLL>, notes)] per layer of a LayoutRules:
    impi_adjust's strings of its rules."""
    out, last = [], len(rules.layers) - 1
    for i, ((bound, rl), label) in enumerate(zip(rules.layers, rules.labels())):
        try:
            value, notes = adjust_value(rl)
        except QuadselError as exc:
            if not last:
                raise
            raise QuadselError(f"layout {label}: {exc}") from None
        out.append((None if i == last else bound, value, list(rl.notes) + notes))
    return out


def emit(fns, max_requests=None):
    seen, blocks, lists, fallback = set(), [], [], []
    for fn in fns:
        if fn.collective in seen:
            raise QuadselError(f"two trees for collective {comment_text(fn.collective)!r}: give one tree per collective")
        seen.add(fn.collective)
        rules = layout_rules(fn, intelmpi.NAME, inside=True)
        lists += [rl for _, rl in rules.layers]
        var = intelmpi.adjust_var(fn.collective)
        values = layer_values(rules)
        if len(values) == 1:
            blocks += [f"# note: {comment_text(n)}" for n in values[0][2]] + [f"export {var}={shlex.quote(values[0][1])}"]
            continue
        labels = rules.labels()
        fallback.append(f"{comment_text(fn.collective)} {labels[-1]}")
        lines = [f"# {comment_text(fn.collective)}: {len(values)} layouts ({', '.join(labels)})"]
        for i, (bound, value, notes) in enumerate(values):
            lines += [f"  # note: {labels[i]}: {comment_text(n)}" for n in notes]
            if bound is None:
                lines.append("else")
            else:
                test = "if" if i == 0 else "elif"
                lines.append(f'{test} [ -n "$quadsel_ppn" ] && [ "$quadsel_ppn" -le {int(bound)} ]; then')
            lines.append(f"  export {var}={shlex.quote(value)}")
        lines.append("fi")
        blocks += lines
    out = [f"# {line}" for line in header_lines(lists, "intelmpi")]
    out += ["# shellcheck shell=sh",
            "# quadsel env-script for Intel MPI: source it in the job script before mpiexec or srun (. ./FILE);",
            "# it exports I_MPI_ADJUST_<COLL> for the job's layout: QUADSEL_PPN, or QUADSEL_NODES with QUADSEL_NP,",
            "# or Slurm's SLURM_NTASKS_PER_NODE / SLURM_TASKS_PER_NODE (docs/formats-output.md, env-script)."]
    layered = any(len(fn.layers) > 1 for fn in fns)
    if layered:
        out.append(LAYOUT_SH.replace("FALLBACK", ", ".join(fallback)))
    out += blocks
    if layered:
        out += [UNSET_SH, UNSET_FUNCTIONS_SH]
    return "\n".join(out) + "\n"
