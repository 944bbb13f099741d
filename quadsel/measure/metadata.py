"""The metadata JSON a sweep writes beside its CSV (docs/formats-input.md, *quadsel measure metadata*): what was
measured, with which library, method and machine, and the runs that wrote it (a resumed run appends one)."""

import os
import platform
import time
from dataclasses import asdict

from .. import __version__
from ..decision.decision_map import method_label
from ..errors import QuadselError
from ..libraries import alphatree
from . import output


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def resume_grid(spec, methods, dtype_name=None):
    """What a resumed output must have been measured with (output.check_resume)."""
    # one launch per method (environment forcing) measures one method of the grid per launch
    return {"comm_sizes": spec.comm_sizes, "msg_sizes": spec.msg_sizes, "datatype": dtype_name,
            "methods": None if spec.env_method else [method_label(label, seg) for label, seg in methods],
            "layouts": None if not getattr(spec, "layouts", None) else [f"{a}x{b}" for a, b in spec.layouts]}


def start_meta(spec, library, methods, labels, dtype_name, npoints, job_size, timing_info=None):
    from mpi4py import MPI
    import mpi4py
    old = None
    if spec.resume and os.path.exists(spec.output):
        output.check_resume(spec.output, spec.collective, library.name,
                            resume_grid(spec, methods, dtype_name))
        old = output.read_meta(spec.output)
    if old:
        # metadata from before --timing existed (quadsel <= the first examples) was always `local`
        old_timing = (old.get("methodology") or {}).get("timing", "local")
        if old_timing != spec.timing:
            raise QuadselError(f"{spec.output} holds data timed with --timing {old_timing} and this run would "
                               f"use {spec.timing}; pass --timing {old_timing}, another --output or --no-resume")
        old_sync = (old.get("methodology") or {}).get("sync", "barrier")
        if old_sync != spec.sync:
            raise QuadselError(f"{spec.output} holds data measured with --sync {old_sync} and this run would "
                               f"use {spec.sync}; pass --sync {old_sync}, another --output or --no-resume")
    offered = library.algorithms(spec.collective)
    meta = {
        "quadsel_version": __version__,
        "collective": spec.collective,
        "library": library.name,
        "library_version": MPI.Get_library_version().replace("\0", "").strip(),
        "mpi_standard": "%d.%d" % MPI.Get_version(),
        "mpi4py_version": mpi4py.__version__,
        "thread_level": {MPI.THREAD_SINGLE: "single", MPI.THREAD_FUNNELED: "funneled",
                         MPI.THREAD_SERIALIZED: "serialized", MPI.THREAD_MULTIPLE: "multiple"}.get(
                             MPI.Query_thread(), str(MPI.Query_thread())),
        "forcing": library.forcing,
        "libmpi": getattr(library.mpit, "path", None),
        "job_size": job_size,
        "command": spec.command,
        "grid": {
            "algorithms": {label: offered.get(label) or (alphatree.describe(label) if alphatree.is_alpha(label)
                                                         else "library default") for label in labels},
            "methods": [method_label(label, seg) for label, seg in methods],
            "segments": spec.segments,
            "comm_sizes": spec.comm_sizes,
            **({"layouts": [f"{a}x{b}" for a, b in spec.layouts]} if spec.layouts else {}),
            "msg_sizes": spec.msg_sizes,
            "datatype": dtype_name,
            "points": npoints,
        },
        "methodology": dict(asdict(spec.rule), warmup=spec.warmup, batch=spec.batch, rounds=spec.rounds,
                            seed=spec.seed, barrier_before_each_call=spec.sync == "barrier", sync=spec.sync,
                            timing=spec.timing, adaptive=spec.adaptive, sample=spec.sample,
                            **(timing_info or {}), hang_timeout=spec.hang_timeout,
                            timer={"span": "CLOCK_MONOTONIC", "offset": "CLOCK_MONOTONIC - host offset"}.get(
                                spec.timing, "MPI_Wtime"),
                            time_of_call={"span": "latest end - earliest start over ranks",
                                          "offset": "latest end - earliest start over ranks on clocks corrected by "
                                                    "each host's offset to rank 0's; every call started at a "
                                                    "common time"}.get(
                                spec.timing, "max over ranks of each rank's own duration")),
        "environment": {k: v for k, v in sorted(os.environ.items())
                        if k.startswith(("OMPI_MCA_", "MPIR_CVAR_", "PRTE_MCA_", "PMIX_MCA_"))},
        "machine": {"platform": platform.platform(), "python": platform.python_version(),
                    "cpus": os.cpu_count()},
        "runs": (old or {}).get("runs", []) + [{"command": spec.command,
                                               "started": now(), "finished": None, "complete": False}],
        "complete": False,
    }
    return meta
