"""What to measure when a full sweep is too dear: the strategies of `quadsel measure`, and their replay.

adaptive.py is the plan (what to measure next where the decision changes; FullSweep, the plain grid, too),
sample.py the sparse sample a model-based build needs (--sample model), budget.py parses --budget and estimates
the full sweep, sweep.py runs a plan over the grid (resume, `# skipped` lines, budget, progress) for the MPI job
and the replay alike, adaptive_run.py is the plan inside the MPI job (on quadsel.measure's point timing), and
replay.py answers the plan from recorded sweeps instead of MPI (--replay). No module here imports mpi4py at
import time.
"""
