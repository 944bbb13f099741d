"""Which algorithm did the library default run? Named from the follow check's fingerprints, default against forced.

verify: the follow check (verify/follow.py) fingerprints the library default at every checked point, and, in the
same launch, every algorithm of the collective forced at segment size 0 (`identify`; the libraries forced through
MPI_T only -- Intel MPI and Open MPI's allgatherv need a launch per algorithm and are identified only among the
arms the check forces anyway). trace: `default_ran` makes that one launch itself for the traced points (the
trace of `default`), and `compare` judges each point the same way. The default ran

- the arms whose whole fingerprint equals the default's (`match: "fingerprint"`; several when the check cannot
  tell them apart, e.g. MPICH's data movers at 2 ranks);
- else, with Open MPI's probe, the arm that ran the same coll/base functions with other messages
  (`match: "functions"`: the same algorithm at a segment size the check did not force);
- else nothing the check forced: `match: "multinode"` where the probe saw the multi-node component's own
  algorithm run (Open MPI's coll/han across nodes: the default is coll/han's, verify/han.py), else `"none"`;
  Open MPI's probe still names the functions that ran.

Names: Open MPI and Intel MPI ids with their names ("6 binomial": an id means another algorithm in every
collective), MPICH's names as they are.
"""

from dataclasses import dataclass, field

from .forcing import DEFAULT_ARM, arm_key
from .probe import MULTINODE_MARK, multinode_part


def named(library, collective, key):
    """A method key ("6", "3/seg8192") with its algorithm's name, as every table prints it (libraries.named_label:
    "6 binomial", "3 pipeline/seg8192"); names (MPICH), `default` and None as they are."""
    from ..libraries import named_label
    return None if key is None else named_label(library, collective, key)


def _functions(fingerprint):
    """Open MPI probe: the coll/base functions rank 0 ran ([] without the probe's function counts)."""
    try:
        part = fingerprint[1][0][1]
        return [str(name) for name, _ in part]
    except (TypeError, IndexError, KeyError, ValueError):
        return []


def identify(arms):
    """{"arms": [method keys], "match": "fingerprint" | "functions" | "none", "functions": [...]} of the default at
    one point from {arm key: fingerprint} (the forced launch's arms, the default among them); None when the
    default has no fingerprint there."""
    default_key = arm_key(DEFAULT_ARM)
    got = arms.get(default_key)
    if got is None:
        return None
    others = {k: v for k, v in arms.items() if k != default_key and v is not None}
    same = sorted(k for k, v in others.items() if v == got)
    match = "fingerprint" if same else "none"
    probed = isinstance(got, list) and len(got) == 2 and isinstance(got[1], list)
    if not same and probed and _functions(got):
        same = sorted(k for k, v in others.items() if isinstance(v, list) and len(v) == 2 and v[1] == got[1])
        match = "functions" if same else "none"
    if not same and probed and multinode_part(got):
        match = "multinode"
    return {"arms": same, "match": match, "functions": _functions(got) if probed else []}


def describe(library, collective, found):
    """The table's words for `identify`'s result: "6 binomial", "one of: a, b", "3 pipeline, other segment
    size", "?"; "—" where the default was not fingerprinted."""
    if not found:
        return "—"
    names = [named(library, collective, k) for k in found["arms"]]
    if found["match"] == "multinode":
        from ..libraries import get as get_library
        own = [f for f in found["functions"] if f.startswith(MULTINODE_MARK)]
        return f"{get_library(library).multinode_component} ({', '.join(own)})"
    if found["match"] == "none":
        return "? (" + ", ".join(found["functions"]) + ")" if found["functions"] else "?"
    text = names[0] if len(names) == 1 else "one of: " + ", ".join(names)
    return text + (", other segment size" if found["match"] == "functions" else "")


def for_rows(rows, checks, library):
    """Add `default_ran` (identify's dict plus `names`, or None) to verify's rows from the checks' PointChecks."""
    from .verdict import point_key
    by_point = {}
    for file_checks in (checks or {}).values():
        for c in file_checks:
            if getattr(c, "default_ran", None) is not None:
                by_point.setdefault(point_key(c), c.default_ran)
    for r in rows:
        found = by_point.get(point_key(r))
        r["default_ran"] = None if found is None else dict(
            found, names=[named(library, r["collective"], k) for k in found["arms"]],
            text=describe(library, r["collective"], found))
    return rows


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
    """DefaultRan of one point from the default's fingerprint and {label: fingerprint} of the forced arms, by
    `identify`'s rule (probed_functions: Open MPI's functions probe ran, so the same functions with other
    messages name the algorithm too)."""
    if default is None or not forced:
        return DefaultRan("unchecked", [], "no fingerprint at this point")
    if probed_functions and not _functions(default):
        return DefaultRan("unchecked", [], "the probe saw no algorithm function")
    arms = {arm_key(DEFAULT_ARM): default}
    arms.update({str(lab): fp for lab, fp in forced.items()})
    found = identify(arms) if probed_functions else _whole(arms)
    labels = sorted(found["arms"], key=_order)
    evidence = {"fingerprint": "the fingerprint of the call", "functions": "the coll/base functions that ran",
                "multinode": "the fingerprint of the call", "none": "the fingerprint of the call"}[found["match"]]
    if not labels:
        return DefaultRan("unknown", [], evidence + ": equal to no forced algorithm's (segment size 0)")
    return DefaultRan("identified" if len(labels) == 1 else "ambiguous", labels, evidence)


def _whole(arms):
    default_key = arm_key(DEFAULT_ARM)
    same = [k for k, v in arms.items() if k != default_key and v == arms[default_key]]
    return {"arms": same, "match": "fingerprint" if same else "none", "functions": []}


def _order(label):
    return (0, int(label), "") if str(label).isdigit() else (1, 0, str(label))


def describe_ran(ran, names=None):
    """One line of what the default ran: "6 binomial", "one of: 6 binomial, 7 knomial", ..."""
    names = names or {}

    from ..libraries import with_name

    def named(lab):
        return with_name(lab, names.get(lab))
    if ran.status == "identified":
        return f"{named(ran.labels[0])}, told apart by {ran.evidence}"
    if ran.status == "ambiguous":
        return "one of " + ", ".join(named(lab) for lab in ran.labels) + f" (equal {ran.evidence} here)"
    if ran.status == "unknown":
        return f"not identified: {ran.evidence}"
    return f"cannot be told here: {ran.evidence}"
