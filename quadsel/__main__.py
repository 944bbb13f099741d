"""`python -m quadsel`: the same as the `quadsel` command (quadsel/entry.py: Ctrl-C at any moment)."""
try:   # a Ctrl-C lost in importlib's lock callback while entry.py loads is raised again (entry._unraisable)
    import sys
    import _thread      # both already loaded: no import lock, whose weakref callback would swallow a Ctrl-C
    sys.unraisablehook = (lambda default: lambda u: _thread.start_new_thread(_thread.interrupt_main, ())
                          if isinstance(u.exc_value, KeyboardInterrupt) else default(u))(sys.unraisablehook)
    from .entry import main
    if __name__ == "__main__":
        main()      # a Ctrl-C at its very first instruction, before its own handler is set up, comes here
except KeyboardInterrupt:         # while entry.py is read (a few instructions: it imports nothing), or above
    import sys
    sys.stderr.write("quadsel: interrupted\n")
    exec("")        # clears CPython's mark of a Ctrl-C out of an exec of a string (entry._status_as_given)
    raise SystemExit(130) from None
