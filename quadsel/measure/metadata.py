"""The metadata JSON a sweep writes beside its CSV (docs/formats-input.md, *quadsel measure metadata*): what was
measured, with which library, method and machine, and the runs that wrote it (a resumed run appends one)."""

import os
import platform
import re
import secrets
import sys
import time
from dataclasses import asdict

from .. import __version__
from ..decision.decision_map import method_label
from ..errors import QuadselError
from ..ingest.identity import oversubscribed_note
from ..libraries import alphatree
from . import output, resume
from .journal import header as journal_header
from .multinode import record


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def resume_grid(spec, methods, dtype_name=None):
    """What a resumed output must have been measured with (output.check_resume)."""
    # one launch per method (environment forcing) measures one method of the grid per launch
    return {"comm_sizes": spec.comm_sizes, "msg_sizes": spec.msg_sizes, "datatype": dtype_name,
            "methods": None if spec.env_method else [method_label(label, seg) for label, seg in methods],
            "layouts": None if not getattr(spec, "layouts", None) else [f"{a}x{b}" for a, b in spec.layouts]}


def start_meta(spec, library, methods, labels, dtype_name, npoints, job_size, timing_info=None):
    """(the metadata of this run, the grids of the runs before it on this output: resume.earlier_grids)."""
    from mpi4py import MPI
    import mpi4py
    old = None
    multinode = record(library, spec.collective, spec.layouts)
    # a later launch of the one-launch-per-method fallback continues the first's file, even with --no-resume
    if (spec.resume or os.environ.get(output.CONTINUED)) and os.path.exists(spec.output):
        note = output.check_resume(spec.output, spec.collective, library.name, resume_grid(spec, methods, dtype_name))
        if note:
            sys.stderr.write(note + "\n")
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
        _check_multinode(spec, old, multinode)
    offered = library.algorithms(spec.collective)
    grid = {
        "algorithms": {label: offered.get(label) or (alphatree.describe(label) if alphatree.is_alpha(label)
                                                     else "library default") for label in labels},
        "methods": [method_label(label, seg) for label, seg in methods],
        "segments": spec.segments,
        "comm_sizes": spec.comm_sizes,
        **({"layouts": [f"{a}x{b}" for a, b in spec.layouts]} if spec.layouts else {}),
        "msg_sizes": spec.msg_sizes,
        "datatype": dtype_name,
        "points": npoints,
    }
    earlier = resume.earlier_grids(old)
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
        # the file's grid: this run's, or with other grids resumed the union of all (measure/resume.py)
        "grid": resume.union((old or {}).get("grid"), grid),
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
        **({"multinode": multinode} if multinode else {}),
        "environment": {k: v for k, v in sorted(os.environ.items())
                        if k.startswith(("OMPI_MCA_", "MPIR_CVAR_", "PRTE_MCA_", "PMIX_MCA_"))},
        "machine": {"platform": platform.platform(), "python": platform.python_version(),
                    "cpus": os.cpu_count()},
        "runs": (old or {}).get("runs", []) + [{"command": spec.command, "grid": resume.run_grid(grid),
                                               "started": now(), "finished": None, "complete": False}],
        "complete": False,
        # ties the rounds journal to this output (measure/journal.py): given by the first run, kept by resumed ones
        "output_id": _output_id(old),
    }
    return meta, earlier


def _check_multinode(spec, old, multinode):
    """Refuse to pool `default` rows of 2+ nodes timed with and without the multi-node component (coll/han): a file
    measured before quadsel timed its default (its metadata has layouts of 2+ nodes but no `multinode`) or by a
    user who since decided about it."""
    across = [lay for lay in old.get("layouts") or () if lay.get("nodes", 1) >= 2]
    if across and old.get("multinode") != multinode:
        def said(entry):
            return (f"{entry['component']}'s default as the library default" if entry else
                    "the multi-node component (coll/han) switched off or decided by the user")
        raise QuadselError(f"{spec.output} holds rows of 2+ nodes measured with {said(old.get('multinode'))}, and this "
                           f"run would time {said(multinode)}: another --output or --no-resume")


def _output_id(old):
    found = (old or {}).get("output_id")
    if isinstance(found, str) and re.fullmatch(r"[0-9a-f]{16}", found):
        return found
    return secrets.token_hex(8)


def first_writes(spec, meta, results, replaced, earlier):
    """Rank 0's writes before the sweep (the `# replaced` lines, the first metadata): None, or why they failed."""
    try:
        for key, (runs, when, source) in sorted(replaced.items(), key=lambda kv: kv[0][1:]):
            results.append_replaced(key, runs, f"{when} ({source})")   # its message says what is kept
    except QuadselError as exc:
        return str(exc)
    this = meta["runs"][-1]["grid"]
    if any(grid != this for grid in earlier):   # the file's grid is the union: its points
        meta["grid"]["points"] = resume.points(spec.collective, earlier + [this], results.replaced)
    if meta["oversubscribed"]:
        sys.stderr.write(oversubscribed_note(f"measure {spec.collective}", meta) + "\n")
    try:
        results.write_meta(meta)
    except (QuadselError, OSError) as exc:
        why = str(exc) if isinstance(exc, QuadselError) else f"cannot write {spec.output}: {exc.strerror or exc}"
        return f"{why}; the rows written so far are kept: make room and run the same command again to resume"
    return None


def open_outputs(spec, library, methods, labels, dtype_name, npoints, job_size, layouts, timing_info):
    """Rank 0's outputs: (metadata, the earlier runs' grids, the ResultFile, the rounds journal, checked against
    this run: measure/journal.py). The journal's notes (what of it was ignored) are printed here."""
    meta, earlier = start_meta(spec, library, methods, labels, dtype_name, npoints, job_size, timing_info)
    resumed = spec.resume or bool(os.environ.get(output.CONTINUED))
    results = output.ResultFile(spec.output, spec.resume, layouts=layouts)
    journal = output.Journal(output.journal_path(spec.output), resumed, journal_header(
        meta["output_id"], spec.collective, library.name, dtype_name, spec.timing, spec.sync))
    for text in journal.notes:
        sys.stderr.write(text + "\n")
    return meta, earlier, results, journal
