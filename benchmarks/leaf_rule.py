"""Mean penalty of depth-limited trees: leaf rule (majority / penalty) × padding (spread / edge).

usage: python benchmarks/leaf_rule.py   (reads ../shared/datasets when present, and examples/)
"""

from pathlib import Path

from quadsel.decision.builder import build_size_tree
from quadsel.decision.decision_map import build_decision_map
from quadsel.ingest import read_measurements
from quadsel.evaluate.penalty import penalty_grid, summarize

REPO = Path(__file__).resolve().parents[1]
ORFEO = REPO.parent / "shared" / "datasets" / "orfeo-epyc-openmpi4"
SETS = {
    "ORFEO bcast": [ORFEO / f for f in ("bcast_algo1.csv", "bcast_algo2_all.csv", "bcast_algo3.csv", "bcast_algo6.csv")],
    "ORFEO reduce": [ORFEO / f for f in ("reduce_algo1.csv", "reduce_algo4_all.csv", "reduce_algo5.csv", "reduce_algo7.csv")],
    "examples/ompi5-bcast": [REPO / "examples" / "ompi5-bcast.csv"],
    "examples/ompi5-reduce": [REPO / "examples" / "ompi5-reduce.csv"],
    "examples/mpich5-bcast": [REPO / "examples" / "mpich5-bcast.csv"],
}


def main():
    print("mean penalty % at max depth 0 / 1 / 2 / 3 / 4 / 5")
    print("| data | padding | majority (paper) | penalty |")
    print("|---|---|---|---|")
    for name, files in SETS.items():
        if not all(f.exists() for f in files):
            print(f"| {name} | - | (missing) | (missing) |")
            continue
        dmap = build_decision_map(read_measurements([str(f) for f in files]))
        for pad_mode in ("spread", "edge"):
            cells = []
            for rule in ("majority", "penalty"):
                means = [summarize(penalty_grid(dmap, build_size_tree(dmap, max_depth=d, pad_mode=pad_mode,
                                                                              leaf_rule=rule).choice_grid()), dmap).mean
                         for d in range(6)]
                cells.append(" / ".join(f"{m:.2f}" for m in means))
            print(f"| {name} | {pad_mode} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
