#!/bin/sh
# The full penalty report (tables, held-out rows, figures) on the ORFEO bcast/reduce data and on the
# project's own measured examples (examples/*.csv, when present). docs/benchmarks.md records its output.
#
#   sh benchmarks/report_orfeo.sh [OUTDIR]        (default: a new directory under /tmp)
#
# Per data set OUTDIR/NAME/ holds report.md (with figure links), report.json, report.csv and figures/.
# Needs the `figures` and `compare` extras (matplotlib, scikit-learn). ORFEO=... overrides the data path.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ORFEO=${ORFEO:-$ROOT/../shared/datasets/orfeo-epyc-openmpi4}
OUT=${1:-$(mktemp -d /tmp/quadsel-report.XXXXXX)}
HOLDOUT="--holdout msg --holdout comm --holdout random:0.25"

run() {   # run NAME FILE... [-c COLLECTIVE]: the three formats, figures once
    name=$1; shift
    mkdir -p "$OUT/$name"
    echo "== $name: quadsel report $* $HOLDOUT" >&2
    start=$(python3 -c "import time; print(time.time())")
    quadsel report "$@" $HOLDOUT --figures "$OUT/$name/figures" -o "$OUT/$name/report.md"
    end=$(python3 -c "import time; print(time.time())")
    quadsel report "$@" $HOLDOUT --format json -o "$OUT/$name/report.json"
    quadsel report "$@" $HOLDOUT --format csv -o "$OUT/$name/report.csv"
    python3 -c "print(\"   report with figures: %.1f s\" % ($end - $start))" >&2
    printf '## %s\n\n' "$name"
    cat "$OUT/$name/report.md"
    echo
}

if [ -d "$ORFEO" ]; then
    for coll in bcast reduce; do
        run "orfeo-$coll" "$ORFEO"/${coll}_algo*.csv "$ORFEO/${coll}_default.csv"
    done
else
    echo "no ORFEO data at $ORFEO (../shared is absent): skipped" >&2
fi

found=0
for file in "$ROOT"/examples/*.csv; do
    [ -e "$file" ] || continue
    found=1
    stem=$(basename "$file" .csv)
    for coll in allreduce bcast reduce; do      # a collective named in the file name selects it
        case "$stem" in *"$coll"*) run "$stem" "$file" --collective "$coll"; continue 2 ;; esac
    done
    run "$stem" "$file"
done
[ "$found" = 1 ] || echo "no examples/*.csv yet: only the ORFEO data was reported" >&2
echo "output in $OUT" >&2
