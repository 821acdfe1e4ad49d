#!/usr/bin/env bash
# `make deb-test`: checks the package `make deb` built, as an operator would meet it.
#  1. at most 25 MB; lintian finds no error (its warnings are printed, docs/operations.md
#     says why each one kept is);
#  2. extracted: the binary is stripped, names this commit, and runs the examples;
#  3. every man page renders without a warning; bash completes a subcommand, an option,
#     a job name and a queue item with the packaged completion script, fish a subcommand and
#     an option, and zsh loads its function;
#  4. the services score under 4 in `systemd-analyze security`;
# Installing it for real, and its units under systemd, are boot-test.sh's: in a container, so
# this machine is left as it was.
#
#   packaging/test-deb.sh PACKAGE.deb
set -euo pipefail
package=$(realpath "$1")
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
cleanup() {
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

# 1. Size and lintian.
bytes=$(stat -c %s "$package")
[ "$bytes" -le 25000000 ] || fail "the package is $bytes bytes, more than 25 MB"
pass "package $(basename "$package"): $((bytes / 1000)) kB"
lintian --fail-on error --tag-display-limit 0 "$package" > "$work/lintian.txt" 2>&1 || { cat "$work/lintian.txt"; fail "lintian found errors"; }
grep -v "running with root privileges" "$work/lintian.txt" | sed "s/^/  lintian: /" || true
pass "lintian: no error ($(grep -c '^W:' "$work/lintian.txt" || true) warnings)"

# 2. The extracted binary.
root="$work/root"
dpkg-deb -x "$package" "$root"
batchrun="$root/usr/bin/batchrun"
readelf -S "$batchrun" | grep -q '\.symtab' && fail "the packaged binary has a symbol table (not stripped)"
version=$("$batchrun" --version)
echo "$version" | sed 's/^/  /'
[ "$(echo "$version" | sed -n 's/^commit //p')" = "$(git -C "$repo" rev-parse HEAD)" ] || fail "--version names another commit"
echo "$version" | grep -q '^traits NetworkFeeds PostgreSQL$' || fail "--version does not name the default traits"
[ "$(dpkg-deb -f "$package" Version)" = "$(echo "$version" | sed -n '1s/^batchrun //p')" ] || fail "the package's version is not the binary's"
cp -r "$repo/jobs" "$repo/examples" "$work/"
(cd "$work" && "$batchrun" jobs/nightly.yaml > "$work/run.txt") || { cat "$work/run.txt"; fail "the packaged binary could not run jobs/nightly.yaml"; }
sessions=$(sqlite3 "$work/var/nightly.sqlite" "select count(*) from Session")
[ "$sessions" -gt 0 ] || fail "the run loaded no sessions"
pass "the packaged binary ran jobs/nightly.yaml: $sessions sessions"

# 3. Man pages and completion.
pages=("$root"/usr/share/man/man1/*.1.gz)
[ "${#pages[@]}" -ge 12 ] || fail "only ${#pages[@]} man pages"
for page in "${pages[@]}"; do
    warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
    [ -z "$warnings" ] || fail "$(basename "$page"): $warnings"
    LC_ALL=C.UTF-8 MANWIDTH=80 man -E UTF-8 -l "$page" 2>/dev/null | grep -q '^SYNOPSIS' || fail "$(basename "$page") has no SYNOPSIS"
done
LC_ALL=C.UTF-8 man -l "$root/usr/share/man/man1/batchrun-worker.1.gz" 2>/dev/null | grep -q -- '--max-item-time' \
    || fail "batchrun-worker(1) does not document --max-item-time"
pass "${#pages[@]} man pages render without warnings"
"$batchrun" submit "$work/queue" "$repo/examples/queue/stats.yaml" > /dev/null
item=$(ls "$work/queue/pending")
complete_words() {
    PATH="$root/usr/bin:$PATH" bash --norc -c '
        source "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
        function=$(complete -p batchrun | sed -n "s/.*-F \([^ ]*\).*/\1/p")
        "$function" batchrun "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf "%s\n" "${COMPREPLY[@]}"' complete "$root/usr/share/bash-completion/completions/batchrun" "$@"
}
[ "$(complete_words batchrun wor)" = worker ] || fail "bash does not complete 'batchrun wor' to worker"
complete_words batchrun worker --max-i | grep -qx -- --max-item-time || fail "bash does not complete --max-i"
(cd "$work" && complete_words batchrun run jobs/nightly.yaml --select import_) | grep -qx import_sessions \
    || fail "bash does not complete a job name after --select"
[ "$(complete_words batchrun cancel "$work/queue" "")" = "$item" ] || fail "bash does not complete the queue's item"
pass "bash completes a subcommand, an option, a job name and a queue item"
# fish completes the same way (its `complete -C` cannot run the custom completions, which ask
# the interactive command line); zsh's function loads through compinit from where zsh looks.
fish_complete() {
    PATH="$root/usr/bin:$PATH" fish --no-config -c "source $root/usr/share/fish/vendor_completions.d/batchrun.fish; complete -C'$1'" | cut -f1
}
[ "$(fish_complete 'batchrun wor')" = worker ] || fail "fish does not complete 'batchrun wor' to worker"
fish_complete 'batchrun worker --max-i' | grep -qx -- --max-item-time || fail "fish does not complete --max-i"
zsh -f -c "fpath=($root/usr/share/zsh/vendor-completions \$fpath); autoload -U compinit; compinit -u -D; autoload -U +X _batchrun" \
    || fail "zsh cannot load _batchrun"
pass "fish completes a subcommand and an option; zsh loads _batchrun"

# 4. The units' sandbox (they are verified and run under systemd in boot-test.sh).
units="$root/lib/systemd/system"
for unit in batchrun-worker@ batchrun-serve@ batchrun-run@; do
    score=$(systemd-analyze security --offline=true "$units/$unit.service" 2>&1 | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
    awk -v s="$score" 'BEGIN { exit !(s != "" && s < 4) }' || fail "$unit.service exposure $score"
    pass "$unit.service: exposure $score (systemd-analyze security)"
done
