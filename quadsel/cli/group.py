"""The `quadsel` Click group: one line and exit status 2 for every QuadselError, 130 on Ctrl-C."""

import sys

import click

from .echo import say
from .. import __version__
from ..errors import Interrupted, QuadselError, from_ctrl_c, one_line


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
    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Click's standalone main, but Ctrl-C in Click's own lines (parsing, `--help`, `--version`, the exit) is
        `quadsel: interrupted` with status 130 instead of "Aborted!" with status 1 (docs/conventions.md)."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            try:
                code = super().main(args, prog_name, complete_var, False, **extra)
            except click.exceptions.Abort:    # Click's form of a KeyboardInterrupt (or of EOF at a prompt)
                raise KeyboardInterrupt from None
            except click.ClickException as exc:
                exc.show()
                code = exc.exit_code
        except KeyboardInterrupt:
            code = _interrupted("quadsel: interrupted")
        sys.exit(code if isinstance(code, int) else 0)

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            raise _usage_line(exc) from None
        except KeyboardInterrupt:   # parsing, --help, --version: nothing was written
            raise click.exceptions.Exit(_interrupted("quadsel: interrupted")) from None

    def invoke(self, ctx):
        try:
            from ..inputs import record_inputs
            record_inputs()      # every file this command reads is an input no output may replace (quadsel/output.py)
            super().invoke(ctx)
            return None   # (main's status: an int only from click's Exit)
        except click.UsageError as exc:
            raise _usage_line(exc) from None
        except Interrupted as exc:   # Ctrl-C where a command says what it kept (measure)
            say(one_line(str(exc), MESSAGE_LIMIT), err=True)
            raise click.exceptions.Exit(exc.exit_code) from None
        except QuadselError as exc:
            raise InputFailure(one_line(str(exc), MESSAGE_LIMIT)) from None
        except (KeyboardInterrupt, Exception) as exc:      # a Ctrl-C, or one Python wrapped (from_ctrl_c)
            if not from_ctrl_c(exc):
                raise
            # Every other command writes its output whole at the end (quadsel.output): nothing partial exists.
            name = ctx.invoked_subcommand or "quadsel"
            raise click.exceptions.Exit(_interrupted(
                f"quadsel {name}: interrupted; nothing was written (outputs are written whole at the end): "
                "run the command again")) from None


def _interrupted(line):
    """Say `line` (rank 0 only) and return 130; a second Ctrl-C from here on ends the process quietly."""
    after_command(130)
    if not _quiet_rank():
        say(line, err=True)
    return 130


_program = False     # quadsel/entry.py runs: quadsel is the program, not a library use or Click's test runner


def as_program():
    global _program
    _program = True


def after_command(code):
    """From here on a Ctrl-C ends the process at once, with status `code` (130 for 0): the output is whole and
    what had to be said was said. Only in the program itself (quadsel/entry.py), on its main thread, outside an
    MPI job (a rank's exit handlers, MPI_Finalize, must run). A Python function, not SIG_IGN: nothing is
    ignored, and every child exec starts has the default action back (docs/conventions.md, "Ctrl-C")."""
    import signal
    import threading
    from ..measure.launch import inside_mpi_job
    if not _program or threading.current_thread() is not threading.main_thread() or inside_mpi_job():
        return
    status = _status_after(code)

    def end(signum, frame):
        _exit_now(status)
    try:
        signal.signal(signal.SIGINT, end)
    except (ValueError, OSError):
        pass


def end_quietly(code):
    """A Ctrl-C that came once the command ended, before after_command's handler was in place: what that handler
    does. In an MPI rank its exit handlers (MPI_Finalize) run instead."""
    from ..measure.launch import inside_mpi_job
    if inside_mpi_job():
        raise SystemExit(_status_after(code))
    _exit_now(_status_after(code))


def _status_after(code):
    return code if isinstance(code, int) and 0 < code < 256 else 130 if not code else 1


def _exit_now(status):
    import os
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:   # a pipe gone, or the flush this signal interrupted
            pass
    os._exit(status)


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
