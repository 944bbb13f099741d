"""Arms of a verify launch and how each is forced.

An arm is [label, segsize] or [label, segsize, [[param, value], ...]] (quadsel.targets.library_call.Pick.arm): the
measure module's algorithm label and segment size, plus what a rules file's rule may carry beyond them
(Open MPI: a chain fan-out other than the forced default 4, a reduce's max outstanding requests), forced
through the matching coll/tuned control variables.
"""

from ..errors import QuadselError
from ..ingest.table import DEFAULT_ALGORITHM

DEFAULT_ARM = (DEFAULT_ALGORITHM, 0, ())
# Open MPI forced-run control variables of a rule's extra parameters
PARAM_CVARS = {"chain_fanout": "coll_tuned_{coll}_algorithm_chain_fanout",
               "max_requests": "coll_tuned_{coll}_algorithm_max_requests"}


def norm_arm(arm):
    """Hashable (label, segsize, ((param, value), ...)) of an arm in any of its forms."""
    params = tuple(sorted((str(k), int(v)) for k, v in (arm[2] if len(arm) > 2 else ())))
    return (str(arm[0]), int(arm[1]), params)


def arm_key(arm):
    """The arm's name in results, in the one method notation of every output (decision_map.Method.label):
    "6", "3/seg8192", "2/seg8192 (chain_fanout=2)"."""
    label, seg, params = norm_arm(arm)
    text = label if not seg else f"{label}/seg{seg}"
    return text + (" (" + ", ".join(f"{k}={v}" for k, v in params) + ")" if params else "")


def json_arm(arm):
    label, seg, params = norm_arm(arm)
    return [label, seg] + ([[list(p) for p in params]] if params else [])


class Forcing:
    """library.activate for an arm, plus its extra parameters (restored to the library's value otherwise)."""

    def __init__(self, library, collective):
        self.library = library
        self.collective = collective
        self.saved = {}

    def activate(self, arm):
        label, seg, params = norm_arm(arm)
        self.library.activate(self.collective, label, seg)
        params = dict(params)
        for name in sorted(set(params) | set(self.saved)):
            if name not in PARAM_CVARS:
                raise QuadselError(f"cannot force parameter {name!r}")
            mpit = getattr(self.library, "mpit", None)
            cvar = PARAM_CVARS[name].format(coll=self.collective)
            if mpit is None or not mpit.has(cvar):
                raise QuadselError(f"cannot force {name} for {self.collective}: MPI_T has no {cvar}")
            if name not in self.saved:
                self.saved[name] = mpit.read_int(cvar)
            mpit.write_int(cvar, params.get(name, self.saved[name]))


def worker_main(run, argv):
    """Entry point of a worker launched under mpiexec: `python -m MODULE SPEC.json OUT.json`; rank 0 writes."""
    import json
    from ..output import write_text
    spec_path, out_path = argv
    with open(spec_path) as handle:
        spec = json.load(handle)
    result = run(spec)
    if result is not None:
        write_text(out_path, json.dumps(result) + "\n")
