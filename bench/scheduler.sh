#!/usr/bin/env bash
# Scheduler overhead: 10,000 no-op operations in a layered graph, batchrun's Scheduler against
# Foundation's OperationQueue in the same process. Writes .build-bench/scheduler.json.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .build-bench
.build/release/batchrun-bench-scheduler "${1:-10000}" "${RUNS:-5}" > .build-bench/scheduler.json
python3 - <<'PY'
import json
r = json.load(open(".build-bench/scheduler.json"))
print(f"scheduler overhead, {r['operations']:,} no-op operations in {r['layers']} layers, {r['concurrency']} at once (median of {r['runs']})")
print(f"  batchrun Scheduler  {r['scheduler_median_s'] * 1000:7.1f} ms")
print(f"  OperationQueue      {r['operation_queue_median_s'] * 1000:7.1f} ms   ratio {r['ratio']} (target at most 1)")
PY
