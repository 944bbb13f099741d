"""The `quadsel` console script and `python -m quadsel`: Ctrl-C at any moment from quadsel's first line on ends
quietly, status 130 and at most one line, never a traceback (docs/conventions.md, "Ctrl-C").

This module imports nothing at its top (its import is the script's first line, outside any handler) and loads
the command line inside try/except KeyboardInterrupt. The phases:
- loading Click and the commands: KeyboardInterrupt, caught here: `quadsel: interrupted`, 130;
- parsing, `--help`, `--version`, Click's own lines: the same, in cli/group.py (where Click would say "Aborted!"
  with status 1);
- the command: its own handler says what it kept (cli/group.py), 130;
- after it (SystemExit on its way out, the interpreter's exit handlers and shutdown): a Python handler ends the
  process at once, quietly (cli/group.py, after_command); a Ctrl-C in the calls that install it does the same
  (end_quietly);
- in any phase, a Ctrl-C that Python could not raise where it landed (a weakref callback, a __del__: "Exception
  ignored in ...") is raised again in the main thread (`_unraisable`), and one Python wrapped in another exception
  (errors.from_ctrl_c) is taken for what it is.
No signal is ever ignored: SIG_IGN survives exec into every child, and a Python started with SIGINT ignored never
installs its KeyboardInterrupt (a `quadsel measure` started by tune would then outlive a killed tune, deaf to the
SIGINT its parent's death sends it). A handler installed here is a Python function: exec gives every child the
default action back.
"""


def main():
    try:
        import sys
        sys.unraisablehook = _unraisable(sys.unraisablehook)
        from .cli import main as command_line
        from .cli.group import as_program
        as_program()
        command_line(prog_name="quadsel")     # QuadselGroup.main: ends with SystemExit, Ctrl-C included
    except KeyboardInterrupt:
        interrupted()
    except SystemExit as exc:
        try:
            _after(exc.code)
        except KeyboardInterrupt:   # Ctrl-C after the command ended, before SIGINT was blocked (in _after's calls)
            from .cli.group import end_quietly
            end_quietly(exc.code)
        raise
    except Exception as exc:
        from .errors import from_ctrl_c
        if not from_ctrl_c(exc):
            raise
        interrupted()


def _after(code):
    """The command is over: cli/group.after_command installs the handler that ends the process quietly. SIGINT
    is blocked while it does (a Ctrl-C landing in between was a traceback from inside it, issue 41) and delivered,
    to that handler, once it is in place; a blocked SIGINT never reaches a child (none is started here)."""
    import signal
    from .cli.group import after_command
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        after_command(code)
        _status_as_given()
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _status_as_given():
    """The process ends with the status its SystemExit gives. CPython marks a KeyboardInterrupt that leaves an
    exec() or eval() of a string -- an import Ctrl-C interrupted while it created a dataclass or a namedtuple -- as
    unhandled even when it is caught later, and at its very end then kills itself with SIGINT instead (a parent saw
    status -2 after `quadsel: interrupted`: CI, 2026-11-28). Each exec of a string clears that mark before it runs
    (Python/pythonrun.c, run_eval_code_obj); this one raises nothing."""
    exec("")


def _unraisable(default):
    """A Ctrl-C that lands in code Python runs where it cannot raise (a weakref callback such as importlib's module
    lock's, a __del__) is printed as "Exception ignored ... KeyboardInterrupt" and lost: raise it again, in the
    main thread's own flow, where the phases above handle it."""
    def hook(unraisable):
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            import _thread      # from another thread: here it would be raised in this hook, and lost again
            _thread.start_new_thread(_thread.interrupt_main, ())
        else:
            default(unraisable)
    return hook


def interrupted():
    """Ctrl-C while the command line was loaded: nothing was written. One line, status 130."""
    import os
    import sys
    group = sys.modules.get("quadsel.cli.group")
    if group is not None:
        group.after_command(130)
    try:
        sys.stderr.flush()
    except Exception:   # a pipe gone, or the flush this signal interrupted
        pass
    try:
        os.write(2, b"quadsel: interrupted\n")
    except OSError:
        pass
    _status_as_given()
    raise SystemExit(130)
