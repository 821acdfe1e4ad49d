#!/usr/bin/env bash
# The busy-machine check (issue 51): `make test` RUNS times in a row (default 3) while HOGS
# CPU-bound processes (default 2, one per core here) run beside it, as on a CI machine shared
# with other checks. Stops at the first failure; the hogs are stopped however it ends.
#
#   make test-busy                 (RUNS=3 HOGS=2)
#   RUNS=1 HOGS=4 Tests/busy-machine.sh
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
HOGS=${HOGS:-2}
MAKE=${MAKE:-make}
hogs=()
stop_hogs() { for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null; done; }
trap stop_hogs EXIT
# Each hog also ends by itself once this script is gone (killed with SIGKILL, the trap not run).
for _ in $(seq 1 "$HOGS"); do
  ( while kill -0 $$ 2>/dev/null; do :; done ) &
  hogs+=($!)
done
echo "busy-machine: ${#hogs[@]} CPU-bound processes beside make test, $RUNS runs"
for run in $(seq 1 "$RUNS"); do
  started=$(date +%s)
  if ! $MAKE test; then
    echo "busy-machine: run $run of $RUNS failed after $(( $(date +%s) - started )) s"
    exit 1
  fi
  echo "busy-machine: run $run of $RUNS green in $(( $(date +%s) - started )) s"
done
echo "busy-machine: $RUNS runs green beside $HOGS CPU-bound processes"
