#!/usr/bin/env bash
# Imports a 1,000,000-row flight-delays feed four ways, each into a fresh WAL database with the
# same schema: batchrun, the sqlite3 shell's .import, Python's sqlite3 executemany, and a raw C
# loop over libsqlite3; then times a grouped aggregate fetch against the sqlite3 shell running
# the same SELECT. Prints medians and ratios; writes .build-bench/import.json.
#   bench/import.sh [ROWS]      (needs hyperfine, gcc, a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
out=.build-bench/import
mkdir -p "$out"
if [ ! -f "$out/flights.csv" ] || [ "$(($(wc -l < "$out/flights.csv") - 1))" != "$rows" ]; then
  echo "generating $rows flight rows"
  python3 bench/import/make_flights.py "$rows" "$out/flights.csv"
fi
cc -O2 -o "$out/import_flights" bench/import/import_flights.c -lsqlite3
runs=${RUNS:-5}
clean() { echo "rm -f $out/$1.sqlite $out/$1.sqlite-wal $out/$1.sqlite-shm"; }
hyperfine --style basic --warmup 1 --runs "$runs" --export-json "$out/import-hyperfine.json" \
  --prepare "$(clean batchrun)" -n batchrun ".build/release/batchrun bench/import/flights.yaml --quiet" \
  --prepare "$(clean shell)" -n "sqlite3 .import" "sqlite3 $out/shell.sqlite < bench/import/shell_import.sql" \
  --prepare "$(clean python)" -n "python executemany" "python3 bench/import/import_python.py $out/flights.csv $out/python.sqlite bench/import/schema.sql" \
  --prepare "$(clean c)" -n "C loop" "$out/import_flights $out/flights.csv $out/c.sqlite bench/import/schema.sql" >/dev/null
# The aggregate reads what batchrun imported; the shell runs the same SELECT on the same file.
.build/release/batchrun bench/import/flights.yaml --quiet --store "$out/batchrun.sqlite" >/dev/null 2>&1 || true
select="SELECT carrier, origin, count(*) AS flights, avg(dep_delay) AS dep_delay, avg(arr_delay) AS arr_delay, sum(distance) AS distance FROM flights GROUP BY carrier, origin ORDER BY carrier, origin"
hyperfine --style basic --warmup 1 --runs "$runs" --export-json "$out/aggregate-hyperfine.json" \
  -n "batchrun fetch" ".build/release/batchrun bench/import/aggregate.yaml --quiet" \
  -n "sqlite3 SELECT" "sqlite3 -csv -header $out/batchrun.sqlite '$select' > $out/delays-shell.csv" >/dev/null
python3 - "$rows" "$out" <<'PY'
import json, sys
rows, out = int(sys.argv[1]), sys.argv[2]
def medians(name):
    return {r["command"]: r["median"] for r in json.load(open(f"{out}/{name}-hyperfine.json"))["results"]}
imports, aggregate = medians("import"), medians("aggregate")
ours = imports["batchrun"]
summary = {
    "rows": rows,
    "import_median_s": {k: round(v, 3) for k, v in imports.items()},
    "import_ratio_to_batchrun": {k: round(v / ours, 2) for k, v in imports.items()},
    "aggregate_median_s": {k: round(v, 3) for k, v in aggregate.items()},
    "aggregate_ratio": round(aggregate["batchrun fetch"] / aggregate["sqlite3 SELECT"], 2),
    "targets": {"batchrun / C loop": "<= 1.25", "sqlite3 .import / batchrun": ">= 2", "python / batchrun": ">= 2",
                "batchrun fetch / sqlite3 SELECT": "<= 1.1"},
}
json.dump(summary, open(".build-bench/import.json", "w"), indent=2)
print(f"import of {rows:,} flight rows (median of runs)")
print(f"  {'tool':22} {'time':>9} {'vs batchrun':>12}")
for name, seconds in sorted(imports.items(), key=lambda item: item[1]):
    print(f"  {name:22} {seconds:8.3f}s {seconds / ours:11.2f}x")
print(f"  batchrun is {imports['C loop'] / ours:.2f}x the C loop's speed (time ratio {ours / imports['C loop']:.2f}, target at most 1.25)")
print("grouped aggregate fetch")
for name, seconds in aggregate.items():
    print(f"  {name:22} {seconds:8.3f}s")
print(f"  ratio {summary['aggregate_ratio']} (target at most 1.1)")
PY
