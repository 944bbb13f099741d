"""Fingerprints of collective calls on the layouts of a multi-host job (e.g. on the namespace cluster,
quadsel.testbed): which algorithm the library ran on each layout's communicator (quadsel.verify.fingerprint with
[comm, msg, nodes, ppn] or [comm, msg, "r0,r1,..."] points), with a tuning file or an algorithm forced through the launch's environment.

The follow proof per layout (docs/cluster.md, "Intel MPI's ppn level"): a file launch's fingerprint at a point
equals the forced launch's of the preset the file names there, and differs from the other presets'.
"""

import json
import os
import tempfile

from ..errors import QuadselError
from ..layout import Layout


def layout_fingerprints(cluster, flavor, python, ppn, points, collective="allreduce", env=None, nodes=None,
                        timeout=300, attempts=2):
    """{(comm, msg, layout): fingerprint} of one job of `nodes` (default all) hosts x `ppn` ranks on `cluster`,
    the library deciding by itself under `env` (e.g. {"I_MPI_TUNING": FILE} or {"I_MPI_ADJUST_ALLREDUCE": "8"}).
    points: [(comm, msg, layout)], layout "NxP" or "r0,r1,..." world ranks (quadsel.verify.fingerprint)."""
    from ..measure.launch import python_module
    mpiexec = os.path.join(os.path.dirname(python), "mpiexec")
    argv, launch_env = cluster.launcher(flavor, mpiexec, ppn, nodes=nodes)
    spec = {"collective": collective, "kind": "order", "points": [_point(*p) for p in points], "forced": None}
    with tempfile.TemporaryDirectory(prefix="quadsel-layout-fp-") as workdir:
        spec_path, out_path = os.path.join(workdir, "spec.json"), os.path.join(workdir, "out.json")
        with open(spec_path, "w") as handle:
            json.dump(spec, handle)
        job_env = dict(os.environ, **launch_env, **(env or {}))
        for attempt in range(attempts):     # a launch now and then fails at start-up on the loaded VM
            done = cluster.run(1, argv + python_module(python, "quadsel.verify.fingerprint") + [spec_path, out_path],
                               env=job_env, timeout=timeout)
            if done.returncode == 0 and os.path.exists(out_path):
                break
        else:
            tail = " | ".join(done.stderr.strip().splitlines()[-3:])
            raise QuadselError(f"fingerprint launch on the cluster failed (exit {done.returncode}): {tail}")
        with open(out_path) as handle:
            rows = json.load(handle)["points"]
    return {(r["comm"], r["msg"], _name(r["layout"])): r["arms"].get("library") for r in rows}


def _point(comm, msg, layout):
    """quadsel.verify.fingerprint's point: [comm, msg, nodes, ppn] for "NxP", [comm, msg, "r0,r1,..."] else."""
    match = Layout.match(layout)
    return [comm, msg, *match] if match else [comm, msg, layout]


def _name(layout):
    return f"{layout[0]}x{layout[1]}" if len(layout) == 2 else layout[0]


def presets_that_ran(by_file, by_preset):
    """{point: [presets whose forced fingerprint equals the file launch's]} (by_preset: {preset: fingerprints})."""
    return {p: sorted(k for k, fps in by_preset.items() if fps.get(p) == fp) for p, fp in by_file.items()}
