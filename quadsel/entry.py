"""The `quadsel` console script and `python -m quadsel`: Ctrl-C while the command line is still being loaded
(the first tenth of a second) ends quietly with exit status 130, as it does once a command runs."""

import sys


def main():
    try:
        from .cli import main as command_line
    except KeyboardInterrupt:
        sys.stderr.write("quadsel: interrupted\n")
        sys.exit(130)
    command_line(prog_name="quadsel")
