"""The `quadsel` Click group: one line and exit status 2 for every QuadselError, 130 on Ctrl-C."""

import click

from .. import __version__
from ..errors import Interrupted, QuadselError, one_line


MESSAGE_LIMIT = 1000   # characters of an error line; longer ones (a cell echoed back) lose their middle


class InputFailure(click.ClickException):
    """Bad input: one line on stderr, exit status 2, no traceback."""

    exit_code = 2


def _usage_line(exc):
    """A usage error (bad option value, missing argument, unknown option) as one line, like every other error:
    Click's own form is a usage block of four lines."""
    command = exc.ctx.command_path if exc.ctx is not None else "quadsel"
    return InputFailure(one_line(f"{command}: {exc.format_message()} (see {command} --help)", MESSAGE_LIMIT))


class QuadselGroup(click.Group):
    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            raise _usage_line(exc) from None

    def invoke(self, ctx):
        from ..inputs import record_inputs
        record_inputs()      # every file this command reads is an input no output may replace (quadsel/output.py)
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise _usage_line(exc) from None
        except Interrupted as exc:   # Ctrl-C where a command says what it kept (measure)
            click.echo(one_line(str(exc), MESSAGE_LIMIT), err=True)
            raise click.exceptions.Exit(exc.exit_code) from None
        except QuadselError as exc:
            raise InputFailure(one_line(str(exc), MESSAGE_LIMIT)) from None
        except KeyboardInterrupt:
            # Every other command writes its output whole at the end (quadsel.output): nothing partial exists.
            name = ctx.invoked_subcommand or "quadsel"
            if not _quiet_rank():
                click.echo(f"quadsel {name}: interrupted; nothing was written (outputs are written whole at the end): "
                           "run the command again", err=True)
            raise click.exceptions.Exit(130) from None


def _quiet_rank():
    """Inside an MPI job only rank 0 speaks."""
    from ..measure.launch import inside_mpi_job, job_rank
    return inside_mpi_job() and job_rank() != 0


@click.group(cls=QuadselGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="quadsel")
def main():
    """Select MPI collective algorithms with quadtree-encoded decision maps.

    measure → build → codegen → report → verify. Run `quadsel COMMAND --help` for each command.
    """
