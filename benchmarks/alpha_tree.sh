#!/bin/sh
# quadsel's alpha-tree broadcast beside the library's own bcast algorithms on the real MPI of this machine,
# measured twice on one grid: with a barrier before every call and with the paper's ring semi-barrier; then a
# multilevel run on emulated nodes of 2 ranks. Prints the load before each step and the wall times, then
# `python benchmarks/alpha_tree.py OUTDIR` (barrier vs ring, best alpha per size, the trees' leaves).
# (docs/benchmarks.md, *alpha-tree broadcast*; docs/alpha-tree.md)
#
#   sh benchmarks/alpha_tree.sh [OUTDIR]          NP=4 by default
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
OUT=${1:-$(mktemp -d /tmp/quadsel-alpha.XXXXXX)}
NP=${NP:-4}
SIZES=${SIZES:-1,4,16,64,256,1K,4K,16K,64K,256K,1M}
mkdir -p "$OUT"
now() { python3 -c "import time; print(time.time())"; }
step() {   # step NAME ARGS...: one measure, timed, then its default build
    name=$1; shift
    echo "== measure $name: $(uptime)"
    start=$(now)
    python -m quadsel measure --np "$NP" -c bcast --msg-sizes "$SIZES" --segments 0 -o "$OUT/$name.csv" \
        --no-resume --quiet "$@"
    end=$(now)
    python3 -c "print('   wall %.1f s' % ($end - $start))"
    python -m quadsel build "$OUT/$name.csv" -o "$OUT/$name.qt.json"
}
for sync in barrier ring; do
    step "$sync" --comm-sizes "2-$NP" --alpha 0,0.1,0.2,0.3,0.4,0.5 --sync "$sync"
done
step multilevel --comm-sizes "$NP" --algorithms default,1,6 --alpha 0,0.25,0.5 --alpha-depth 2 \
    --alpha-levels blocks:2 --sync ring
python "$ROOT/benchmarks/alpha_tree.py" "$OUT"
echo "output in $OUT" >&2
