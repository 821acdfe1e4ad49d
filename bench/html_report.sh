#!/usr/bin/env bash
# The HTML report of a 50-job run: its size, and how long headless Chromium takes to load and
# lay it out, and to take a screenshot of it. Needs `chromium`
# (Debian package). Writes .build-bench/html_report.json.
#   bench/html_report.sh              (uses .build/release/batchrun, or BATCHRUN=path)
set -euo pipefail
cd "$(dirname "$0")/.."
BATCHRUN=${BATCHRUN:-.build/release/batchrun}
RUNS=${RUNS:-5}
work=.build-bench/html_report
rm -rf "$work" && mkdir -p "$work"

# 50 jobs in 10 waves of 5 (each job needs the one 5 before it); each inserts 300 rows whose
# last 100 keys the next job inserts too, under object-trump: constraint conflicts, resolved.
python3 - "$work" <<'PY'
import sys
work = sys.argv[1]
lines = ["version: 1", "store: store.sqlite", "entities:",
         "  Sale: { columns: { id: integer primary key, region: text not null, amount: real } }", "jobs:"]
for i in range(50):
    with open(f"{work}/feed_{i:02}.csv", "w") as feed:
        feed.write("id,region,amount\n")
        for key in range(i * 200, i * 200 + 300):
            feed.write(f"{key},region_{i % 7},{(key * 37 % 1000) / 10}\n")
    name = f"import_regional_sales_partition_{i:02}" if i % 2 else f"sales_{i:02}"
    needs = ""
    if i >= 5:
        j = i - 5
        needs = f"needs: {f'import_regional_sales_partition_{j:02}' if j % 2 else f'sales_{j:02}'}, "
    lines.append(f"  {name}: {{ {needs}merge_policy: object-trump, batch_size: 100, "
                 f"steps: [{{ insert: {{ entity: Sale, from: feed_{i:02}.csv }} }}] }}")
open(f"{work}/fifty.yaml", "w").write("\n".join(lines) + "\n")
PY

"$BATCHRUN" "$work/fifty.yaml" --jobs 2 --quiet --report "$work/fifty.json" --html "$work/fifty.html" > /dev/null

# Load and lay out the report in Chromium RUNS times within one browser (so its start-up is
# left out): a harness page loads it into a frame, forces layout, and notes the milliseconds.
cat > "$work/harness.html" <<'HTML'
<!DOCTYPE html><html><head><meta charset="utf-8"/><title>harness</title></head><body><script>
const times = [];
function next(runs) {
  const frame = document.createElement("iframe");
  frame.width = 1280; frame.height = 900;
  const start = performance.now();
  frame.onload = () => {
    frame.contentDocument.body.getBoundingClientRect();   // style and layout done
    times.push(performance.now() - start);
    frame.remove();
    if (runs > 1) next(runs - 1);
    else document.body.setAttribute("data-ms", times.map(t => t.toFixed(1)).join(" "));
  };
  frame.src = location.hash.slice(1) + "?" + runs;
  document.body.appendChild(frame);
}
next(RUNS);
</script></body></html>
HTML
sed -i "s/next(RUNS)/next($RUNS)/" "$work/harness.html"
times=$(chromium --headless --no-sandbox --disable-gpu --allow-file-access-from-files --virtual-time-budget=60000 \
    --dump-dom "file://$PWD/$work/harness.html#fifty.html" 2>/dev/null | sed -n 's/.*data-ms="\([^"]*\)".*/\1/p')
[ -n "$times" ] || { echo "the harness page did not report its times" >&2; exit 1; }
first=${times%% *}
median=$(python3 -c "import statistics,sys; print(round(statistics.median(map(float, sys.argv[1].split()[1:] or sys.argv[1].split())), 1))" "$times")
shot_start=$(date +%s%N)
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,4000 \
    --screenshot="$work/fifty.png" "file://$PWD/$work/fifty.html" > /dev/null 2>&1
shot=$(( ($(date +%s%N) - shot_start) / 1000000 ))
bytes=$(stat -c %s "$work/fifty.html")
conflicts=$(python3 -c "import json; print(len(json.load(open('$work/fifty.json'))['conflicts']))")

cat > .build-bench/html_report.json <<JSON
{ "jobs": 50, "conflicts": $conflicts, "html_bytes": $bytes, "runs": $RUNS,
  "load_and_layout_ms": [${times// /, }], "first_load_ms": $first, "later_loads_median_ms": $median, "screenshot_ms": $shot }
JSON
echo "HTML report of a 50-job run ($conflicts conflicts; the page lists the first 100)"
echo "  size                  $(( bytes / 1024 )) KB (target under 300 KB)"
echo "  load and lay out      $first ms in Chromium the first time, then $median ms (median; all: $times; target under 1 s)"
echo "  headless screenshot   $shot ms, browser start-up included"
