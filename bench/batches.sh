#!/usr/bin/env bash
# Many batches in one process (issue 50: a run died of a stack overflow after 13,760 committed
# batches, a closure kept in a Mutex growing a chain of thunks once per batch). An insert of a
# CSV feed in batches of BATCH_SIZE rows (default 1) that commits SMALL and then LARGE batches
# (default 10,000 and 100,000), on SQLite and on PostgreSQL (a throwaway local server this script
# starts and stops, as bench/postgres.py does), each run timed by GNU time (`%e %M`, and `%U %S`
# for batchrun's own CPU): the time per batch (median of RUNS, default 3, in µs; also the insert
# step's own run_s from the report, which leaves out the process's start, and batchrun's CPU a
# batch, which leaves out the server's) and the peak resident memory (the largest of the runs),
# with the ratio LARGE/SMALL of each. Target: flat, the ratios of the time a batch (wall and
# step) and of the peak memory at most 1.1x; the CPU's ratio is printed beside them. BATCHRUN=path
# measures another build (default .build/release/batchrun). Writes .build-bench/batches.json.
#   bench/batches.sh [SMALL] [LARGE]      (needs GNU time, PostgreSQL's server, a release build)
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
bin=$(realpath "${BATCHRUN:-.build/release/batchrun}")
small=${1:-10000}
large=${2:-100000}
size=${BATCH_SIZE:-1}
runs=${RUNS:-3}
out=.build-bench/batches
mkdir -p "$out"
# The feeds: id,v for LARGE * BATCH_SIZE rows, and its first SMALL * BATCH_SIZE rows.
python3 - "$out" "$small" "$large" "$size" <<'PY'
import sys
out, small, large, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for batches in (small, large):
    path = f"{out}/feed-{batches * size}.csv"
    with open(path, "w") as f:
        f.write("id,v\n")
        f.writelines(f"{i},{i * 7 % 1000}\n" for i in range(1, batches * size + 1))
PY
job() {   # the job file for BATCHES batches: job BATCHES STORE
  cat <<EOF
version: 1
store: $2
entities:
  Item: { columns: { id: integer primary key, v: integer not null } }
jobs:
  insert:
    steps:
      - insert: { entity: Item, from: feed-$(( $1 * size )).csv, batch_size: $size }
EOF
}
# A throwaway PostgreSQL server, stopped when the script ends (its watchdog stops it too).
server=$(bash Tests/TestSupport/pg-throwaway.sh start --owner $$ | tail -1)
trap 'bash Tests/TestSupport/pg-throwaway.sh stop "$server" >/dev/null 2>&1 || true' EXIT
psql=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)/psql
pg() { PGOPTIONS="-c client_min_messages=warning" "$psql" "$1" -X -q -t -A -v ON_ERROR_STOP=1 -c "$2"; }
url=${server%/*}/batches_bench
# One run: fresh store, GNU time's "%e %M %U %S", the insert step's run_s and the batches committed.
measure() {   # measure BACKEND BATCHES RUN: prints "wall_s peak_kb cpu_s step_s committed"
  local backend=$1 batches=$2 run=$3 store
  if [ "$backend" = sqlite ]; then
    rm -f "$out"/batches.sqlite*
    store=batches.sqlite
  else
    pg "${server}" "DROP DATABASE IF EXISTS batches_bench" >/dev/null
    pg "${server}" "CREATE DATABASE batches_bench" >/dev/null
    store="{ postgres: \"$url\" }"
  fi
  job "$batches" "$store" > "$out/batches-$batches.yaml"
  rm -f "$out/report.json"
  /usr/bin/time -f "%e %M %U %S" -o "$out/time.txt" "$bin" "$out/batches-$batches.yaml" --quiet --report "$out/report.json" >/dev/null
  local rows
  if [ "$backend" = sqlite ]; then rows=$(sqlite3 "$out/batches.sqlite" "SELECT count(*) FROM Item")
  else rows=$(pg "$url" "SELECT count(*) FROM item"); fi
  [ "$rows" = $(( batches * size )) ] || { echo "$backend, $batches batches (run $run): $rows rows, not $(( batches * size ))" >&2; exit 1; }
  read -r wall kb user system < <(tail -1 "$out/time.txt")
  python3 - "$out/report.json" "$wall" "$kb" "$user" "$system" <<'PY'
import json, sys
step = json.load(open(sys.argv[1]))["jobs"][0]["steps"][0]
print(sys.argv[2], sys.argv[3], round(float(sys.argv[4]) + float(sys.argv[5]), 2), step["run_s"], step["batches"]["committed"])
PY
}
: > "$out/runs.txt"
for backend in sqlite postgresql; do
  for run in $(seq "$runs"); do   # alternating, so a slower minute touches both sizes
    for batches in "$small" "$large"; do
      figures=$(measure "$backend" "$batches" "$run")
      echo "$backend $batches $figures" >> "$out/runs.txt"
    done
  done
done
python3 - "$out/runs.txt" "$small" "$large" "$size" "$runs" <<'PY'
import json, statistics, sys
lines, small, large, size, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
runs_by = {}
for line in open(lines):
    backend, batches, wall, kb, cpu, step, committed = line.split()
    assert int(committed) == int(batches), f"{backend}: {committed} batches committed, not {batches}"
    runs_by.setdefault((backend, int(batches)), []).append((float(wall), int(kb), float(step), float(cpu)))
summary = {"benchmark": "batches", "batch_size": size, "runs": runs, "batches": [small, large], "target_ratio": 1.1, "backends": {}}
print(f"an insert in batches of {size} row(s): {small:,} and {large:,} batches in one process "
      f"(time: median of {runs}; memory: largest of the runs)")
print(f"  {'':10} {'':9} {'µs/batch':>9} {'step µs/batch':>14} {'peak RSS':>10} {'CPU µs/batch':>13}")
met_all = True
for backend in ("sqlite", "postgresql"):
    figures = {}
    for batches in (small, large):
        measured = runs_by[(backend, batches)]
        wall = statistics.median(m[0] for m in measured)
        step = statistics.median(m[2] for m in measured)
        peak = max(m[1] for m in measured) / 1024
        cpu = statistics.median(m[3] for m in measured)
        figures[batches] = {"wall_s": round(wall, 3), "us_per_batch": round(wall / batches * 1e6, 1),
                            "step_s": round(step, 3), "step_us_per_batch": round(step / batches * 1e6, 1),
                            "peak_rss_mb": round(peak, 1), "cpu_s": round(cpu, 2), "cpu_us_per_batch": round(cpu / batches * 1e6, 1)}
    ratios = {key: round(figures[large][key] / figures[small][key], 2)
              for key in ("us_per_batch", "step_us_per_batch", "peak_rss_mb", "cpu_us_per_batch")}
    met = all(ratios[key] <= 1.1 for key in ("us_per_batch", "step_us_per_batch", "peak_rss_mb"))
    met_all = met_all and met
    summary["backends"][backend] = {"small": figures[small], "large": figures[large], "ratio": ratios, "target_met": met}
    name = "SQLite" if backend == "sqlite" else "PostgreSQL"
    for batches in (small, large):
        f = figures[batches]
        print(f"  {name:10} {batches:>9,} {f['us_per_batch']:9.1f} {f['step_us_per_batch']:14.1f} {f['peak_rss_mb']:7.1f} MB"
              f" {f['cpu_us_per_batch']:13.1f}")
    print(f"  {name:10} {'ratio':>9} {ratios['us_per_batch']:8.2f}x {ratios['step_us_per_batch']:13.2f}x {ratios['peak_rss_mb']:9.2f}x"
          f" {ratios['cpu_us_per_batch']:12.2f}x   target at most 1.1x (time and memory): {'met' if met else 'NOT met'}")
summary["target_met"] = met_all
json.dump(summary, open(".build-bench/batches.json", "w"), indent=2)
PY
