#!/bin/sh
# Adaptive vs full `quadsel measure` on the real MPI of this machine, then `quadsel verify` of both trees
# (docs/benchmarks.md, *Adaptive measurement: a real run*). Prints the load before each step, the wall
# times, and `python benchmarks/adaptive.py --real OUTDIR` (benchmarking times, shares, penalties).
#
#   sh benchmarks/adaptive_real.sh [OUTDIR]          NP=4 COLL=bcast by default
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
OUT=${1:-$(mktemp -d /tmp/quadsel-adaptive.XXXXXX)}
NP=${NP:-4}
COLL=${COLL:-bcast}
mkdir -p "$OUT"
now() { python3 -c "import time; print(time.time())"; }
for kind in full adaptive; do
    flag=""; [ "$kind" = adaptive ] && flag="--adaptive"
    echo "== measure $kind: $(uptime)"
    start=$(now)
    python -m quadsel measure --np "$NP" -c "$COLL" --comm-sizes "2-$NP" --msg-sizes 1-1M:pow2 $flag \
        -o "$OUT/$kind.csv" --no-resume --quiet
    end=$(now)
    python3 -c "print('   wall %.1f s' % ($end - $start))"
    python -m quadsel build "$OUT/$kind.csv" -o "$OUT/$kind.qt.json"
done
for kind in full adaptive; do
    echo "== verify $kind (best arm from full.csv): $(uptime)"
    python -m quadsel verify "$OUT/$kind.qt.json" --np "$NP" --measurements "$OUT/full.csv" -o "$OUT/verify-$kind.md"
    tail -n 2 "$OUT/verify-$kind.md"
done
python "$ROOT/benchmarks/adaptive.py" --real "$OUT"
echo "output in $OUT" >&2
