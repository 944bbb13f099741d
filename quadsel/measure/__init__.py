"""`quadsel measure`: real measurements of the installed MPI's own collective algorithms (mpi4py).

grid.py parses the grid, mpit.py writes MPI_T control variables, quadsel.libraries knows Open MPI and
MPICH, timing.py is the SKaMPI-style loop (reusable: `time_methods`), output.py the crash-safe CSV,
runner.py the sweep inside the MPI job, launch.py the self-launcher, cli.py the click command.
"""
