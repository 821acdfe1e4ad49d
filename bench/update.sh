#!/usr/bin/env bash
# Context-mode batch-update of N rows against direct: true, on the same data; then the context
# update again while another program changes 1% of the rows (bench/outside_writer.py).
# BEFORE=path/to/batchrun adds an older build. Prints hyperfine's medians and the ratios, and
# writes .build-bench/update.json.
#   bench/update.sh [ROWS]        (default 1000000; needs hyperfine and a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
bin=.build/release/batchrun
out=.build-bench
mkdir -p "$out"
python3 bench/make_accounts.py "$rows" "$out/accounts.sqlite"
prepare="cp $out/accounts.sqlite $out/work.sqlite && rm -f $out/work.sqlite-wal $out/work.sqlite-shm"
before=()
[ -n "${BEFORE:-}" ] && before=(-n "context before" "$BEFORE bench/update_context.yaml --quiet"
  -n "contended before" "bench/update_contended.sh $BEFORE $out/work.sqlite $rows $out/contended-before.json")
hyperfine --style basic --warmup 1 --runs "${RUNS:-5}" --prepare "$prepare" \
  --export-json "$out/update-hyperfine.json" \
  -n direct "$bin bench/update_direct.yaml --quiet" \
  -n context "$bin bench/update_context.yaml --quiet" \
  -n contended "bench/update_contended.sh $bin $out/work.sqlite $rows $out/contended.json" \
  "${before[@]}" >/dev/null
python3 - "$rows" "$out/update-hyperfine.json" "$out/update.json" "$out/contended.json" <<'PY'
import json, sys
rows, source, target, contended = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
medians = {r["command"]: r["median"] for r in json.load(open(source))["results"]}
direct = medians["direct"]
conflicts = len(json.load(open(contended))["conflicts"])
summary = {"benchmark": "batch-update", "rows": rows, "median_s": {k: round(v, 3) for k, v in medians.items()},
           "ratio_to_direct": {k: round(v / direct, 2) for k, v in medians.items()},
           "conflicts_in_last_contended_run": conflicts, "targets": {"context": 1.5, "contended": 3.0}}
json.dump(summary, open(target, "w"), indent=2)
print(f"batch-update of {rows:,} rows in batches of 5,000 (median of runs)")
targets = {"context": "at most 1.5x", "contended": f"at most 3x; {conflicts:,} conflicts in the last run"}
for name, seconds in medians.items():
    print(f"  {name:18} {seconds:7.3f} s   {seconds / direct:5.2f}x direct  {targets.get(name, '')}")
PY
