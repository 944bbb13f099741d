"""`quadsel measure`'s sweep runner: real measurements of the installed MPI's own collective algorithms (mpi4py).

grid.py parses the grid, mpit.py writes MPI_T control variables (quadsel.libraries knows each library), calls.py
is every collective's call and buffers, timing.py the SKaMPI-style loop (reusable: `time_methods`), point.py
measures the methods at one point on the first n ranks, runner.py the sweep inside the MPI job, output.py the
crash-safe CSV and its rounds journal, metadata.py the metadata it writes, progress.py the progress display,
watchdog.py the hang watchdog, launch.py the launcher (`mpiexec … python -m quadsel.pipeline.measure_job
SPEC`: quadsel.pipeline.measure starts such a job), skew.py and
selfcheck.py the clock-skew and forcing checks. What to measure when not everything (adaptive, sampled, replayed)
is quadsel.sampling; the command line is quadsel.cli.measure.
"""
