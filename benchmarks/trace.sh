#!/bin/sh
# The traces of docs/trace.md: bcast and allreduce on 4 ranks of this machine, two (three) algorithms each,
# and one bcast algorithm under two rank mappings; then the tables and timemaps.
#   sh benchmarks/trace.sh [OUTDIR]      (about a minute; OUTDIR defaults to trace-out)
set -e
out=${1:-trace-out}
mkdir -p "$out"
q="python -m quadsel"
uptime
$q trace --np 4 -c bcast --algorithms 6,3 --msg-sizes 1K,64K --calls 300 -o "$out/bcast.json" --quiet
$q trace --np 4 -c allreduce --algorithms 3,4,1 --msg-sizes 1K,64K --calls 300 -o "$out/allreduce.json" --quiet
$q trace --np 4 -c bcast --algorithms 6 --msg-sizes 64K --calls 300 --map-by core -o "$out/bcast-core.json" --quiet
$q trace --np 4 -c bcast --algorithms 6 --msg-sizes 64K --calls 300 --map-by socket -o "$out/bcast-socket.json" --quiet
uptime
$q breakdown "$out/bcast.json" --format markdown --timemap "$out/bcast-timemap.png" -o "$out/bcast.md"
$q breakdown "$out/allreduce.json" --format markdown --timemap "$out/allreduce-timemap.png" -o "$out/allreduce.md"
$q breakdown "$out/bcast-core.json" "$out/bcast-socket.json" --format markdown \
    --timemap "$out/mapping-timemap.png" -o "$out/mapping.md"
