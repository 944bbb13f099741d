#!/bin/sh
# The traces of docs/trace.md: bcast and allreduce on 4 ranks of this machine, two (three) algorithms each
# interleaved in one run; one bcast algorithm under two rank mappings (--map-by core / socket) on 2 and on 4
# ranks, launched twice in swapped order (core, socket, socket, core) to show how much two launches differ;
# then the tables (Markdown) and timemaps.
#   sh benchmarks/trace.sh [OUTDIR]      (about 4 minutes on the loaded 2-core VM; OUTDIR defaults to trace-out)
set -e
out=${1:-trace-out}
mkdir -p "$out"
q="python -m quadsel"
uptime
$q trace --np 4 -c bcast --algorithms 6,3 --msg-sizes 1K,64K --calls 300 -o "$out/bcast.json" --quiet
$q trace --np 4 -c allreduce --algorithms 3,4,1 --msg-sizes 1K,64K --calls 300 -o "$out/allreduce.json" --quiet
uptime
for np in 2 4; do
  for m in core socket; do
    $q trace --np $np -c bcast --algorithms 6 --msg-sizes 64K --calls 300 --map-by $m -o "$out/map$np-$m-1.json" --quiet
  done
  for m in socket core; do
    $q trace --np $np -c bcast --algorithms 6 --msg-sizes 64K --calls 300 --map-by $m -o "$out/map$np-$m-2.json" --quiet
  done
done
uptime
$q breakdown "$out/bcast.json" --format markdown --timemap "$out/bcast-timemap.png" -o "$out/bcast.md"
$q breakdown "$out/allreduce.json" --format markdown --timemap "$out/allreduce-timemap.png" -o "$out/allreduce.md"
for np in 2 4; do
  $q breakdown "$out/map$np-core-1.json" "$out/map$np-socket-1.json" "$out/map$np-socket-2.json" "$out/map$np-core-2.json" \
      --format markdown --timemap "$out/map$np-timemap.png" -o "$out/map$np.md"
done
