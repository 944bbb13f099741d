"""The default build's time on a map that one method wins nearly everywhere, against a map of regions.

usage: python benchmarks/flat_maps.py [--sizes 25,50,100,200,400,800] [--msgs 40]

Two seeded synthetic sweeps per size, C communicator sizes (2, 3, ...) x M message sizes (1 B, 2 B, ...) x 12
methods and a library default, 2 % log-normal noise with its standard error recorded:
  flat     one method is the fastest everywhere by the model; each other one (and the default) a fixed 2-60 %
           behind it. The noise alone makes another method win at a few points: no split of the map gains on
           its own (a plateau): the build's worst case while the look-ahead (decision/lookahead.py) started from
           every split of such a block, four-way ones included (since 2026-11-28: from its two-way splits only);
  regions  a random guillotine partition into regions, each won by one of the 13 (selection_outside --reach-time's
           sweeps): the common case.
Prints, per size, the default build's wall time (the folds on this machine's cores, as `quadsel build`) and its
leaf count, for both maps.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import synthetic_maps  # noqa: E402

from quadsel.decision.builder import DEFAULT_BUILD, build_size_tree  # noqa: E402

SETTINGS = dict(DEFAULT_BUILD, keep_default="auto", outside="auto")


def sweep(n_comm, n_msg, flat, seed=0):
    return synthetic_maps.timed_map(np.arange(2, n_comm + 2, dtype=np.int64), 2 ** np.arange(0, n_msg, dtype=np.int64),
                                    np.random.default_rng(seed), flat)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="25,50,100,200,400,800", help="communicator sizes of each sweep")
    parser.add_argument("--msgs", type=int, default=40, help="message sizes of every sweep (at most 60)")
    args = parser.parse_args()
    print("| points (C x M) | flat: build (s) | flat: leaves | regions: build (s) | regions: leaves |\n"
          "|---|---:|---:|---:|---:|")
    for n_comm in map(int, args.sizes.split(",")):
        row = []
        for flat in (True, False):
            dmap = sweep(n_comm, args.msgs, flat)
            start = time.perf_counter()
            fn = build_size_tree(dmap, **SETTINGS)
            row += [f"{time.perf_counter() - start:.2f}", str(fn.stats()["leaves"])]
        print(f"| {n_comm * args.msgs:,} ({n_comm} x {args.msgs}) | {' | '.join(row)} |", flush=True)


if __name__ == "__main__":
    main()
