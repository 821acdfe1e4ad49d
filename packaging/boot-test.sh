#!/usr/bin/env bash
# `make deb-boot-test`: the worker's unit under systemd running as init. A container
# (systemd-nspawn) boots this machine's own system from an overlay, so nothing it does reaches
# the host; inside it the package is installed with dpkg, a worker instance is configured from
# the example settings and started with systemctl, takes an item, and `systemctl stop` must put
# the item back to pending with the unit ending as a success, and a second start must finish
# it. The live page's unit serves the queue, and the timed run's unit runs a job file. The
# sandbox is then the real one: every setting of the units applies.
#
#   packaging/boot-test.sh PACKAGE.deb
set -euo pipefail
package=$(realpath "$1")
work=$(mktemp -d)
cleanup() { umount "$work/root" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/upper" "$work/overlay-work" "$work/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$work/upper,workdir=$work/overlay-work" "$work/root"
root="$work/root"
install -d "$root/srv/test"
cp "$package" "$root/srv/test/batchrun.deb"

cat > "$root/srv/test/inside.sh" <<'EOF'
#!/bin/bash
# Inside the container, as root, once it has booted; the lines `ok: ...`/`FAIL: ...` are read
# by boot-test.sh.
exec > /srv/test/log.txt 2>&1
fail() {
    echo "FAIL: $*"; journalctl -u batchrun-worker@t --no-pager -o cat | tail -20
    tail -n 20 /srv/q/queue/*/*.log 2>/dev/null; systemctl poweroff; exit 1
}
dpkg -i /srv/test/batchrun.deb > /dev/null || fail "dpkg -i"
getent passwd batchrun > /dev/null || fail "no batchrun user"
install -d -m 750 -g batchrun /etc/batchrun
install -d -o batchrun -g batchrun /srv/q /srv/q/data
sed -e 's|^BATCHRUN_QUEUE=.*|BATCHRUN_QUEUE=/srv/q/queue|' -e 's|/var/lib/batchrun/NAME/data|/srv/q/data|' \
    /usr/share/doc/batchrun/examples/worker-NAME.env > /etc/batchrun/worker-t.env
mkdir -p /etc/systemd/system/batchrun-worker@t.service.d
printf '[Service]\nReadWritePaths=/srv/q\n' > /etc/systemd/system/batchrun-worker@t.service.d/paths.conf
systemctl daemon-reload
awk 'BEGIN { print "id,n"; for (i = 1; i <= 3000000; i++) print i "," i % 97 }' > /srv/q/data/big.csv
cat > /srv/q/slow.yaml <<'YAML'
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
chown -R batchrun:batchrun /srv/q
runuser -u batchrun -- batchrun submit /srv/q/queue /srv/q/slow.yaml > /dev/null || fail "submit"
item=$(ls /srv/q/queue/pending)
systemctl start batchrun-worker@t || fail "systemctl start"
# -readonly: never make the file the worker is about to create (it would be root's).
rows() { [ -f /srv/q/data/slow.sqlite ] && sqlite3 -readonly /srv/q/data/slow.sqlite "select count(*) from Number" 2>/dev/null || echo 0; }
for _ in $(seq 1 600); do [ "$(rows)" -gt 0 ] && break; sleep 0.1; done
[ "$(rows)" -gt 0 ] || fail "the worker loaded no row"
[ "$(ls /srv/q/queue/running | grep '\.yaml$')" = "$item" ] || fail "the item is not running"
echo "ok: systemctl start: the worker took $item ($(systemctl show batchrun-worker@t -p User --value), sandboxed)"
systemctl stop batchrun-worker@t || fail "systemctl stop"
loaded=$(rows)
[ "$loaded" -lt 3000000 ] || fail "the item ended before the stop"
[ "$(ls /srv/q/queue/pending)" = "$item" ] || fail "the item is not back in pending"
[ -z "$(ls /srv/q/queue/running | grep '\.yaml$')" ] || fail "the item is still in running/"
[ "$(systemctl show batchrun-worker@t -p Result --value)" = success ] || fail "the unit did not stop cleanly"
journalctl -u batchrun-worker@t --no-pager -o cat | grep -q '"event":"item_put_back"' || fail "the journal has no item_put_back"
echo "ok: systemctl stop after $loaded rows: $item back in pending, the unit's result success, item_put_back in the journal"
systemctl start batchrun-worker@t || fail "systemctl start again"
for _ in $(seq 1 1200); do [ -n "$(ls /srv/q/queue/done | grep '\.yaml$')" ] && break; sleep 0.1; done
[ "$(ls /srv/q/queue/done | grep '\.yaml$')" = "$item" ] || fail "the restarted worker did not finish the item"
[ "$(rows)" = 3000000 ] || fail "after the restart the table has $(rows) rows, not 3000000"
echo "ok: started again, the worker resumed $item: 3000000 rows, each once"
echo "ok: $(systemd-analyze security batchrun-worker@t --no-pager | tail -1)"

# The live page's unit: serves the queue, which it only reads.
sed -e 's|^BATCHRUN_QUEUE=.*|BATCHRUN_QUEUE=/srv/q/queue|' -e 's|127.0.0.1:8080|127.0.0.1:8765|' \
    /usr/share/doc/batchrun/examples/serve-NAME.env > /etc/batchrun/serve-t.env
systemctl start batchrun-serve@t || fail "systemctl start batchrun-serve@t"
page=
for _ in $(seq 1 100); do
    page=$(python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:8765/").read().decode())' 2>/dev/null) && break
    sleep 0.1
done
echo "$page" | grep -q "$item" || fail "the live page does not show $item"
systemctl stop batchrun-serve@t
[ "$(systemctl show batchrun-serve@t -p Result --value)" = success ] || fail "batchrun-serve@t did not stop cleanly"
echo "ok: batchrun-serve@t served the queue's page, listing $item"

# The timed run's unit, started by hand as its timer would: relative paths in /var/lib/batchrun/t.
install -d /etc/batchrun/jobs
install -d -o batchrun -g batchrun /var/lib/batchrun /var/lib/batchrun/t
printf 'id,name\n1,ann\n2,bob\n3,cy\n' > /var/lib/batchrun/t/people.csv
cat > /etc/batchrun/jobs/t.yaml <<'YAML'
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
systemctl start batchrun-run@t || fail "systemctl start batchrun-run@t"
[ "$(sqlite3 -readonly /var/lib/batchrun/t/people.sqlite 'select count(*) from Person')" = 3 ] || fail "the timed run loaded no rows"
systemctl start batchrun-run@t.timer || fail "systemctl start batchrun-run@t.timer"
systemctl list-timers 'batchrun-run@*' --no-pager | grep -q 'batchrun-run@t.timer' || fail "the timer is not listed"
echo "ok: batchrun-run@t ran /etc/batchrun/jobs/t.yaml into /var/lib/batchrun/t (3 rows); its timer is set"
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
ln -sf /etc/systemd/system/batchrun-boot-test.service "$root/etc/systemd/system/multi-user.target.wants/"

# --register=no: no machined on the host; the container powers itself off when done.
timeout 600 systemd-nspawn --quiet -D "$root" --boot --register=no --keep-unit --machine=batchrun-test \
    > "$work/boot.txt" 2>&1 || true
log="$work/upper/srv/test/log.txt"
[ -f "$log" ] || { tail -30 "$work/boot.txt"; echo "FAIL: the container did not run the test"; exit 1; }
cat "$log"
! grep -q '^FAIL' "$log" && [ "$(grep -c '^ok:' "$log")" = 6 ]
