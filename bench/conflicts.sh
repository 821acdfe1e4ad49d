#!/usr/bin/env bash
# A re-import where every row conflicts: ROWS flight rows (default 200,000) with their keys are
# loaded once, then the same keys again with dep_delay and arr_delay corrected, under
# object-trump, the JSON report (every conflict, with its properties) written. Whole process,
# median of runs; BEFORE=path/to/batchrun adds an older build. Writes .build-bench/conflicts.json.
#   bench/conflicts.sh [ROWS]      (needs hyperfine and a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-200000}
out=.build-bench/conflicts
mkdir -p "$out"
feed=.build-bench/import/flights-1000000.csv
[ -f "$feed" ] || { mkdir -p "$(dirname "$feed")"; python3 bench/import/make_flights.py 1000000 "$feed"; }
head -n $((rows + 1)) "$feed" | awk -F, -v OFS=, 'NR == 1 { print "id", $0; next } { print NR - 1, $0 }' > "$out/first.csv"
# Columns 7 and 10 (after the id) are dep_delay and arr_delay.
awk -F, -v OFS=, 'NR > 1 { if ($7 != "NA") $7 += 1; if ($10 != "NA") $10 -= 1 } { print }' "$out/first.csv" > "$out/second.csv"
rm -f "$out"/base.sqlite*
.build/release/batchrun bench/conflicts/reimport.yaml --select load --store "$out/base.sqlite" --quiet >/dev/null
prepare="cp $out/base.sqlite $out/work.sqlite && rm -f $out/work.sqlite-wal $out/work.sqlite-shm"
before=()
[ -n "${BEFORE:-}" ] && before=(-n "batchrun before" "$BEFORE bench/conflicts/reimport.yaml --select reimport --report $out/before.json --quiet")
hyperfine --style basic --warmup 1 --runs "${RUNS:-5}" --prepare "$prepare" --export-json "$out/hyperfine.json" \
  -n batchrun ".build/release/batchrun bench/conflicts/reimport.yaml --select reimport --report $out/report.json --quiet" \
  "${before[@]}" >/dev/null
python3 - "$rows" "$out" <<'PY'
import json, sys
rows, out = int(sys.argv[1]), sys.argv[2]
report = json.load(open(f"{out}/report.json"))
assert len(report["conflicts"]) == rows, f"{len(report['conflicts'])} conflicts, expected {rows}"
medians = {r["command"]: r["median"] for r in json.load(open(f"{out}/hyperfine.json"))["results"]}
summary = {"benchmark": "re-import, every row a conflict (object-trump)", "rows": rows,
           "median_s": {k: round(v, 3) for k, v in medians.items()},
           "us_per_row": {k: round(v / rows * 1e6, 2) for k, v in medians.items()}, "target_us_per_row": 3}
json.dump(summary, open(".build-bench/conflicts.json", "w"), indent=2)
print(f"re-import of {rows:,} rows, every one a conflict under object-trump, JSON report written (median of runs)")
for name, seconds in medians.items():
    print(f"  {name:22} {seconds:7.3f} s   {seconds / rows * 1e6:5.2f} us per row (target at most 3)")
PY
