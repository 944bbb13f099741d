"""`python -m quadsel`: the same as the `quadsel` command (quadsel/entry.py: Ctrl-C at any moment)."""
try:   # a Ctrl-C lost in importlib's lock callback while entry.py loads is raised again (entry._unraisable)
    import sys
    import _thread      # both already loaded: no import lock, whose weakref callback would swallow a Ctrl-C
    sys.unraisablehook = (lambda default: lambda u: _thread.start_new_thread(_thread.interrupt_main, ())
                          if isinstance(u.exc_value, KeyboardInterrupt) else default(u))(sys.unraisablehook)
    from .entry import main
except KeyboardInterrupt:         # while entry.py is read (a few instructions: it imports nothing)
    import sys
    sys.stderr.write("quadsel: interrupted\n")
    raise SystemExit(130) from None

if __name__ == "__main__":
    main()
