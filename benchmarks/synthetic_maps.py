"""Synthetic cost cubes for benchmarks/selection_cart.py: maps of no real machine, with a library default.

layout_cube   benchmarks/layouts.py's bcast model at one ppn (16 node counts x 20 message sizes), the forced set
              without the algorithms only the library runs (knomial, the hierarchical smp ones); the library
              default is a fixed switch rule over every algorithm, like a library's built-in decision: faster than
              every forced method where its own algorithms win, slower where its switch points are off.
piecewise_cube  a random guillotine partition of a 10 x 24 grid into regions, each won by one of 6 methods or the
              default, the others 2-60 % behind there; 2 % log-normal noise, standard errors recorded.
timed_map     a decision map of any size for the timing benchmarks (selection_outside --reach-time, flat_maps):
              12 methods and a library default on a smooth base, regions of winners or one winner everywhere.
"""

import math

import numpy as np

import layouts

FORCED = [m for m in layouts.METHODS if m[0] != "knomial4" and not m[0].startswith("smp_")]


def _library_rule(nodes, ppn, m):
    """The default's own choice: a fixed decision over every algorithm of the model."""
    if m <= 4096:
        return ("knomial4", 0) if nodes * ppn >= 16 else ("binomial", 0)
    if m <= 262144:
        return ("smp_scatter_allgather", 0) if nodes > 1 else ("scatter_rd_allgather", 0)
    return ("pipeline", 65536)


def layout_cube(Cube, ppn, seed=3):
    rng = np.random.default_rng(seed)
    msgs = np.array(layouts.MESSAGES[::2], dtype=np.int64)
    comm = np.array([n * ppn for n in layouts.NODES], dtype=np.int64)
    noise = lambda: math.exp(rng.normal(0.0, 0.02))  # noqa: E731
    cost = np.array([[[(layouts.model(a, s, n, ppn, m) + 0.3) * noise() for a, s in FORCED]
                      for m in msgs.tolist()] for n in layouts.NODES])
    default = np.array([[(layouts.model(*_library_rule(n, ppn, m), n, ppn, m) + 0.5) * noise()
                         for m in msgs.tolist()] for n in layouts.NODES])
    return Cube(f"synthetic-layout-ppn{ppn}", "bcast", "synthetic", comm, msgs, list(FORCED), cost, 0.02 * cost, default,
                0.02 * default)


def _regions(rng, box, depth):
    """A random guillotine partition of box (r0, r1, c0, c1) into rectangles."""
    r0, r1, c0, c1 = box
    if depth == 0 or (r1 - r0 < 2 and c1 - c0 < 2) or rng.random() < 0.15:
        return [box]
    if (rng.random() < 0.5 and r1 - r0 >= 2) or c1 - c0 < 2:
        cut = int(rng.integers(r0 + 1, r1))
        return _regions(rng, (r0, cut, c0, c1), depth - 1) + _regions(rng, (cut, r1, c0, c1), depth - 1)
    cut = int(rng.integers(c0 + 1, c1))
    return _regions(rng, (r0, r1, c0, cut), depth - 1) + _regions(rng, (r0, r1, cut, c1), depth - 1)


def piecewise_cube(Cube, seed, k=6):
    rng = np.random.default_rng(100 + seed)
    comm = 2 ** np.arange(1, 11, dtype=np.int64)
    msgs = 2 ** np.arange(0, 24, dtype=np.int64)
    base = (2.0 + 0.5 * np.log2(comm)[:, None]) + msgs[None, :] * np.log2(comm)[:, None] / 5000.0
    gap = np.zeros((len(comm), len(msgs), k + 1))
    for r0, r1, c0, c1 in _regions(rng, (0, len(comm), 0, len(msgs)), 4):
        region = rng.uniform(0.02, 0.6, k + 1)
        region[int(rng.integers(0, k + 1))] = 0.0
        gap[r0:r1, c0:c1] = region
    times = base[:, :, None] * (1 + gap) * np.exp(rng.normal(0.0, 0.02, gap.shape))
    methods = [(f"p{i + 1}", 0) for i in range(k)]
    return Cube(f"synthetic-piecewise-{seed}", "bcast", "synthetic", comm, msgs, methods, times[:, :, :k],
                0.02 * times[:, :, :k], times[:, :, k], 0.02 * times[:, :, k])


def timed_map(comm, msg, rng, flat=False):
    """A bcast decision map over `comm` x `msg` (int64 arrays), 12 methods p0..p11 and a library default, 2 %
    log-normal noise with its standard error: a random guillotine partition into regions, each won by one of the
    13 with the others 2-60 % behind there, or (`flat`) p0 the fastest everywhere and each other a fixed 2-60 %
    behind it."""
    from quadsel.decision.decision_map import Method, map_from_cube
    base = (2.0 + 0.5 * np.log2(comm)[:, None]) + msg[None, :] * np.log2(comm)[:, None] / 5000.0
    if flat:
        gap = np.broadcast_to(rng.uniform(0.02, 0.6, 13), (comm.size, msg.size, 13)).copy()
        gap[:, :, 0] = 0.0
    else:
        gap = np.zeros((comm.size, msg.size, 13))
        for r0, r1, c0, c1 in _regions(rng, (0, comm.size, 0, msg.size), 5):
            region = rng.uniform(0.02, 0.6, 13)
            region[int(rng.integers(0, 13))] = 0.0
            gap[r0:r1, c0:c1] = region
    times = base[:, :, None] * (1 + gap) * np.exp(rng.normal(0.0, 0.02, gap.shape))
    return map_from_cube("bcast", comm, msg, [Method(f"p{i}", 0) for i in range(12)], times[:, :, :12],
                         0.02 * times[:, :, :12], times[:, :, 12], (), "synthetic", 0.02 * times[:, :, 12])
