#!/usr/bin/env bash
# Peak resident memory (GNU time's maximum RSS) of importing 100,000 and 1,000,000 flight rows,
# of a batch-update plus a delete over 1,500,000 and 6,000,000 rows (bench/update_memory.yaml), and of
# the same over the scattered half of 1,500,000 and 6,000,000 rows (bench/update_scattered.yaml:
# `value > 50`, batches of 10,000). BATCHRUN=path/to/batchrun measures another build (default
# .build/release/batchrun). Writes .build-bench/memory.json. Targets: at most 64 MB, and the larger at most 1.25x the
# smaller (memory does not grow with the work).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BATCHRUN:-.build/release/batchrun}
out=.build-bench/import
mkdir -p "$out"
[ -f "$out/flights-1000000.csv" ] || python3 bench/import/make_flights.py 1000000 "$out/flights-1000000.csv"
ln -sf flights-1000000.csv "$out/flights.csv"
head -100001 "$out/flights.csv" > "$out/flights-100k.csv"
sed "s#flights.csv#flights-100k.csv#; s#batchrun.sqlite#memory.sqlite#" bench/import/flights.yaml > "$out/flights-100k.yaml"
sed "s#batchrun.sqlite#memory.sqlite#" bench/import/flights.yaml > "$out/flights-1m.yaml"
peak() {   # the largest of three runs, in KB
  local worst=0
  for _ in 1 2 3; do
    rm -f "$out"/memory.sqlite*
    /usr/bin/time -f "%M" -o "$out/rss.txt" "$bin" "$1" --quiet >/dev/null
    local kb; kb=$(tail -1 "$out/rss.txt")
    [ "$kb" -gt "$worst" ] && worst=$kb
  done
  echo "$worst"
}
# The job files sit in the output folder, so their relative paths point beside them.
sed -i "s#../../.build-bench/import/##g" "$out/flights-100k.yaml" "$out/flights-1m.yaml"
small=$(peak "$out/flights-100k.yaml")
large=$(peak "$out/flights-1m.yaml")
# The batch-update and delete: a fresh copy of the accounts store for each run.
[ -f .build-bench/accounts-1500k.sqlite ] || python3 bench/make_accounts.py 1500000 .build-bench/accounts-1500k.sqlite
[ -f .build-bench/accounts-6m.sqlite ] || python3 bench/make_accounts.py 6000000 .build-bench/accounts-6m.sqlite
peak_update() {   # the largest of two runs, in KB: STORE JOBFILE COPY
  local worst=0
  for _ in 1 2; do
    rm -f "$3"*
    cp "$1" "$3"
    /usr/bin/time -f "%M" -o "$out/rss.txt" "$bin" "$2" --quiet >/dev/null
    local kb; kb=$(tail -1 "$out/rss.txt")
    [ "$kb" -gt "$worst" ] && worst=$kb
  done
  echo "$worst"
}
update_small=$(peak_update .build-bench/accounts-1500k.sqlite bench/update_memory.yaml .build-bench/memory-update.sqlite)
update_large=$(peak_update .build-bench/accounts-6m.sqlite bench/update_memory.yaml .build-bench/memory-update.sqlite)
rm -f .build-bench/memory-update.sqlite*
# The scattered batch-update and delete.
[ -f .build-bench/readings-1500k.sqlite ] || python3 bench/make_readings.py 1500000 .build-bench/readings-1500k.sqlite
[ -f .build-bench/readings-6m.sqlite ] || python3 bench/make_readings.py 6000000 .build-bench/readings-6m.sqlite
scattered_small=$(peak_update .build-bench/readings-1500k.sqlite bench/update_scattered.yaml .build-bench/memory-scattered.sqlite)
scattered_large=$(peak_update .build-bench/readings-6m.sqlite bench/update_scattered.yaml .build-bench/memory-scattered.sqlite)
rm -f .build-bench/memory-scattered.sqlite*
python3 - "$small" "$large" "$update_small" "$update_large" "$scattered_small" "$scattered_large" <<'PY'
import json, sys
small, large, usmall, ularge, ssmall, slarge = (int(v) / 1024 for v in sys.argv[1:7])
json.dump({"benchmark": "memory", "import_peak_rss_mb_100k": round(small, 1), "import_peak_rss_mb_1m": round(large, 1),
           "import_ratio": round(large / small, 2), "update_delete_peak_rss_mb_1500k": round(usmall, 1),
           "update_delete_peak_rss_mb_6m": round(ularge, 1), "update_delete_ratio": round(ularge / usmall, 2),
           "scattered_update_delete_peak_rss_mb_1500k": round(ssmall, 1),
           "scattered_update_delete_peak_rss_mb_6m": round(slarge, 1), "scattered_update_delete_ratio": round(slarge / ssmall, 2),
           "target_mb": 64, "target_ratio": 1.25},
          open(".build-bench/memory.json", "w"), indent=2)
print("peak resident memory (largest of the runs)")
print(f"  import 100,000 rows                    {small:6.1f} MB")
print(f"  import 1,000,000 rows                  {large:6.1f} MB   {large / small:.2f}x (targets: at most 64 MB and 1.25x)")
print(f"  batch-update + delete, 1,500,000 rows  {usmall:6.1f} MB")
print(f"  batch-update + delete, 6,000,000 rows  {ularge:6.1f} MB   {ularge / usmall:.2f}x (targets: at most 64 MB and 1.25x)")
print(f"  scattered half, 1,500,000 rows          {ssmall:6.1f} MB")
print(f"  scattered half, 6,000,000 rows          {slarge:6.1f} MB   {slarge / ssmall:.2f}x (targets: at most 64 MB and 1.25x)")
PY
