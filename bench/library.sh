#!/usr/bin/env bash
# The library's figures: object inserts per second (Context.insert + saveAndReset, 200,000 rows
# of a 5-column entity; Context.insert + plain save(), 500,000 rows, and the memory that grew;
# typed records, Context.insert(_ record:) + plain save(), the same 500,000 rows, and their CPU time),
# and the worst main-actor stall while a main context holding 60,000 objects merges a
# background update of all of them in 10,000-row batches, and while it fetches them (and
# 200,000 objects) asynchronously, and while its live results of those 60,000 rows follow the
# update (main.results(for:), issue 34). Writes .build-bench/library.json.
# With valgrind (make bench-deps installs it): the instructions one inserted row costs, objects
# and typed records (save() every 10,000; the difference of 100,000- and 50,000-row runs, so
# start-up cancels), a figure the machine's pace does not move. Writes .build-bench/library-instructions.json.
# Then the same built with the Macros trait (.build-macros; SKIP_MACROS=1 skips it): typed-record
# inserts and stalls beside the default build's, and @Model inserts. Writes .build-bench/library-macros.json.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .build-bench
.build/release/batchrun-bench-library "${1:-200000}" "${RUNS:-5}" > .build-bench/library.json
python3 - <<'PY'
import json
r = json.load(open(".build-bench/library.json"))
print(f"library (median of {r['runs']} runs)")
print(f"  object inserts, 5 columns      {r['object_inserts_per_s_median']:>9,} rows/s (target at least {r['object_inserts_target']:,})")
print(f"  object inserts, plain save()   {r['plain_save_inserts_per_s_median']:>9,} rows/s of {r['plain_save_rows']:,}, save() every 10,000 (target at least {r['plain_save_target']:,}); resident memory +{r['plain_save_rss_growth_mb_median']} MB from the first save to the last")
print(f"  typed-record inserts, save()  {r['record_inserts_per_s_median']:>9,} rows/s of {r['plain_save_rows']:,}, save() every 10,000, {r['record_inserts_cpu_s_median']} s CPU (target at least {r['record_inserts_target']:,})")
print(f"  main-actor stall, merging      {r['merge_stall_ms_median']:9.1f} ms (worst {r['merge_stall_ms_worst']} ms; target at most {r['stall_target_ms']} ms)")
print(f"  main-actor stall, live results {r['live_results_stall_ms_median']:9.1f} ms of 60,000 rows updated in 10,000-row saves (worst {r['live_results_stall_ms_worst']} ms; target at most {r['stall_target_ms']} ms)")
print(f"  main-actor stall, async fetch  {r['async_fetch_stall_ms_median']:9.1f} ms of 60,000 objects")
print(f"  main-actor stall, async fetch  {r['large_fetch_stall_ms_median']:9.1f} ms of {r['large_fetch_rows']:,} objects (worst {r['large_fetch_stall_ms_worst']} ms; target at most {r['stall_target_ms']} ms)")
print(f"  dropping those objects at once {r['large_fetch_release_ms_median']:9.1f} ms on the main actor (the caller's act, not the fetch's)")
PY

# Issue 49: the same benchmark built with the Macros trait (and no other: SQLite alone, as a
# library user who wants models builds it), beside the default build's figures, and @Model
# inserts of the same rows. Its own scratch path, so the default build is not rebuilt.
if [ -z "${SKIP_MACROS:-}" ]; then
    # shellcheck disable=SC2086 # RELEASE_FLAGS (make bench gives the Makefile's) is a list of flags
    ${SWIFT:-swift} build ${RELEASE_FLAGS:--c release} --product batchrun-bench-library --traits Macros --scratch-path .build-macros > .build-bench/macros-build.log 2>&1 \
        || { tail -20 .build-bench/macros-build.log; exit 1; }
    .build-macros/release/batchrun-bench-library "${1:-200000}" "${RUNS:-5}" > .build-bench/library-macros.json
    python3 - <<'PY'
import json
d, m = json.load(open(".build-bench/library.json")), json.load(open(".build-bench/library-macros.json"))
print("library with the Macros trait (medians; the default build's beside them)")
print(f"  typed-record inserts, save()  {m['record_inserts_per_s_median']:>9,} rows/s (default build {d['record_inserts_per_s_median']:,}; target at least {m['record_inserts_target']:,})")
print(f"  @Model inserts, save()        {m['model_inserts_per_s_median']:>9,} rows/s of {m['plain_save_rows']:,}, save() every 10,000")
for key, what in (("merge_stall_ms_median", "merging"), ("live_results_stall_ms_median", "live results"), ("large_fetch_stall_ms_median", "async fetch")):
    print(f"  main-actor stall, {what:<13}{m[key]:9.1f} ms (default build {d[key]} ms; target at most {m['stall_target_ms']} ms)")
PY
fi

if command -v valgrind > /dev/null && [ -z "${SKIP_INSTRUCTIONS:-}" ]; then
    # valgrind cannot read this build's debug information: count on a copy without it.
    strip --strip-debug -o .build-bench/batchrun-bench-library.nodebug .build/release/batchrun-bench-library
    python3 - <<'PY'
import json, re, subprocess
def instructions(kind, rows):
    out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                          ".build-bench/batchrun-bench-library.nodebug", "0", "1"],
                         env={"BENCH_ONLY_RECORDS": kind, "PLAIN_SAVE_ROWS": str(rows), "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, check=True).stderr
    return int(re.search(r"I\s+refs:\s+([\d,]+)", out).group(1).replace(",", ""))
figures = {kind: round((instructions(kind, 100_000) - instructions(kind, 50_000)) / 50_000) for kind in ("objects", "records")}
json.dump({"instructions_per_row": figures}, open(".build-bench/library-instructions.json", "w"))
print(f"  instructions per inserted row  objects {figures['objects']:,}, typed records {figures['records']:,} (cachegrind; save() every 10,000)")
PY
fi
