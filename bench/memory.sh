#!/usr/bin/env bash
# Peak resident memory of importing 100,000 and 1,000,000 flight rows (GNU time's maximum RSS).
# Writes .build-bench/memory.json. Targets: at most 64 MB for 1,000,000 rows, and at most 1.25x
# the peak for 100,000 (memory does not grow with the feed).
set -euo pipefail
cd "$(dirname "$0")/.."
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
    /usr/bin/time -f "%M" -o "$out/rss.txt" .build/release/batchrun "$1" --quiet >/dev/null
    local kb; kb=$(tail -1 "$out/rss.txt")
    [ "$kb" -gt "$worst" ] && worst=$kb
  done
  echo "$worst"
}
# The job files sit in the output folder, so their relative paths point beside them.
sed -i "s#../../.build-bench/import/##g" "$out/flights-100k.yaml" "$out/flights-1m.yaml"
small=$(peak "$out/flights-100k.yaml")
large=$(peak "$out/flights-1m.yaml")
python3 - "$small" "$large" <<'PY'
import json, sys
small, large = int(sys.argv[1]) / 1024, int(sys.argv[2]) / 1024
json.dump({"benchmark": "import-memory", "peak_rss_mb_100k": round(small, 1), "peak_rss_mb_1m": round(large, 1),
           "ratio": round(large / small, 2), "target_mb": 64, "target_ratio": 1.25},
          open(".build-bench/memory.json", "w"), indent=2)
print("peak resident memory of an import (largest of 3 runs)")
print(f"  100,000 rows     {small:6.1f} MB")
print(f"  1,000,000 rows   {large:6.1f} MB   {large / small:.2f}x (targets: at most 64 MB and 1.25x)")
PY
