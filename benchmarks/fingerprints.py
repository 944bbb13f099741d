"""Which algorithms can verify's follow check tell apart? One forced launch per library, collective and size.

For every algorithm of every collective quadsel covers (and the library's own choice, `default`), the
fingerprint the follow check compares (quadsel.verify.fingerprint, with the probe of quadsel.verify.probe) at
one communicator size and the message sizes 8 B, 4 KiB, 1 MiB; algorithms whose fingerprints are equal are
printed in one group, the default's group first. An algorithm in the default's group is one a rules file
could choose there without the check being able to tell it from the library's own choice. Not a timing.

usage: python benchmarks/fingerprints.py [--library openmpi|mpich] [--np N] [--collectives a,b]
(MPICH: QUADSEL_MPICH_PYTHON=/path/to/venv/bin/python, run by that Python.)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MSG_SIZES = (8, 4096, 1 << 20)


def groups(library, np_, collectives):
    """[(collective, msg, [[labels with one fingerprint], ...] default's group first)]."""
    sys.path.insert(0, str(REPO))
    from quadsel.libraries import COLLECTIVES, get, mpich, openmpi
    from quadsel.measure import launch
    from quadsel.verify import follow, probe
    from quadsel.verify.traffic import MONITORING_ENV
    launch.library_without_init()
    table = openmpi.ALGORITHMS if library == "openmpi" else mpich.ALGORITHMS
    out = []
    with tempfile.TemporaryDirectory(prefix="quadsel-fingerprints-") as workdir:
        env, why = probe.environment(library, workdir, sys.executable)
        if why:
            raise SystemExit(f"no probe: {why}")
        for coll in collectives or list(COLLECTIVES):
            labels = [str(k) for k in table[coll]]
            if library == "mpich":
                labels = [a for a in labels if a not in mpich.NOT_BY_DEFAULT]
            kind = get(library).fingerprint
            extra = dict(env, **(MONITORING_ENV if kind == "traffic" else {}))
            points = [[np_, 0]] if coll == "barrier" else [[np_, m] for m in MSG_SIZES]
            spec = {"collective": coll, "kind": kind, "points": points}
            forced = [["default", 0]] + [[a, 0] for a in labels]
            if get(library).env_forced(coll):   # Open MPI allgatherv: one launch per arm
                got = follow._forced_by_env(np_, spec, forced, library, sys.executable, launch.find_mpiexec(), 900,
                                            workdir, extra)
            else:
                got = follow._launch(np_, dict(spec, forced=forced), extra, sys.executable, launch.find_mpiexec(),
                                     900, workdir)
            for (n, m), arms in sorted(got.items()):
                by_print = {}
                for arm, value in arms.items():
                    by_print.setdefault(json.dumps(value), []).append(arm)
                found = sorted(by_print.values(), key=lambda g: ("default" not in g, labels.index(g[0])
                                                                 if g[0] in labels else -1))
                out.append((coll, m, found))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--library", choices=["openmpi", "mpich"], default="openmpi")
    parser.add_argument("--np", type=int, default=2)
    parser.add_argument("--collectives", default=None)
    args = parser.parse_args()
    python = os.environ.get("QUADSEL_MPICH_PYTHON") if args.library == "mpich" else None
    if args.library == "mpich" and not os.environ.get("QUADSEL_FINGERPRINTS_CHILD"):
        if not python:
            raise SystemExit("set QUADSEL_MPICH_PYTHON to a Python whose mpi4py loads MPICH")
        env = dict(os.environ, PYTHONPATH=str(REPO), QUADSEL_FINGERPRINTS_CHILD="1")
        raise SystemExit(subprocess.run([python, __file__] + sys.argv[1:], env=env).returncode)
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    os.environ["PYTHONPATH"] = str(REPO)
    rows = groups(args.library, args.np, args.collectives.split(",") if args.collectives else None)
    print(f"| collective ({args.library}, {args.np} ranks) | msg (B) | the default's group | told apart from it |")
    print("|---|---:|---|---|")
    for coll, msg, found in rows:
        first = found[0] if "default" in found[0] else []
        rest = [g for g in found if g is not first]
        print(f"| {coll} | {msg} | {', '.join(a for a in first if a != 'default') or '—'} | "
              f"{'; '.join(', '.join(g) for g in rest) or '—'} |")


if __name__ == "__main__":
    main()
