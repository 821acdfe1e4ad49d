#!/bin/sh
# fuzz/run.sh TARGET SECONDS [--keep]: runs one libFuzzer target (built by `make fuzz-build`)
# for SECONDS. With --keep, new interesting inputs are added to fuzz/corpus/TARGET (make fuzz);
# without, they go to a temporary folder (make test). A crash, a leak of time (an input over
# 10 s) or of memory (over 1 GB, or one allocation over 256 MB) is saved as
# fuzz/crashes/TARGET-* and the script fails.
set -eu
target=$1 seconds=$2 keep=${3:-}
binary=${FUZZ_BIN:-.build-fuzz/debug/batchrun-fuzz}
mkdir -p "fuzz/corpus/$target" fuzz/crashes
if [ "$keep" = --keep ]; then
  corpora="fuzz/corpus/$target"
else
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  corpora="$scratch fuzz/corpus/$target"
fi
echo "fuzz: $target for ${seconds}s"
# shellcheck disable=SC2086
BATCHRUN_FUZZ_TARGET=$target "$binary" $corpora fuzz/regressions/$target \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=256 \
  -artifact_prefix="fuzz/crashes/$target-" -print_final_stats=1 2>"fuzz/crashes/.$target.log" \
  || { tail -n 40 "fuzz/crashes/.$target.log"; echo "fuzz: $target found a problem (see fuzz/crashes/)"; exit 1; }
grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)' "fuzz/crashes/.$target.log" | sed "s/^/  $target /"
rm -f "fuzz/crashes/.$target.log"
