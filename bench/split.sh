#!/usr/bin/env bash
# Side by side with an older build, in instructions where valgrind runs (cachegrind: a count the
# machine's pace does not move), else in CPU time: this tree's release build against BASE's (default 9ad3cbb, the last commit before
# BatchRunKit was split into modules), each part run once per build on the same data:
#   import          ROWS flight rows into a fresh SQLite store (bench/import/flights.yaml)
#   context update  a batch-update of ROWS accounts in the job's private context (bench/update_context.yaml)
#   re-import       ROWS flight rows again, every one a conflict under object-trump, JSON report written
#   typed records   Context.insert(_ record:) of ROWS rows, save() every 10,000 (batchrun-bench-library)
#   PostgreSQL      the import into a throwaway PostgreSQL server (the client's instructions only)
# Prints each part's cost per row for both builds and the change; writes .build-bench/split.json.
#   bench/split.sh [BASE] [ROWS]    (default ROWS 200,000; RUNS=10; needs postgresql, about 15 minutes
#                                    and, the first time, a release build of BASE in .build-baseline/)
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-9ad3cbb}
rows=${2:-200000}
out=.build-bench/split
mkdir -p "$out"
baseline=.build-baseline/$base
if [ ! -x "$baseline/build/release/batchrun" ] || [ ! -x "$baseline/build/release/batchrun-bench-library" ]; then
  echo "building $base (release) in $baseline"
  rm -rf "$baseline/src" && mkdir -p "$baseline/src"
  git archive "$base" | tar -x -C "$baseline/src"
  (cd "$baseline/src" && swift build -c release --scratch-path "$PWD/../build" --product batchrun \
    && swift build -c release --scratch-path "$PWD/../build" --product batchrun-bench-library)
fi
swift build -c release --product batchrun >/dev/null
swift build -c release --product batchrun-bench-library >/dev/null
# valgrind cannot read these builds' debug information: it counts on copies without it, with
# bench/split/sigsuspend_copy.c loaded (valgrind 3.19 otherwise dies in libdispatch's signal thread).
cc -shared -fPIC -O2 -o "$out/sigsuspend_copy.so" bench/split/sigsuspend_copy.c
for build in now before; do
  dir=$([ $build = now ] && echo .build/release || echo "$baseline/build/release")
  strip --strip-debug -o "$out/batchrun-$build" "$dir/batchrun"
  strip --strip-debug -o "$out/library-$build" "$dir/batchrun-bench-library"
done

feed=.build-bench/import/flights-$rows.csv
[ -f "$feed" ] || { mkdir -p .build-bench/import; python3 bench/import/make_flights.py "$rows" "$feed"; }
ln -sf "flights-$rows.csv" .build-bench/import/flights.csv
mkdir -p .build-bench/conflicts
awk -F, -v OFS=, 'NR == 1 { print "id", $0; next } { print NR - 1, $0 }' "$feed" > .build-bench/conflicts/first.csv
awk -F, -v OFS=, 'NR > 1 { if ($7 != "NA") $7 += 1; if ($10 != "NA") $10 -= 1 } { print }' .build-bench/conflicts/first.csv \
  > .build-bench/conflicts/second.csv
python3 bench/make_accounts.py "$rows" .build-bench/accounts.sqlite >/dev/null

server=$(Tests/TestSupport/pg-throwaway.sh start --owner $$ | tail -n 1)
trap 'Tests/TestSupport/pg-throwaway.sh stop "$server" >/dev/null 2>&1 || true' EXIT
psql=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)/psql

# Each part runs under both builds in turn, RUNS times (default 10): its instructions (valgrind's
# cachegrind, `I refs`) when valgrind can run these binaries, else its CPU time (user + system, of
# the process and its children), the fastest of the runs.
python3 - "$rows" "$base" "$out" "$server" "$psql" "${RUNS:-10}" <<'PY'
import json, os, re, resource, statistics, subprocess, sys
rows, base, out, server, psql, runs = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
url = server.rsplit("/", 1)[0] + "/split"

def sh(command):
    subprocess.run(command, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

VALGRIND_ENV = {"LD_PRELOAD": os.path.abspath(f"{out}/sigsuspend_copy.so")}

def valgrind_works():
    probe = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                            f"{out}/library-now", "0", "1"], env={**os.environ, **VALGRIND_ENV, "BENCH_ONLY_RECORDS": "records", "PLAIN_SAVE_ROWS": "1000"},
                           capture_output=True, text=True)
    return probe.returncode == 0 and "I   refs" in probe.stderr

COUNTER = "instructions" if valgrind_works() else "cpu"

def measure(command, env=None):
    env = {**os.environ, **(env or {})}
    if COUNTER == "instructions":
        run = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"] + command,
                             env={**env, **VALGRIND_ENV}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
        return int(re.search(r"I\s+refs:\s+([\d,]+)", run.stderr).group(1).replace(",", ""))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

def parts(build):
    bin, library = f"{out}/batchrun-{build}", f"{out}/library-{build}"
    def imported():
        sh("rm -f .build-bench/import/batchrun.sqlite*")
        return measure([bin, "bench/import/flights.yaml", "--quiet"])
    def updated():
        sh("cp .build-bench/accounts.sqlite .build-bench/work.sqlite && rm -f .build-bench/work.sqlite-wal .build-bench/work.sqlite-shm")
        return measure([bin, "bench/update_context.yaml", "--quiet"])
    def reimported():
        sh(f"rm -f .build-bench/conflicts/work.sqlite* && {bin} bench/conflicts/reimport.yaml --select load --quiet")
        return measure([bin, "bench/conflicts/reimport.yaml", "--select", "reimport", "--report", f"{out}/report-{build}.json", "--quiet"])
    def records():   # the rows' own cost: a run of ROWS less a run of ROWS / 2, per row of the difference
        large = measure([library, "0", "1"], {"BENCH_ONLY_RECORDS": "records", "PLAIN_SAVE_ROWS": str(rows)})
        small = measure([library, "0", "1"], {"BENCH_ONLY_RECORDS": "records", "PLAIN_SAVE_ROWS": str(rows // 2)})
        return (large - small) * 2
    def postgres():
        sh(f'{psql} "{server}" -X -q -c "DROP DATABASE IF EXISTS split" -c "CREATE DATABASE split"')
        return measure([bin, "bench/import/flights.yaml", "--quiet", "--store", url])
    return {"import": imported, "update": updated, "reimport": reimported, "records": records, "postgres": postgres}

names = {"import": "import", "update": "context update", "reimport": "conflict-heavy re-import",
         "records": "typed-record inserts", "postgres": "PostgreSQL import (client)"}
samples = {part: {"before": [], "now": []} for part in names}
for run in range(runs if COUNTER == "cpu" else 1):
    for build in ("before", "now") if run % 2 == 0 else ("now", "before"):
        for part, measured in parts(build).items():
            samples[part][build].append(measured())
unit = "instructions per row" if COUNTER == "instructions" else "CPU microseconds per row"
scale = 1 if COUNTER == "instructions" else 1e6
# CPU time on a shared machine only grows with what else runs: the fastest run is the cost, the
# median shows the spread.
print(f"side by side with {base} ({rows:,} rows; {unit}, " + ("cachegrind" if COUNTER == "instructions"
      else f"the fastest and the median of {runs} runs each, alternated") + ")")
summary = {"base": base, "rows": rows, "counter": COUNTER, "per_row": {}}
for part, name in names.items():
    before, now = (min(samples[part][build]) * scale / rows for build in ("before", "now"))
    change = (now - before) / before * 100
    middle = {build: statistics.median(samples[part][build]) * scale / rows for build in ("before", "now")}
    summary["per_row"][part] = {"before": round(before, 3), "now": round(now, 3), "change_percent": round(change, 2),
                                "median_before": round(middle["before"], 3), "median_now": round(middle["now"], 3),
                                "samples": samples[part]}
    spread = "" if COUNTER == "instructions" else f"   median {middle['before']:,.2f} -> {middle['now']:,.2f}"
    print(f"  {name:28} {before:>10,.2f}  {now:>10,.2f}  {change:+6.2f}%  (at most +3%){spread}")
json.dump(summary, open(".build-bench/split.json", "w"), indent=2)
PY
