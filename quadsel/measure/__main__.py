"""`python -m quadsel.measure ...`: the command the self-launcher runs under mpiexec."""

import sys

import click

from ..errors import Interrupted, QuadselError, one_line
from . import launch
from .cli import measure


def main(argv=None):
    launch.exit_with_launcher()   # a rank of a killed `quadsel measure --np` ends too, releasing the output
    try:
        code = measure.main(args=argv, prog_name="quadsel measure", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.Abort:      # Ctrl-C while click parsed the options
        return 130
    except Interrupted as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    except QuadselError as exc:
        sys.stderr.write(f"Error: {one_line(str(exc), 1000)}\n")
        return exc.exit_code
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
