#!/usr/bin/env bash
# Context-mode batch-update of N rows against direct: true, on the same data.
# Prints hyperfine's medians and the ratio, and writes .build-bench/update.json.
#   bench/update.sh [ROWS]        (default 1000000; needs hyperfine and a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
bin=.build/release/batchrun
out=.build-bench
mkdir -p "$out"
python3 bench/make_accounts.py "$rows" "$out/accounts.sqlite"
prepare="cp $out/accounts.sqlite $out/work.sqlite && rm -f $out/work.sqlite-wal $out/work.sqlite-shm"
hyperfine --style basic --warmup 1 --runs "${RUNS:-5}" --prepare "$prepare" \
  --export-json "$out/update-hyperfine.json" \
  -n direct "$bin bench/update_direct.yaml --quiet" \
  -n context "$bin bench/update_context.yaml --quiet" >/dev/null
python3 - "$rows" "$out/update-hyperfine.json" "$out/update.json" <<'PY'
import json, sys
rows, source, target = int(sys.argv[1]), sys.argv[2], sys.argv[3]
results = {r["command"]: r for r in json.load(open(source))["results"]}
direct, context = results["direct"]["median"], results["context"]["median"]
summary = {"benchmark": "batch-update", "rows": rows, "direct_median_s": round(direct, 3),
           "context_median_s": round(context, 3), "ratio": round(context / direct, 2), "target_ratio": 2.0}
json.dump(summary, open(target, "w"), indent=2)
print(f"batch-update of {rows:,} rows (median of {len(results['direct']['times'])} runs)")
print(f"  direct: true     {direct:7.3f} s")
print(f"  context mode     {context:7.3f} s   {context / direct:.2f}x direct (target at most 2x)")
PY
