"""Click parameter types every command shares, so that a value at or beyond its limits is refused in one line at
parse time, before any file is read or any MPI job starts (docs/conventions.md, "Options: the same name for the same thing").

- FloatRange: click.FloatRange that also refuses NaN and the infinities. Click's own lets `nan` through every
  bound (each comparison with NaN is false), and inf through every open upper end; neither is a meaningful
  time, fraction, factor or confidence level, so both are refused rather than read as "no limit".
- RANKS: a count of ranks (--np), 1..2^31-1: MPI's communicator sizes are C ints.
- MPIEXEC_ARGS: --mpiexec-args, which is split like a shell; an unclosed quote is refused here.
"""

import math
import shlex

import click

from ..errors import one_line
from ..inputs import INT_MAX


class FloatRange(click.FloatRange):
    """click.FloatRange of finite numbers only."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{one_line(value, 40)!r} is not a finite number.", param, ctx)
        return number


def ranks(low=1):
    """A number of ranks: low..2^31-1 (a C int, as MPI holds it)."""
    return click.IntRange(low, INT_MAX)


RANKS = ranks()


# mpiexec options that set the number of ranks: quadsel gives it (-n) in every launch, from --np or the layouts
RANK_COUNT_OPTIONS = ("-n", "-np", "--np", "--n", "-c")


class MpiexecArgs(click.ParamType):
    """Options for mpiexec, split like a shell (shlex); the text is kept as given. An option that sets the number
    of ranks (Open MPI's and Hydra's -n, -np, ...) contradicts quadsel's own -n: refused here."""

    name = "args"

    def convert(self, value, param, ctx):
        try:
            words = shlex.split(value)
        except ValueError as exc:
            self.fail(f"{one_line(value, 60)!r} cannot be split like a shell: {str(exc).lower()}.", param, ctx)
        for word in words:
            if word.split("=", 1)[0] in RANK_COUNT_OPTIONS:
                self.fail(f"{one_line(word, 30)!r} sets the number of ranks, which quadsel gives mpiexec itself "
                          "(--np, or the layouts): leave it out.", param, ctx)
        return value


MPIEXEC_ARGS = MpiexecArgs()
