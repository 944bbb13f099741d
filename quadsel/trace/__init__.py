"""Why an algorithm is slow here: `quadsel trace` and `quadsel breakdown` (docs/trace.md).

record.py traces a forced algorithm rank by rank inside the MPI job (every rank's entry and exit of every call
on one clock; `python -m quadsel.trace.record` is what the launched ranks run), trace_file.py reads a trace file
back without MPI (checked whole), breakdown.py analyses it (waits, critical path, tree positions, alike ranks),
breakdown_report.py prints the tables and timemap.py draws the figure (matplotlib optional).
"""
