"""quadsel command line: thin wrappers around ingest → decision → targets / evaluate.

group.py is the Click group (errors → one line, exit 2), options.py the options shared by commands,
commands.py the commands; `measure` is registered from quadsel/measure/cli.py. Heavy packages (NumPy,
SciPy, matplotlib, mpi4py, scikit-learn) are imported inside the commands that use them.
"""

from . import breakdown, commands  # noqa: F401 (registers the commands on the group)
from .group import main


def _register_optional_commands():
    try:
        from ..measure.cli import measure
        from ..measure.trace_cli import trace
    except ImportError:   # quadsel.measure's dependencies are missing
        return
    main.add_command(measure)
    main.add_command(trace)


_register_optional_commands()

__all__ = ["main"]
