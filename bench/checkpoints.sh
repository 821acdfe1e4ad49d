#!/usr/bin/env bash
# What checkpoints cost (issue 9): the 1,000,000-row flights import and the 1,000,000-row
# context batch-update, each run with its run state recorded (a checkpoint in every batch's
# transaction) and without, through the library. Target: at most 3% each. Then the resume of
# an import killed at 90% (bench/resume.py). Writes .build-bench/checkpoints-*.json.
#   bench/checkpoints.sh        (after bench/import.sh 1000000 and bench/update.sh; a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build-bench
runs=${RUNS:-5}
.build/release/batchrun-bench-checkpoints bench/import/flights.yaml "$runs" > "$out/checkpoints-import.json"
.build/release/batchrun-bench-checkpoints bench/update_context.yaml "$runs" "$out/accounts.sqlite" > "$out/checkpoints-update.json"
python3 - <<'PY'
import json
print("checkpoints (median of runs; target: at most 3% each)")
for name, label in (("import", "import of 1,000,000 rows"), ("update", "context batch-update of 1,000,000 rows")):
    r = json.load(open(f".build-bench/checkpoints-{name}.json"))
    print(f"  {label:40} {r['with_checkpoints_s']:7.3f} s with, {r['without_checkpoints_s']:7.3f} s without: {r['cost_percent']:+5.1f}%")
PY
python3 bench/resume.py "$runs"
