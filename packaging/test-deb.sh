#!/usr/bin/env bash
# `make deb-test`: checks the package `make deb` built, as an operator would meet it.
#  1. at most 25 MB; lintian finds no error (its warnings are printed, docs/operations.md
#     says why each one kept is);
#  2. extracted: the binary is stripped, names this commit, and runs the examples;
#  3. every man page renders without a warning; bash completes a subcommand, an option,
#     a job name and a queue item with the packaged completion script, fish a subcommand and
#     an option, and zsh loads its function;
#  4. the services score under 4 in `systemd-analyze security`;
#  5. installed with dpkg, it adds nothing outside the paths it lists and the system user; the
#     units pass `systemd-analyze verify`; purged, its files are gone.
#
#   packaging/test-deb.sh PACKAGE.deb
set -euo pipefail
package=$(realpath "$1")
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
cleanup() {
    if dpkg -s batchrun >/dev/null 2>&1 && [ -n "${installed_here:-}" ]; then dpkg --purge batchrun >/dev/null 2>&1 || true; fi
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
zsh -f -c "fpath=($root/usr/share/zsh/vendor-completions \$fpath); autoload -U compinit; compinit -u; autoload -U +X _batchrun" \
    || fail "zsh cannot load _batchrun"
pass "fish completes a subcommand and an option; zsh loads _batchrun"

# 4. The units' sandbox (systemd-analyze verify runs on them once installed, in 5; they run
#    under systemd in boot-test.sh).
units="$root/lib/systemd/system"
for unit in batchrun-worker@ batchrun-serve@ batchrun-run@; do
    score=$(systemd-analyze security --offline=true "$units/$unit.service" 2>&1 | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
    awk -v s="$score" 'BEGIN { exit !(s != "" && s < 4) }' || fail "$unit.service exposure $score"
    pass "$unit.service: exposure $score (systemd-analyze security)"
done

# 5. Installed for real, then purged.
snapshot() { find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp -o -path /var/tmp \
    -o -path /var/lib/dpkg -o -path /var/log -o -path /var/cache -o -path /root -o -path /home -o -path /work \) -prune -o -print | LC_ALL=C sort; }
snapshot > "$work/before.txt"
installed_here=1
dpkg -i "$package" > "$work/dpkg.txt" 2>&1 || { cat "$work/dpkg.txt"; fail "dpkg -i"; }
snapshot > "$work/after.txt"
# On a merged /usr, /lib is /usr/lib: compare the paths as the file system has them.
dpkg -L batchrun | xargs -d '\n' readlink -m | LC_ALL=C sort -u > "$work/listed.txt"
LC_ALL=C comm -13 "$work/before.txt" "$work/after.txt" | LC_ALL=C comm -23 - "$work/listed.txt" > "$work/unlisted.txt"
# systemd-sysusers keeps the old account files as NAME- (as useradd does).
grep -v -x -e /etc/passwd- -e /etc/group- -e /etc/shadow- -e /etc/gshadow- "$work/unlisted.txt" > "$work/extra.txt" || true
[ ! -s "$work/extra.txt" ] || { cat "$work/extra.txt"; fail "the install added paths it does not list"; }
if command -v systemd-sysusers >/dev/null; then getent passwd batchrun > /dev/null || fail "no batchrun user"; fi
[ "$(/usr/bin/batchrun --version | head -1)" = "$(echo "$version" | head -1)" ] || fail "the installed batchrun is another version"
man -w batchrun-worker | grep -q '^/usr/share/man/man1/batchrun-worker.1.gz$' || fail "man does not find batchrun-worker"
# verify wants an instance of a template; it also checks ExecStart's binary and the man pages
# Documentation= names, which are now installed.
for unit in batchrun-worker@check.service batchrun-serve@check.service batchrun-run@check.service batchrun-run@check.timer; do
    SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "$unit" > "$work/verify.txt" 2>&1 || { cat "$work/verify.txt"; fail "systemd-analyze verify $unit"; }
    [ ! -s "$work/verify.txt" ] || { cat "$work/verify.txt"; fail "systemd-analyze verify $unit warns"; }
done
pass "systemd-analyze verify: the four units"
dpkg --purge batchrun > /dev/null 2>&1 || fail "dpkg --purge"
installed_here=
while read -r path; do [ -d "$path" ] || [ ! -e "$path" ] || fail "$path is left after the purge"; done < "$work/listed.txt"
pass "dpkg -i added only its listed files (and the batchrun user); dpkg --purge removed them"
