"""Per-rank breakdown of a traced collective (docs/trace.md): where each rank's time inside the call goes.

From every rank's entry e and exit x at every call, on one clock (trace/record.py), after Bongo et al.
(allreduce spanning-tree analysis, §3), per call and rank:

- time inside = x - e;
- arrival wait = last entry over the ranks - e (the paper's load-imbalance measure: what a rank would wait
  at a point where all must have arrived);
- departure wait = x - first exit over the ranks (0 for the first to leave);
- sender wait ("late sender") = how long r waited, inside the call, for the latest arrival among the ranks its
  data comes from in the algorithm's tree (its ancestors when data flows down, its subtree when it flows up;
  every rank for algorithms that are not a tree), clipped to [0, time inside];
- receiver wait ("late receiver") = the same for the ranks it sends to directly (children down, parent up),
  which a large (rendezvous) message needs to have entered;
- dependency wait = the larger of the two; the rank that arrived last among both is r's *gate*;
- transfer = time inside - dependency wait: from the gate's arrival (or r's own) to r's exit.

The critical path of a call runs from the gate of the last rank to leave to that rank (along the tree): the span
of the call (last exit - first entry) is the arrival spread up to the gate plus the transfer along that path.
"""

from dataclasses import dataclass, field, replace
from typing import List, Optional

import numpy as np

from ..libraries import trees
from ..libraries.trees import Shape

METRICS = ("inside", "arrival_wait", "sender_wait", "receiver_wait", "dependency_wait", "transfer", "departure_wait",
           "exit_after_start")


@dataclass
class Config:
    """One traced run (algorithm x message size of one trace file), ready for analysis."""
    label: str
    collective: str
    library: str
    algorithm: str
    name: str
    segsize: int
    msg_size: int
    entry: np.ndarray          # calls x ranks, µs on one clock
    exit: np.ndarray
    shape: Optional[Shape]
    header: dict
    overhead: dict
    load_average: Optional[list] = None     # at the start of the run (else of the trace)
    library_ran: Optional[dict] = None      # the default's runs: which algorithm ran (verify/default_ran.py)

    @property
    def ranks(self):
        return self.entry.shape[1]


def _words(text):
    return " ".join(str(text).lower().replace("_", " ").replace("-", " ").split())


def algorithm_title(config):
    """The algorithm and its tree, each said once: "binomial (bmtree)" (not "binomial (binomial (bmtree))"),
    "binary_tree" (its tree is "binary tree"), "chain (4 chains)", "ring (no tree)"."""
    name = config.name or config.algorithm
    shape = config.shape
    ran = config.library_ran or {}
    if shape is None and ran.get("status") == "identified" and ran.get("algorithms"):
        alg = ran["algorithms"][0]
        label, alg_name = alg.get("label"), alg.get("name")
        from ..libraries import with_name
        return f"{name}, ran {with_name(label, alg_name)}"
    if shape is None:
        return f"{name} (no tree)"
    head, _, rest = shape.name.partition(" (")
    detail = rest[:-1] if rest.endswith(")") else rest
    a, b = _words(name), _words(head)
    if a and b and (a in b or b in a):        # the tree's name restates the algorithm's: keep what it adds
        return f"{name} ({detail})" if detail else name
    return f"{name} ({shape.name})"


def configs(named_docs):
    """[Config] of every run of the trace files [(name, doc)]; labels carry the file name when there are several."""
    out = []
    for name, doc in named_docs:
        for run in doc["runs"]:
            n = doc["comm_size"]
            shape = trees.algorithm_shape(doc["library"], doc["collective"], run["algorithm"], n, doc.get("root", 0))
            label = f"{run['algorithm']}" + (f":{run['segsize']}" if run["segsize"] else "") + f" @ {run['msg_size']} B"
            if len(named_docs) > 1:
                label = f"{name}: {label}"
            out.append(Config(label, doc["collective"], doc["library"], run["algorithm"], str(run.get("name", "")),
                              run["segsize"], run["msg_size"], np.asarray(run["entry_us"], float),
                              np.asarray(run["exit_us"], float), shape, doc, run.get("overhead") or {},
                              run.get("load_average") or doc.get("load_average"),
                              run.get("library_ran") if isinstance(run.get("library_ran"), dict) else None))
    return out


def dependencies(shape, n):
    """(senders, receivers): for every rank the ranks whose arrival it may wait for (not itself).

    Senders: the ranks its data comes from -- its ancestors when data flows down (bcast), its subtree when it
    flows up (reduce); every other rank for algorithms that are not a tree. Receivers: the ranks it sends to
    directly -- its children (down) or its parent (up) -- which must have entered the call (posted their
    receive) before a large, rendezvous-protocol message can go ("late receiver")."""
    if shape is None:
        return [[s for s in range(n) if s != r] for r in range(n)], [[] for _ in range(n)]
    if shape.flow == "down":
        return trees.ancestors(shape.parents), trees.children(shape.parents)
    return trees.descendants(shape.parents), [[p] if p >= 0 else [] for p in shape.parents]


def _latest(entry, groups):
    """calls x ranks: the rank of groups[r] (or r itself) that entered last, per call."""
    calls, n = entry.shape
    gate = np.empty((calls, n), dtype=int)
    for r in range(n):
        group = np.array([r] + list(groups[r]))
        gate[:, r] = group[np.argmax(entry[:, group], axis=1)]
    return gate


def per_call(entry, exit_, deps):
    """{metric: calls x ranks}, plus `gate` (the rank r waited for) and `span` (per call). `deps` = dependencies()."""
    senders, receivers = deps
    inside = exit_ - entry
    both = [list(a) + list(b) for a, b in zip(senders, receivers)]
    gate = _latest(entry, both)

    def wait_for(g):
        return np.clip(np.take_along_axis(entry, g, axis=1) - entry, 0.0, inside)
    dependency_wait = wait_for(gate)
    first = entry.min(axis=1, keepdims=True)
    return {"inside": inside,
            "arrival_wait": entry.max(axis=1, keepdims=True) - entry,
            "sender_wait": wait_for(_latest(entry, senders)),
            "receiver_wait": wait_for(_latest(entry, receivers)),
            "dependency_wait": dependency_wait,
            "transfer": inside - dependency_wait,
            "departure_wait": exit_ - exit_.min(axis=1, keepdims=True),
            "exit_after_start": exit_ - first,
            "gate": gate,
            "span": exit_.max(axis=1) - first[:, 0]}


def path_between(shape, gate, last):
    """The ranks of the critical path from `gate` (the rank `last` waited for) to `last`: the tree path when
    one is an ancestor of the other, else just the two (no tree, or a receiver's sibling branch)."""
    if gate == last:
        return [last]
    if shape is None:
        return [gate, last]
    parents = shape.parents
    for low, high in ((last, gate), (gate, last)):
        path = [low]
        while path[-1] != high and parents[path[-1]] != -1:
            path.append(parents[path[-1]])
        if path[-1] == high:
            return path[::-1] if low == last else path
    return [gate, last]


@dataclass
class RankRow:
    rank: int
    means: dict                       # metric -> mean µs over the calls
    ci: dict                          # metric -> 95 % CI half-width of the mean (normal approximation)
    last_arrival: float               # share of calls where this rank entered last
    last_departure: float             # ... left last
    on_critical_path: float           # ... lay on the call's critical path
    gate: int                         # the rank it waited for most often
    depth: Optional[int] = None
    subtree: Optional[int] = None
    children: int = 0


@dataclass
class Breakdown:
    config: Config
    rows: List[RankRow]
    span_us: float                    # mean span of a call
    span_ci: float
    critical: dict                    # mean µs of the span's two parts and the commonest critical paths
    clusters: List[List[int]]
    cluster_tolerance_us: float
    similar_subtrees: List[List[int]] = field(default_factory=list)   # roots of subtrees that behave alike
    by_depth: dict = field(default_factory=dict)
    overhead: dict = field(default_factory=dict)
    dropped_calls: int = 0            # outlier calls fenced off (fenced())


def _ci(values):
    n = values.shape[0]
    return 1.96 * values.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.full(values.shape[1:], np.inf)


def fenced(config, fence=3.0):
    """The config without its outlier calls: span above Q3 + fence x IQR (as `measure` fences samples: a
    rank descheduled for milliseconds on an oversubscribed node would dominate every mean). Whole calls
    are dropped, so every kept call still has all its ranks."""
    span = config.exit.max(axis=1) - config.entry.min(axis=1)
    if fence == 0 or len(span) < 4:
        return config, 0
    q1, q3 = np.percentile(span, [25, 75])
    keep = span <= q3 + fence * (q3 - q1)
    if keep.all():
        return config, 0
    return replace(config, entry=config.entry[keep], exit=config.exit[keep]), int((~keep).sum())


def analyse(config, tolerance=0.10, fence=3.0):
    """The Breakdown of one configuration (outlier calls fenced off); ranks alike when their profiles differ
    by at most max(tolerance x the mean span, twice the largest CI half-width of their means)."""
    config, dropped = fenced(config, fence)
    n = config.ranks
    shape = config.shape
    calls = per_call(config.entry, config.exit, dependencies(shape, n))
    last_arr = np.bincount(config.entry.argmax(axis=1), minlength=n) / len(config.entry)
    last_dep_rank = config.exit.argmax(axis=1)
    last_dep = np.bincount(last_dep_rank, minlength=n) / len(config.exit)
    on_path = np.zeros(n)
    paths = {}
    to_gate = np.empty(len(config.entry))
    along = np.empty(len(config.entry))
    first = config.entry.min(axis=1)
    for c, last in enumerate(last_dep_rank):
        g = int(calls["gate"][c, last])
        path = tuple(path_between(shape, g, int(last)))
        paths[path] = paths.get(path, 0) + 1
        on_path[list(path)] += 1
        start = max(config.entry[c, g], config.entry[c, last])
        to_gate[c] = start - first[c]
        along[c] = config.exit[c, last] - start
    depth = trees.depths(shape.parents) if shape else [None] * n
    subtree = trees.subtree_of(shape.parents) if shape else [None] * n
    kids = trees.children(shape.parents) if shape else [[] for _ in range(n)]
    rows = []
    for r in range(n):
        gates = np.bincount(calls["gate"][:, r], minlength=n)
        rows.append(RankRow(r, {m: float(calls[m][:, r].mean()) for m in METRICS},
                            {m: float(_ci(calls[m][:, r:r + 1])[0]) for m in METRICS},
                            float(last_arr[r]), float(last_dep[r]), float(on_path[r] / len(config.entry)),
                            int(gates.argmax()), depth[r], subtree[r], len(kids[r])))
    span = calls["span"]
    tol = _tolerance(calls, tolerance, float(span.mean()))
    common = sorted(paths.items(), key=lambda kv: -kv[1])[:3]
    critical = {"arrival_to_gate_us": float(to_gate.mean()), "transfer_along_path_us": float(along.mean()),
                "paths": [{"ranks": list(p), "share": k / len(config.entry)} for p, k in common]}
    profiles = _profiles(calls)
    result = Breakdown(config, rows, float(span.mean()), float(_ci(span[:, None])[0]), critical,
                       cluster_ranks(profiles, tol), tol, overhead=overhead(config, float(span.mean())),
                       dropped_calls=dropped)
    if shape:
        result.similar_subtrees = similar_subtrees(shape.parents, profiles, tol)
        result.by_depth = {d: {m: float(np.mean([rows[r].means[m] for r in range(n) if depth[r] == d]))
                               for m in METRICS} for d in sorted(set(depth))}
    return result


PROFILE = ("dependency_wait", "transfer", "departure_wait")


def _profiles(calls):
    """ranks x PROFILE mean µs: what a rank's time inside is made of, and when it leaves."""
    return np.stack([calls[m].mean(axis=0) for m in PROFILE], axis=1)


def _tolerance(calls, tolerance, span):
    noise = max(float(np.max(_ci(calls[m]))) for m in PROFILE)
    return max(tolerance * span, 2 * noise)


def cluster_ranks(profiles, tol):
    """Complete-linkage clusters of rank profiles at Chebyshev distance `tol`: every two ranks of a cluster
    differ by at most `tol` µs in each of dependency wait, transfer and departure wait. Ordered by first rank."""
    n = len(profiles)
    if n == 1:
        return [[0]]
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import pdist
    labels = fcluster(linkage(pdist(profiles, "chebyshev"), method="complete"), t=tol, criterion="distance")
    groups = {}
    for r, lab in enumerate(labels):
        groups.setdefault(lab, []).append(r)
    return sorted(groups.values())


def _signature(kids, v):
    return tuple(_signature(kids, c) for c in kids[v])


def _preorder(kids, v):
    out = [v]
    for c in kids[v]:
        out += _preorder(kids, c)
    return out


def similar_subtrees(parents, profiles, tol):
    """Groups (roots, ascending) of same-shaped subtrees whose ranks, matched position by position, have
    profiles within `tol` of each other (complete linkage, as cluster_ranks); subtrees rooted at every
    non-root rank, groups of 2 or more."""
    kids = trees.children(parents)
    candidates = {}
    for v, p in enumerate(parents):
        if p != -1:
            candidates.setdefault(_signature(kids, v), []).append(v)
    groups = []
    for roots in candidates.values():
        if len(roots) < 2:
            continue
        # every subtree as one vector (its ranks' profiles in preorder), clustered as ranks are
        flat = np.stack([profiles[_preorder(kids, v)].ravel() for v in roots])
        groups += [[roots[i] for i in g] for g in cluster_ranks(flat, tol) if len(g) > 1]
    return sorted(groups)


def median_interval(values, level=0.95):
    """Distribution-free interval of a median (the sign test's order statistics): (low, high) holding the
    median with at least `level` confidence, or None when there are too few values for that (fewer than 6
    at 95 %)."""
    from math import comb
    x = np.sort(np.asarray(values, float))
    n = len(x)
    best = None
    for k in range(1, n // 2 + 1):           # [x_(k), x_(n-k+1)] misses the median with 2 P(Bin(n, 1/2) < k)
        miss = 2 * sum(comb(n, i) for i in range(k)) / 2 ** n
        if 1 - miss >= level:
            best = k
        else:
            break
    return None if best is None else (float(x[best - 1]), float(x[n - best]))


def overhead(config, span):
    """What tracing costs per call: the median over pairs of adjacent blocks of traced minus untraced wall
    time per iteration (pairs adjacent in time cancel a drift of the machine; the median a descheduled block),
    with its 95 % interval (sign test). `resolved` is True only when the interval lies above 0: a cost.

    The traced and untraced figures are the medians of each kind's blocks (they need not differ by the
    per-call figure, which pairs the blocks); the report prints the per-call figure as a cost only when
    resolved, else the interval it could not tell from 0 (issue 31: a noisy run printed -0.08 µs beside
    64.4 traced vs 63.6 untraced)."""
    traced = config.overhead.get("traced_us_per_iteration") or []
    untraced = config.overhead.get("untraced_us_per_iteration") or []
    if not traced or len(traced) != len(untraced):
        return {}
    t, u = float(np.median(traced)), float(np.median(untraced))
    pairs = np.subtract(traced, untraced)
    d = float(np.median(pairs))
    ci = median_interval(pairs)
    resolved = ci is not None and ci[0] > 0
    return {"traced_us": t, "untraced_us": u, "per_call_us": d, "blocks": len(traced),
            "ci_us": list(ci) if ci else None, "resolved": resolved,
            "share_of_iteration": d / u if u > 0 and resolved else None,
            "share_of_span": d / span if span > 0 and resolved else None}
