#!/bin/bash
# Issue 41: `quadsel tune --np 2 -c bcast,reduce --no-figures` three times on an idle machine, then three times under
# a load of 4 (four busy loops of this script's own, ended by their PIDs after each run); prints each run's wall
# time, last line, verdicts and the interference verify sampled (docs/tune.md, "Idle and loaded").
# usage (from the repository root): benchmarks/tune_load.sh
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for mode in idle idle idle loaded loaded loaded; do
  pids=""
  if [ "$mode" = loaded ]; then
    for _ in 1 2 3 4; do (while :; do :; done) & pids="$pids $!"; done
  fi
  out=$(mktemp -d)/deploy
  start=$(date +%s)
  python -m quadsel tune --np 2 -c bcast,reduce --no-figures -o "$out" > "$out.stdout" 2> "$out.stderr"
  rc=$?
  end=$(date +%s)
  # shellcheck disable=SC2086
  [ -n "$pids" ] && kill $pids && wait $pids 2>/dev/null
  echo "== $mode: exit $rc, $((end - start)) s"
  tail -1 "$out.stdout"
  python - "$out" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/tune.json"))["steps"]["summary"]
for c, j in sorted(s["per_collective"].items()):
    print(f"  {c}: {j['why']}")
for label, i in (s.get("interference") or {}).items():
    if i:
        print(f"  interference ({label} verify): {i['extra_mean']} other runnable tasks on average, at most "
              f"{i['extra_max']}, {i['samples']} samples, beside {i['own_ranks']} ranks")
PY
done
