"""`python -m quadsel`: the same as the `quadsel` command. Ctrl-C is taken in hand at the first line, before
anything else is imported (quadsel/entry.py says why and how)."""

import os

import _signal   # the C module, loaded with the interpreter: `signal` would build its enums first (1 ms here)


def _interrupted(signum, frame):
    try:
        os.write(2, b"quadsel: interrupted\n")
    except OSError:
        pass
    os._exit(130)


_interrupted.quadsel_phase = "before"

if __name__ == "__main__":
    _signal.signal(_signal.SIGINT, _interrupted)
    from .entry import main
    main()
