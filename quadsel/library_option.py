"""--library NAME, shared by the commands of quadsel/cli and quadsel/measure (neither imports the other's
options for it): the MPI library the measurement files come from, kept in the Click context for the readers."""

import click


def _library(ctx, param, value):
    if value is not None:
        from .libraries import library_name
        ctx.meta["quadsel.library"] = library_name(value)
    return value


def library_option():
    """--library NAME: the MPI library the measurement files come from (stored in ctx.meta for the reader)."""
    return click.option("--library", "input_library", metavar="NAME", expose_value=False, callback=_library,
                        help="MPI library of the files (openmpi, mpich, intelmpi, or any other name), over what a "
                             ".meta.json or the algorithm names say. Another library's numeric ids stay its own ids: "
                             "the C returns them, and other libraries' rules files refuse the tree.")


def input_library():
    """The --library of the running command, or None."""
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get("quadsel.library") if ctx is not None else None
