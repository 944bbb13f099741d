"""Which algorithm did the library default run? The follow check's fingerprints, default against every forced one.

One launch of quadsel.verify.fingerprint (the follow check's worker, with its probe where it can be built)
calls the collective on a communicator left to the library's own selection and on one communicator per
algorithm forced through MPI_T (segment size 0); Intel MPI and Open MPI's read-only collectives are forced by
the environment, one launch per algorithm (quadsel.verify.follow). At every point the default's
fingerprint is compared with the forced ones:

  identified   exactly one algorithm's fingerprint equals the default's: that is what ran;
  ambiguous    several do (they send the same messages here, e.g. most algorithms at 2 ranks): one of them;
  unknown      none does (Open MPI without its probe: the default may use a segment size, whose messages
               differ from the forced run's at segment size 0);
  unchecked    the fingerprint cannot tell (no probe, and no reduction order for this collective).

Open MPI with the probe compares the coll/base functions that ran only (they name the algorithm whatever its
segment size); otherwise the whole fingerprint. Shared by `quadsel trace` (the trace of `default`) and
`quadsel verify` (which algorithm the default ran at each point of its table).
"""

import sys
import tempfile
from dataclasses import dataclass, field

from ..measure import launch
from .follow import _env_forcing, _forced_by_env, _launch
from .forcing import DEFAULT_ARM, arm_key, json_arm
from .probe import environment as probe_environment


@dataclass
class DefaultRan:
    status: str                      # identified | ambiguous | unknown | unchecked
    labels: list = field(default_factory=list)    # the algorithms whose forced fingerprint equals the default's
    evidence: str = ""               # what was compared

    def as_json(self, names=None):
        names = names or {}
        return {"status": self.status, "algorithms": [{"label": lab, "name": names.get(lab, lab)} for lab in self.labels],
                "evidence": self.evidence}


def compare(default, forced, probed_functions):
    """DefaultRan of one point from the default's fingerprint and {label: fingerprint} of the forced arms.

    probed_functions: the fingerprints are [traffic, probe] with Open MPI's functions probe, compared on
    the probe part only (the functions name the algorithm whatever its segment size)."""
    if default is None or not forced:
        return DefaultRan("unchecked", [], "no fingerprint at this point")
    part = (lambda fp: fp[1] if isinstance(fp, list) and len(fp) == 2 else fp) if probed_functions else (lambda fp: fp)
    evidence = "the coll/base functions that ran" if probed_functions else "the fingerprint of the call"
    mine = part(default)
    if mine is None or (probed_functions and not any(calls for _, calls in mine)):
        return DefaultRan("unchecked", [], "the probe saw no algorithm function")
    labels = sorted((lab for lab, fp in forced.items() if fp is not None and part(fp) == mine), key=_order)
    if not labels:
        return DefaultRan("unknown", [], evidence + ": equal to no forced algorithm's (segment size 0)")
    return DefaultRan("identified" if len(labels) == 1 else "ambiguous", labels, evidence)


def _order(label):
    return (0, int(label), "") if str(label).isdigit() else (1, 0, str(label))


def default_ran(library, collective, points, np_, algorithms, python=None, mpiexec=None, timeout=900, probe=True,
                echo=None):
    """{(comm, msg): DefaultRan} of what the library default runs at each point (comm <= np_).

    library: its quadsel name (openmpi, mpich, intelmpi); algorithms: the labels to force (every forcible one
    of the collective: libraries' `algorithms(collective)`); python: the ranks' interpreter."""
    from ..libraries.base import is_reduction
    python = python or sys.executable
    mpiexec = launch.find_mpiexec(mpiexec)
    points = sorted({(int(n), int(m)) for n, m in points if n <= np_})
    arms = [json_arm(DEFAULT_ARM)] + [json_arm((str(lab), 0, ())) for lab in algorithms]
    with tempfile.TemporaryDirectory(prefix="quadsel-default-ran-") as workdir:
        extra, why = probe_environment(library, workdir, python) if probe else ({}, "not asked")
        extra = dict(extra or {})
        if why and echo and library in ("openmpi", "mpich"):
            echo(f"note: which algorithm the default ran is judged without the probe: {why}")
        if library == "openmpi":
            from .traffic import MONITORING_ENV
            extra.update(MONITORING_ENV)
            kind = "traffic"
        else:
            kind = "order"
            if not extra and not is_reduction(collective):
                return {p: DefaultRan("unchecked", [], f"no fingerprint of {library}'s {collective} without the probe")
                        for p in points}
        spec = {"collective": collective, "kind": kind, "points": [list(p) for p in points]}
        if _env_forcing(library, collective):
            by_arm = _forced_by_env(np_, spec, arms, library, python, mpiexec, timeout, workdir, extra)
        else:
            by_arm = _launch(np_, dict(spec, forced=arms), extra, python, mpiexec, timeout, workdir)
    functions = library == "openmpi" and bool(extra.get("LD_PRELOAD"))
    out = {}
    for p in points:
        got = by_arm.get(p, {})
        default = got.get(arm_key(DEFAULT_ARM))
        forced = {str(a[0]): got.get(arm_key(a)) for a in arms[1:]}
        out[p] = compare(default, forced, functions)
    return out


def describe(ran, names=None):
    """One line of what the default ran: "binomial (6)", "one of: binomial (6), knomial (7)", ..."""
    names = names or {}

    def named(lab):
        name = names.get(lab)
        return f"{name} ({lab})" if name and name != lab else str(lab)
    if ran.status == "identified":
        return f"{named(ran.labels[0])}, told apart by {ran.evidence}"
    if ran.status == "ambiguous":
        return "one of " + ", ".join(named(lab) for lab in ran.labels) + f" (equal {ran.evidence} here)"
    if ran.status == "unknown":
        return f"not identified: {ran.evidence}"
    return f"cannot be told here: {ran.evidence}"
