"""The model of each method: a design row x(P, m) such that T(P, m) ≈ x · θ with non-negative parameters θ.

Two forms (docs/methodology.md, *Model-based build*):

* **hockney** — quadsel's Hockney-style form of every algorithm family, T = c + a·L(P, m) + b·B(P, m): L the
  number of sequential message steps, B the bytes on the critical path (FORMS below).
* **paper** — Nuriyev et al. (2022) §4 for the Open MPI broadcast algorithms they model: T = N(P, m)·(α + β·s)
  with N the number of stages the implementation takes and s the segment size (eqs. 9–13), + one exchange
  (α + β·m/2) for split-binary, (P-1)·(α + β·m) for the flat tree (eq. 1). The paper's τ-Lop channel
  parameters (o⁰, o¹, L⁰, L¹), its parallelisation factor γ(P) and channel ratio Q need the rank-to-host
  mapping and point-to-point experiments that a sweep of collective times does not hold; like the paper's
  per-algorithm fit they are absorbed into the per-method α and β. Methods the paper does not model (other
  collectives, other algorithms, MPICH) take the hockney form.
"""

import numpy as np

from ..libraries import ids_of, openmpi

FAMILIES = {
    "linear": ("basic_linear", "linear", "flat", "flat_tree"),
    "pipeline": ("chain", "pipeline", "k_chain", "kchain"),
    "split_binary": ("split_binary_tree", "split_binary"),
    "tree": ("binary_tree", "binary", "in-order_binary", "in_order_binary", "binomial", "knomial", "tree",
             "pipelined_tree", "recursive_doubling", "recursive_multiplying", "recexch", "nonoverlapping"),
    "scatter_allgather": ("scatter_allgather", "scatter_recursive_doubling_allgather", "rabenseifner",
                          "reduce_scatter_gather", "reduce_scatter_allgather", "k_reduce_scatter_allgather"),
    "ring": ("scatter_allgather_ring", "scatter_ring_allgather", "ring", "segmented_ring"),
}
_FAMILY_OF = {name: family for family, names in FAMILIES.items() for name in names}

# Latency term L (number of sequential message steps) and byte term B (bytes on the critical path) of
# each family, with D = ceil(log2 P), s = bytes per segment (m when unsegmented), n = ceil(m / s) segments.
FORMS = {
    "linear": "L = P-1, B = (P-1)·m (the root sends the whole message P-1 times)",
    "pipeline": "L = (P-1) + n - 1, B = L·s (a chain of P-1 hops, n segments pipelined)",
    "tree": "L = D + n - 1, B = L·s (tree of height D, n segments pipelined)",
    "split_binary": "L = D + ceil(n/2), B = (D + ceil(n/2) - 1)·s + m/2 (halves down two subtrees, then exchanged)",
    "scatter_allgather": "L = 2·D, B = 2·m·(P-1)/P (recursive halving then doubling)",
    "ring": "L = D + P - 1, B = 2·m·(P-1)/P (binomial scatter, ring allgather)",
}

# The paper's models of the Open MPI bcast algorithms (by coll/tuned name): N stages of one segment each,
# with H = floor(log2 P), K the chain fan-out (coll/tuned's default 4), n = ceil(m / s).
PAPER_FORMS = {
    "basic_linear": "T = (P-1)·(α + β·m) (eq. 1: P-1 blocking sends of the whole message)",
    "pipeline": "T = (P + n - 2)·(α + β·s) (eq. 10, the paper's chain tree)",
    "chain": "T = (ceil((P-1)/K) + n - 1)·(α + β·s) (eq. 12, the paper's K-chain tree; ceil so that a chain "
             "shorter than K is one stage)",
    "binary_tree": "T = (H + n - 1)·(α + β·s) (eq. 11)",
    "binomial": "T = (H + n - 1)·(α + β·s) (eq. 9)",
    "split_binary_tree": "T = (H + ceil(n/2) - 1)·(α + β·s) + (α + β·m/2) (eq. 13: halves down, then exchanged)",
}
PAPER_COLLECTIVES = ("bcast",)
CHAIN_FANOUT = 4   # coll_tuned_init_chain_fanout's default (libraries/openmpi.py)


def algorithm_name(method, collective):
    """The method's algorithm name, lower case with underscores ("6" -> "binomial" for Open MPI bcast)."""
    return openmpi.algorithm_name(collective, method.algorithm).lower().replace("-", "_")


def model_family(method, collective):
    """(family, name, assumed): the hockney form of a method; unknown names are assumed tree-like."""
    name = algorithm_name(method, collective)
    family = _FAMILY_OF.get(name) or _FAMILY_OF.get(name.replace("_", "-"))
    return (family, name, False) if family else ("tree", name, True)


def paper_models(method, collective, library):
    """Does the paper model this method (an Open MPI bcast algorithm of its §4)?"""
    return (collective in PAPER_COLLECTIVES and ids_of(library).paper and method.algorithm.isdigit()
            and algorithm_name(method, collective) in PAPER_FORMS)


def _segments(msg_sizes, segsize):
    m = np.asarray(msg_sizes, dtype=float).ravel()
    s = np.where((segsize > 0) & (m > segsize), float(segsize), np.maximum(m, 1.0))
    return m, s, np.ceil(np.maximum(m, 1.0) / s)


def hockney_terms(family, comm_sizes, msg_sizes, segsize):
    """Design matrix columns (1, L, B) of one family at the given sizes: T = c + a·L + b·B."""
    p = np.asarray(comm_sizes, dtype=float).ravel()
    m, s, n = _segments(msg_sizes, segsize)
    d = np.ceil(np.log2(np.maximum(p, 1.0)))
    if family == "linear":
        latency, volume = p - 1, (p - 1) * m
    elif family == "pipeline":
        latency = (p - 1) + n - 1
        volume = latency * np.minimum(s, m)
    elif family == "tree":
        latency = d + n - 1
        volume = latency * np.minimum(s, m)
    elif family == "split_binary":
        half = np.ceil(n / 2)
        latency = d + half
        volume = (d + half - 1) * np.minimum(s, m) + m / 2
    elif family == "scatter_allgather":
        latency, volume = 2 * d, 2 * m * (p - 1) / p
    elif family == "ring":
        latency, volume = d + p - 1, 2 * m * (p - 1) / p
    else:
        raise ValueError(f"unknown model family {family!r}")
    return np.column_stack([np.ones_like(p), latency, volume])


def paper_terms(name, comm_sizes, msg_sizes, segsize):
    """Design matrix columns (stages, bytes over the stages) of the paper's model: T = α·col0 + β·col1."""
    p = np.maximum(np.asarray(comm_sizes, dtype=float).ravel(), 2.0)
    m, s, n = _segments(msg_sizes, segsize)
    h = np.floor(np.log2(p))
    if name == "basic_linear":
        return np.column_stack([p - 1, (p - 1) * m])
    if name == "split_binary_tree":
        if segsize <= 0:                          # unsegmented: each half is one segment
            s, n = np.maximum(m / 2, 1.0), np.full_like(m, 2.0)
        stages = h + np.ceil(n / 2) - 1
        return np.column_stack([stages + 1, stages * s + m / 2])
    if name == "pipeline":
        stages = p + n - 2
    elif name == "chain":
        stages = np.ceil((p - 1) / CHAIN_FANOUT) + n - 1
    elif name in ("binary_tree", "binomial"):
        stages = h + n - 1
    else:
        raise ValueError(f"the paper has no model of {name!r}")
    return np.column_stack([stages, stages * s])
