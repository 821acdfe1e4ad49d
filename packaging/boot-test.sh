#!/usr/bin/env bash
# `make deb-test`, second half: the package installed for real and its units run under
# systemd as init. A container (systemd-nspawn, its own network) boots this machine's own
# system from an overlay, in a mount namespace of this script's own, so nothing it does
# reaches the host. Inside it, as an operator would:
#  1. dpkg -i adds nothing outside the paths the package lists (and the batchrun user), and
#     systemd-analyze verify passes on the four units;
#  2. a worker instance with the example settings (NAME replaced, nothing else) is started
#     with systemctl and takes a 3,000,000-row item; `systemctl stop` puts the item back to
#     pending with the unit's result success; started again, it finishes the item, every row once;
#     an upgrade restarts it; a worker with bad settings (exit 2) is not restarted;
#  3. batchrun-serve@ serves the queue's page; batchrun-run@ runs a job file, its timer is set;
#  4. dpkg --purge stops what runs, removes the files and `systemctl enable`'s links.
#
#   packaging/boot-test.sh PACKAGE.deb
set -euo pipefail
if [ -z "${BATCHRUN_BOOT_TEST_PRIVATE:-}" ]; then
    # The overlay's mount dies with this namespace, however the script ends.
    exec env BATCHRUN_BOOT_TEST_PRIVATE=1 unshare --mount --propagation private "$0" "$@"
fi
package=$(realpath "$1")
work=$(mktemp -d)
cleanup() { umount "$work/root" 2>/dev/null && rm -rf --one-file-system "$work"; }
trap cleanup EXIT
mkdir -p "$work/upper" "$work/overlay-work" "$work/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$work/upper,workdir=$work/overlay-work" "$work/root"
root="$work/root"
install -d "$root/srv/test"
cp "$package" "$root/srv/test/batchrun.deb"

cat > "$root/srv/test/inside.sh" <<'EOF'
#!/bin/bash
# Inside the container, as root, once it has booted; boot-test.sh reads the `ok:`/`FAIL:` lines.
exec > /srv/test/log.txt 2>&1
fail() {
    echo "FAIL: $*"; journalctl -u 'batchrun-*' --no-pager -o cat | tail -20
    tail -n 20 /var/lib/batchrun/t/queue/*/*.log 2>/dev/null; systemctl poweroff; exit 1
}
snapshot() { find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp -o -path /var/tmp \
    -o -path /var/lib/dpkg -o -path /var/log -o -path /var/cache -o -path /srv/test -o -path /root \) -prune -o -print | LC_ALL=C sort; }

# 1. Installed.
snapshot > /srv/test/before.txt
dpkg -i /srv/test/batchrun.deb > /srv/test/dpkg.txt 2>&1 || { cat /srv/test/dpkg.txt; fail "dpkg -i"; }
snapshot > /srv/test/after.txt
# On a merged /usr, /lib is /usr/lib: compare the paths as the file system has them.
dpkg -L batchrun | xargs -d '\n' readlink -m | LC_ALL=C sort -u > /srv/test/listed.txt
LC_ALL=C comm -13 /srv/test/before.txt /srv/test/after.txt | LC_ALL=C comm -23 - /srv/test/listed.txt \
    | grep -v -x -e /etc/passwd- -e /etc/group- -e /etc/shadow- -e /etc/gshadow- > /srv/test/extra.txt   # sysusers' backups
[ ! -s /srv/test/extra.txt ] || { cat /srv/test/extra.txt; fail "the install added paths it does not list"; }
getent passwd batchrun > /dev/null || fail "no batchrun user"
man -w batchrun-worker | grep -qx /usr/share/man/man1/batchrun-worker.1.gz || fail "man does not find batchrun-worker"
for unit in batchrun-worker@t.service batchrun-serve@t.service batchrun-run@t.service batchrun-run@t.timer; do
    SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "$unit" > /srv/test/verify.txt 2>&1 || { cat /srv/test/verify.txt; fail "verify $unit"; }
    [ ! -s /srv/test/verify.txt ] || { cat /srv/test/verify.txt; fail "systemd-analyze verify $unit warns"; }
done
echo "ok: dpkg -i added only its listed files and the batchrun user; systemd-analyze verify passed on the four units"

# 2. A worker instance from the example settings, as they are.
install -d -m 750 -g batchrun /etc/batchrun
sed 's|/NAME/|/t/|g' /usr/share/doc/batchrun/examples/worker-NAME.env > /etc/batchrun/worker-t.env
systemctl enable --now batchrun-worker@t > /dev/null 2>&1 || fail "systemctl enable --now batchrun-worker@t"
for _ in $(seq 1 100); do [ -d /var/lib/batchrun/t/queue/pending ] && break; sleep 0.1; done
as_batchrun() { runuser -u batchrun -- "$@"; }
as_batchrun awk 'BEGIN { print "id,n"; for (i = 1; i <= 3000000; i++) print i "," i % 97 }' > /var/lib/batchrun/t/data/big.csv
chown batchrun:batchrun /var/lib/batchrun/t/data/big.csv
cat > /var/lib/batchrun/t/slow.yaml <<'YAML'
version: 1
store: ../data/slow.sqlite
entities:
  Number:
    columns:
      id: integer primary key
      n: integer
jobs:
  load:
    batch_size: 500
    steps:
      - insert: { entity: Number, from: ../data/big.csv }
YAML
as_batchrun batchrun submit /var/lib/batchrun/t/queue /var/lib/batchrun/t/slow.yaml > /dev/null || fail "submit"
item=$(ls /var/lib/batchrun/t/queue/pending /var/lib/batchrun/t/queue/running | grep '\.yaml$')
store=/var/lib/batchrun/t/data/slow.sqlite
# -readonly, and only once it exists: never make the file the worker is about to create.
rows() { [ -f $store ] && sqlite3 -readonly $store "select count(*) from Number" 2>/dev/null || echo 0; }
for _ in $(seq 1 600); do [ "$(rows)" -gt 0 ] && break; sleep 0.1; done
[ "$(rows)" -gt 0 ] || fail "the worker loaded no row"
[ "$(ls /var/lib/batchrun/t/queue/running | grep '\.yaml$')" = "$item" ] || fail "the item is not running"
echo "ok: systemctl enable --now: the worker ($(systemctl show batchrun-worker@t -p User --value), sandboxed) took $item"
systemctl stop batchrun-worker@t || fail "systemctl stop"
loaded=$(rows)
[ "$loaded" -lt 3000000 ] || fail "the item ended before the stop"
[ "$(ls /var/lib/batchrun/t/queue/pending)" = "$item" ] || fail "the item is not back in pending"
[ -z "$(ls /var/lib/batchrun/t/queue/running | grep '\.yaml$')" ] || fail "the item is still in running/"
[ "$(systemctl show batchrun-worker@t -p Result --value)" = success ] || fail "the unit did not stop cleanly"
journalctl -u batchrun-worker@t --no-pager -o cat | grep -q '"event":"item_put_back"' || fail "the journal has no item_put_back"
echo "ok: systemctl stop after $loaded rows: $item back in pending, the unit's result success, item_put_back in the journal"
systemctl start batchrun-worker@t || fail "systemctl start again"
for _ in $(seq 1 1200); do [ -n "$(ls /var/lib/batchrun/t/queue/done | grep '\.yaml$')" ] && break; sleep 0.1; done
[ "$(ls /var/lib/batchrun/t/queue/done | grep '\.yaml$')" = "$item" ] || fail "the restarted worker did not finish the item"
[ "$(rows)" = 3000000 ] || fail "after the restart the table has $(rows) rows, not 3000000"
echo "ok: started again, the worker resumed $item: 3000000 rows, each once; $(systemd-analyze security batchrun-worker@t --no-pager | tail -1)"

# An upgrade (the same package again: postinst's configure with the old version) restarts the
# running worker onto the new binary.
before=$(systemctl show batchrun-worker@t -p MainPID --value)
dpkg -i /srv/test/batchrun.deb > /srv/test/upgrade.txt 2>&1 || { cat /srv/test/upgrade.txt; fail "dpkg -i over itself"; }
after=$(systemctl show batchrun-worker@t -p MainPID --value)
[ "$(systemctl is-active batchrun-worker@t)" = active ] && [ "$after" != "$before" ] && [ "$after" != 0 ] \
    || fail "the upgrade did not restart the worker (process $before, then $after)"
echo "ok: an upgrade restarted the running worker (process $before, then $after)"
# Bad settings (exit 2) are not retried every 5 s: the unit stays failed.
printf 'BATCHRUN_QUEUE=/var/lib/batchrun/bad/queue\nBATCHRUN_OPTIONS=--no-such-option\n' > /etc/batchrun/worker-bad.env
systemctl start batchrun-worker@bad || true
sleep 7
[ "$(systemctl show batchrun-worker@bad -p NRestarts --value)" = 0 ] && [ "$(systemctl is-active batchrun-worker@bad)" = failed ] \
    || fail "a worker with bad settings was restarted ($(systemctl show batchrun-worker@bad -p NRestarts --value) times)"
echo "ok: a worker that exits 2 on bad settings is not restarted: failed, 0 restarts after 7 s"
systemctl reset-failed batchrun-worker@bad

# 3. The live page's unit, and the timed run's.
sed -e 's|/NAME/|/t/|g' -e 's|127.0.0.1:8080|127.0.0.1:8765|' /usr/share/doc/batchrun/examples/serve-NAME.env > /etc/batchrun/serve-t.env
systemctl start batchrun-serve@t || fail "systemctl start batchrun-serve@t"
page=
for _ in $(seq 1 100); do
    page=$(python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:8765/").read().decode())' 2>/dev/null) && break
    sleep 0.1
done
echo "$page" | grep -q "$item" || fail "the live page does not show $item"
echo "ok: batchrun-serve@t served the queue's page, listing $item"
install -d /etc/batchrun/jobs
install -d -o batchrun -g batchrun /var/lib/batchrun/nightly
printf 'id,name\n1,ann\n2,bob\n3,cy\n' > /var/lib/batchrun/nightly/people.csv
cat > /etc/batchrun/jobs/nightly.yaml <<'YAML'
version: 1
store: people.sqlite
entities:
  Person:
    columns:
      id: integer primary key
      name: text not null
jobs:
  load:
    steps:
      - insert: { entity: Person, from: people.csv }
YAML
systemctl start batchrun-run@nightly || fail "systemctl start batchrun-run@nightly"
[ "$(sqlite3 -readonly /var/lib/batchrun/nightly/people.sqlite 'select count(*) from Person')" = 3 ] || fail "the timed run loaded no rows"
systemctl enable --now batchrun-run@nightly.timer > /dev/null 2>&1 || fail "systemctl enable --now batchrun-run@nightly.timer"
systemctl list-timers 'batchrun-run@*' --no-pager | grep -q 'batchrun-run@nightly.timer' || fail "the timer is not listed"
echo "ok: batchrun-run@nightly ran /etc/batchrun/jobs/nightly.yaml into /var/lib/batchrun/nightly (3 rows); its timer is set"

# 4. Purged: what ran is stopped, the files and the enable links are gone.
dpkg --purge batchrun > /srv/test/purge.txt 2>&1 || { cat /srv/test/purge.txt; fail "dpkg --purge"; }
[ "$(systemctl is-active batchrun-serve@t)" != active ] || fail "batchrun-serve@t still runs after the purge"
while read -r path; do [ -d "$path" ] || [ ! -e "$path" ] || fail "$path is left after the purge"; done < /srv/test/listed.txt
[ -z "$(find /etc/systemd/system -name 'batchrun-*@*')" ] || fail "links left: $(find /etc/systemd/system -name 'batchrun-*@*')"
echo "ok: dpkg --purge stopped the live page and removed the files and the enable links"
systemctl poweroff
EOF
chmod +x "$root/srv/test/inside.sh"
cat > "$root/etc/systemd/system/batchrun-boot-test.service" <<'EOF'
[Unit]
Description=batchrun's package test, inside the container
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/srv/test/inside.sh
[Install]
WantedBy=multi-user.target
EOF
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -sf /etc/systemd/system/batchrun-boot-test.service "$root/etc/systemd/system/multi-user.target.wants/"

# --register=no: no machined on the host; the container powers itself off when done.
timeout -k 30 600 systemd-nspawn --quiet -D "$root" --boot --register=no --keep-unit --private-network \
    --machine=batchrun-test > "$work/boot.txt" 2>&1 || true
log="$work/upper/srv/test/log.txt"
[ -f "$log" ] || { tail -30 "$work/boot.txt"; echo "FAIL: the container did not run the test"; exit 1; }
cat "$log"
if grep -q '^FAIL' "$log" || [ "$(grep -c '^ok:' "$log")" != 9 ]; then
    tail -30 "$work/boot.txt"
    echo "FAIL: the test inside the container did not pass"
    exit 1
fi
