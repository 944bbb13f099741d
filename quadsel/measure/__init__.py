"""`quadsel measure`: real measurements of the installed MPI's own collective algorithms (mpi4py).

grid.py parses the grid, mpit.py writes MPI_T control variables, quadsel.libraries knows Open MPI and
MPICH, timing.py is the SKaMPI-style loop (reusable: `time_methods`), output.py the crash-safe CSV,
point.py measures the methods at one point on the first n ranks, runner.py the sweep inside the MPI job,
launch.py the self-launcher, cli.py the click command. Adaptive measurement: adaptive.py is the plan
(what to measure next), sweep.py runs a plan (resume, `# skipped` lines, budget, progress), budget.py
parses --budget and estimates the full sweep, adaptive_run.py is the plan inside the MPI job, and
replay.py answers the plan from recorded sweeps instead of MPI (--replay).
"""
