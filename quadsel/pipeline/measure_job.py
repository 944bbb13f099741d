"""What every rank of a self-launched measurement runs: `python -m quadsel.pipeline.measure_job SPEC.json`
(pipeline/measure.py writes the spec: pipeline/measure_spec.py). The user's own `mpiexec -n N quadsel measure ...` runs the same
sweep through the command line instead (cli/measure.py)."""

import sys

from ..errors import QuadselError, ctrl_c_says, one_line


def main(argv=None):
    from ..measure import launch
    launch.exit_with_launcher()    # the ranks end when the process that launched them is gone (kill -9 included)
    argv = sys.argv[1:] if argv is None else argv
    rank0 = launch.job_rank() == 0
    try:
        with ctrl_c_says(None):        # the launching process says what was kept; the ranks leave quietly
            from ..measure import runner
            from . import measure_spec
            spec = measure_spec.load(argv[0])
            planned = None
            if spec.adaptive or spec.sample:   # the plan inside the job (sampling/adaptive_run.py)
                from ..sampling.adaptive_run import sweep_adaptive as planned
            runner.run(with_default_sizes(spec), planned)
    except QuadselError as exc:
        if rank0:
            sys.stderr.write(f"Error: {one_line(str(exc))}\n")
        raise SystemExit(2) from None


def check_job_size(np_):
    """--np given to a rank of a job started by a launcher: it must be the job's size."""
    import os
    size = int(os.environ.get("OMPI_COMM_WORLD_SIZE") or os.environ.get("PMI_SIZE") or 0)
    if size and size != np_:
        raise QuadselError(f"--np {np_} but this MPI job has {size} ranks; drop --np under a launcher")


def with_default_sizes(spec):
    """The spec with every communicator size of the job, 2 to its size, when it names none."""
    from ..measure import runner   # lazy: numpy (and mpi4py) only when a measurement runs
    if spec.comm_sizes is None:
        size = runner._import_mpi().COMM_WORLD.Get_size()
        if size < 2:
            raise QuadselError("this job has 1 rank: launch under mpiexec -n N or pass --np N")
        spec.comm_sizes = list(range(2, size + 1))
    return spec


if __name__ == "__main__":
    main()
