"""The `quadsel` console script and `python -m quadsel`: Ctrl-C at any moment ends quietly (docs/conventions.md,
"Ctrl-C").

While a command runs, Ctrl-C is a KeyboardInterrupt that the command handles (cli/group.py: one line, what was
kept, exit status 130). Before it runs (loading the command line: Click, the commands, the options, `--help`,
`--version`) a KeyboardInterrupt surfaced as a traceback, or as Click's "Aborted!" with status 1: the handler
installed here first thing ends the process at once with one line and status 130 (nothing is being written
then). cli/group.py hands Ctrl-C back to Python while the command runs, and after it (Click's exit, the
interpreter's shutdown) ends the process quietly again. Before this module runs (the interpreter's own start-up:
site-packages' .pth files, runpy) Python itself handles Ctrl-C, which no program can change (docs/conventions.md
gives the measured window).
"""

import atexit
import os
import signal


def _before_command(signum, frame):
    try:
        os.write(2, b"quadsel: interrupted\n")
    except OSError:
        pass
    os._exit(130)


_before_command.quadsel_phase = "before"   # cli/group.py recognises it: quadsel runs as the program


def main():
    try:
        if getattr(signal.getsignal(signal.SIGINT), "quadsel_phase", None) is None:   # __main__.py's already
            signal.signal(signal.SIGINT, _before_command)
    except (ValueError, OSError):   # not the main thread: Python's own handling stays
        return _run()
    # The interpreter's finalization puts SIGINT back to its default action after the exit handlers (the process
    # killed by the signal, status -2 to its parent): from there on, with no quadsel code left, it is ignored.
    atexit.register(signal.signal, signal.SIGINT, signal.SIG_IGN)
    _run()


def _run():
    from .cli import main as command_line
    command_line(prog_name="quadsel")
