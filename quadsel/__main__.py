"""`python -m quadsel`: the same as the `quadsel` command (quadsel/entry.py: Ctrl-C at any moment)."""
try:
    from .entry import main
except KeyboardInterrupt:         # while entry.py is read (a few instructions: it imports nothing)
    import sys
    sys.stderr.write("quadsel: interrupted\n")
    raise SystemExit(130) from None

if __name__ == "__main__":
    main()
