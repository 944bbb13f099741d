"""quadsel command line: thin wrappers around ingest → decision → targets / evaluate.

group.py is the Click group (errors → one line, exit 2), options.py the options shared by commands,
commands.py build, codegen, report and verify, query.py query (query_rules.py on a rules file, layouts.py on a
layout forest), measure.py `measure` (also what every rank of a
self-launched job runs: `python -m quadsel measure`), trace.py `trace`, breakdown.py `breakdown`, tune.py
`tune` (the whole loop). Heavy packages
(NumPy, SciPy, matplotlib, mpi4py, scikit-learn) are imported inside the commands that use them.
"""

from . import breakdown, commands, query  # noqa: F401 (registers the commands on the group)
from .group import main


def _register_optional_commands():
    try:
        from .measure import measure
        from .trace import trace
        from .tune import tune
    except ImportError:   # quadsel.measure's dependencies are missing
        return
    main.add_command(measure)
    main.add_command(trace)
    main.add_command(tune)


_register_optional_commands()

__all__ = ["main"]
