"""The `quadsel` Click group: one line and exit status 2 for every QuadselError, 130 on Ctrl-C."""

import os
import signal
import sys

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
        program = _interrupts_while_running()
        try:
            from ..inputs import record_inputs
            record_inputs()      # every file this command reads is an input no output may replace (quadsel/output.py)
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
        finally:
            if program:
                _quiet_after_command()


def _interrupts_while_running():
    """When quadsel runs as the program (quadsel/entry.py installed its start-up handler), Ctrl-C becomes Python's
    KeyboardInterrupt again for the command, which says what it kept; True then. Else (a library use, Click's test
    runner, a command invoked by another) nothing changes."""
    if getattr(signal.getsignal(signal.SIGINT), "quadsel_phase", None) != "before":
        return False
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return True


def _after_command(signum, frame):
    """Ctrl-C once the command has ended (Click's exit, the interpreter's shutdown): its output is whole and it
    said so; end at once, quietly, status 130, instead of a KeyboardInterrupt traceback from the shutdown."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:   # a closed pipe, or the flush this signal interrupted
            pass
    os._exit(130)


def _quiet_after_command():
    try:
        signal.signal(signal.SIGINT, _after_command)
    except (ValueError, OSError):
        pass


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
