#!/usr/bin/env bash
# Runs every test of the package, built already (`swift build --build-tests`), in several
# processes at once: the end-to-end tests (batchrunTests) split by suite into TEST_SHARDS
# processes (default 4, as make test), and the other targets in one more. One process runs as many tests at
# once as Swift Testing's pool has threads, one per core, and an end-to-end test holds its
# thread while it waits for the batchrun processes, servers and browsers it started: on 2
# cores one process kept them busy about half the time. Each process's lines go to the
# terminal as they come, prefixed with its name; at the end, the summary of each and every
# failure again. Exit 1 when any test failed.
#
#   Tests/run-tests.sh                 (make test runs it)
#   TEST_SHARDS=1 Tests/run-tests.sh   the end-to-end tests in one process
set -uo pipefail
cd "$(dirname "$0")/.."
SHARDS=${TEST_SHARDS:-4}
SWIFT=${SWIFT:-swift}
LOGS=.build/test-logs
rm -rf "$LOGS"
mkdir -p "$LOGS"

# The test binary itself, not `swift test`: SwiftPM holds a lock on .build for as long as it
# runs, so a second `swift test` waits for the first to end.
TESTS=$($SWIFT build --show-bin-path)/batchrunPackageTests.xctest
if [ ! -x "$TESTS" ]; then
  echo "run-tests.sh: no test build at $TESTS (swift build --build-tests makes it)" >&2
  exit 1
fi

# The tests' temporary files (TMPDIR, which batchrun, its PostgreSQL servers and the browser
# inherit) go on /dev/shm when it is a tmpfs with 8 GB free, or into TEST_TMPDIR when given.
# The tests make and remove hundreds of thousands of files (a PostgreSQL cluster alone is about
# 1,000); on ext4, creating one right after so many were removed scans past them in the inode
# allocator (`find_inode_bit`, `recently_deleted`): on a machine after a day of test runs, a
# fifth of a test run's CPU went there (docs/development.md, "Where make test spends its time").
base=${TEST_TMPDIR:+$(realpath -m "$TEST_TMPDIR")}
if [ -z "$base" ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] \
   && [ "$(df --output=avail -k /dev/shm 2>/dev/null | tail -n 1)" -gt 8000000 ]; then
  base=/dev/shm
fi
if [ -n "$base" ]; then
  TMPDIR=$(mktemp -d "$base/batchrun-tests-XXXXXX") || { echo "run-tests.sh: cannot make a folder in $base" >&2; exit 1; }
  chmod 1777 "$TMPDIR"   # as /tmp: the servers run as `postgres`
  export TMPDIR
  # The servers the tests started stop with them (their watchdogs); stopped here at once, as on
  # tmpfs a removed file's memory is held until the last process that has it open ends.
  trap 'Tests/TestSupport/pg-throwaway.sh stop-all >/dev/null 2>&1; rm -rf "$TMPDIR"' EXIT
fi

# The end-to-end suites, dealt out in name order.
mapfile -t suites < <("$TESTS" --testing-library swift-testing --list-tests 2>/dev/null | sed -nE 's/^batchrunTests\.([A-Za-z0-9_]+)\/.*/\1/p' | sort -u)
if [ ${#suites[@]} -eq 0 ]; then
  echo "run-tests.sh: no end-to-end suites listed (is the test build there? swift build --build-tests)" >&2
  exit 1
fi
declare -a shard
for index in "${!suites[@]}"; do
  n=$((index % SHARDS))
  shard[$n]="${shard[$n]:-}${shard[$n]:+|}${suites[$index]}"
done

pids=()
names=()
run() { # NAME ARGS...: one process of the test binary, its lines prefixed and kept in $LOGS/NAME.log
  local name=$1; shift
  ( "$TESTS" --testing-library swift-testing "$@" 2>&1 | tee "$LOGS/$name.log" | sed -u "s/^/[$name] /" ) &
  pids+=($!)
  names+=("$name")
}
for n in $(seq 0 $((SHARDS - 1))); do
  run "e2e-$((n + 1))" --filter "^batchrunTests\.(${shard[$n]})/"
done
run library --skip '^batchrunTests\.'

failed=0
for index in "${!pids[@]}"; do
  wait "${pids[$index]}" || failed=1
done
echo
echo "== test processes =="
for name in "${names[@]}"; do
  summary=$(grep -E "Test run with [0-9]+ tests" "$LOGS/$name.log" | tail -n 1)
  echo "[$name] ${summary:-no summary: the process ended early, see $LOGS/$name.log}"
  [ -n "$summary" ] || failed=1
done
if [ $failed -ne 0 ]; then
  echo
  echo "== failures (whole logs in $LOGS) =="
  for name in "${names[@]}"; do grep -E "✘|error:|Fatal error|Crash" "$LOGS/$name.log" | sed "s/^/[$name] /"; done
fi
exit $failed
