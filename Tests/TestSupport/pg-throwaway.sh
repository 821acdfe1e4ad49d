#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for tests: trust auth on 127.0.0.1 only, a free port,
# a temporary folder under ${TMPDIR:-/tmp}, durability off. Works as root (runs the server as
# `postgres`) or as any other non-root user (runs it as that user).
#
#   pg-throwaway.sh start [--owner PID] [--conf FILE] [--hba FILE] [--files DIR]
#                                         prints the cluster's folder (its Unix socket's folder too),
#                                         then the URL, e.g. postgresql://postgres@127.0.0.1:41234/postgres
#       --conf FILE   lines added to postgresql.conf (ssl = on, ...)
#       --hba FILE    pg_hba.conf in place of the trust-everything one
#       --files DIR   files copied into the data folder, owned by the server's user, mode 0600
#                     (server.crt, server.key, root.crt: name them in --conf relative to it)
#   pg-throwaway.sh stop  URL|PORT|DIR    immediate shutdown, folder removed
#   pg-throwaway.sh stop-all              every cluster this script started on this machine
#   pg-throwaway.sh halt DIR              stops the server (pg_ctl stop -m fast), keeps the folder
#   pg-throwaway.sh resume DIR            starts it again: same port, same data
#
# Cleanup when the test process dies (even by SIGKILL): `start` leaves a small watchdog
# (setsid, detached) that polls the owner PID (default: the caller, $PPID) every 0.2 s and stops
# the cluster and removes the folder once the owner is gone. Second line of defence: the
# postmaster itself shuts down (within about a minute) once its postmaster.pid lock file is
# removed, so `rm -rf` of the folder alone is enough to end an orphaned server.
set -euo pipefail

BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
ROOT=${TMPDIR:-/tmp}
PREFIX=pg-throwaway

as_pg() { # run a command as the server's user
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

stop_dir() { # DIR: immediate shutdown, then remove the folder
  local dir=$1
  [ -d "$dir" ] || return 0
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_pg "$BIN/pg_ctl" stop -D "$dir/data" -m immediate -w -t 30 >/dev/null 2>&1 || true
  fi
  if [ -f "$dir/watchdog.pid" ]; then
    local w; w=$(cat "$dir/watchdog.pid")
    [ "$w" != "${WATCHDOG_SELF:-}" ] && kill "$w" 2>/dev/null || true
  fi
  rm -rf "$dir"
}

cmd=${1:-}
case "$cmd" in
start)
  owner=$PPID conf= hba= files=
  shift
  while [ $# -gt 0 ]; do
    case "$1" in
      --owner) owner=$2 ;;
      --conf) conf=$2 ;;
      --hba) hba=$2 ;;
      --files) files=$2 ;;
      *) echo "pg-throwaway: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
  done
  for attempt in 1 2 3; do
    port=$(free_port)
    dir=$(mktemp -d "$ROOT/$PREFIX-$port-XXXXXX")
    chmod 700 "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    as_pg "$BIN/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1
    cat >>"$dir/data/postgresql.conf" <<EOF
# pg-throwaway: a test server, nothing here is meant to survive a crash
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
fsync = off
synchronous_commit = off
full_page_writes = off
wal_level = minimal
max_wal_senders = 0
max_wal_size = 4GB
checkpoint_timeout = 30min
shared_buffers = 256MB
work_mem = 16MB
maintenance_work_mem = 256MB
autovacuum = off
# the tests run in parallel, each PostgreSQL test with its own store (a writer and a reader
# session) and some with several batchrun processes: 100 was reached
max_connections = 300
log_min_messages = warning
timezone = 'UTC'
EOF
    # trust for 127.0.0.1 only; the unix socket also trusts (same folder, mode 0700)
    cat >"$dir/data/pg_hba.conf" <<EOF
local all all trust
host  all all 127.0.0.1/32 trust
EOF
    if [ -n "$conf" ]; then cat "$conf" >>"$dir/data/postgresql.conf"; fi
    if [ -n "$hba" ]; then cp "$hba" "$dir/data/pg_hba.conf"; fi
    if [ -n "$files" ]; then
      for f in "$files"/*; do
        cp "$f" "$dir/data/"
        chmod 600 "$dir/data/$(basename "$f")"
        if [ "$(id -u)" = 0 ]; then chown postgres: "$dir/data/$(basename "$f")"; fi
      done
    fi
    if as_pg "$BIN/pg_ctl" start -D "$dir/data" -l "$dir/server.log" -w -t 30 >/dev/null 2>&1; then
      break
    fi
    # most likely the port was taken between free_port and the bind: try another
    echo "pg-throwaway: start failed on port $port (attempt $attempt), see below" >&2
    tail -n 5 "$dir/server.log" >&2 || true
    stop_dir "$dir"
    dir=
  done
  [ -n "$dir" ] || { echo "pg-throwaway: could not start a server" >&2; exit 1; }
  url="postgresql://postgres@127.0.0.1:$port/postgres"
  echo "$url" >"$dir/url"
  # watchdog: stops the server when the owner process is gone (also after SIGKILL)
  # (if the folder was removed under it, SIGQUIT = immediate shutdown of the postmaster by PID)
  pm=$(head -n 1 "$dir/data/postmaster.pid")
  setsid bash -c '
    owner=$1 dir=$2 script=$3 pm=$4
    while kill -0 "$owner" 2>/dev/null && [ -d "$dir" ]; do sleep 0.2; done
    if [ -d "$dir" ]; then WATCHDOG_SELF=$$ "$script" stop "$dir"
    elif grep -qs "$dir" "/proc/$pm/cmdline"; then kill -QUIT "$pm"; fi
  ' watchdog "$owner" "$dir" "$(readlink -f "$0")" "$pm" </dev/null >/dev/null 2>&1 &
  echo $! >"$dir/watchdog.pid"
  echo "$dir"
  echo "$url"
  ;;
stop)
  arg=${2:?stop needs the URL, the port or the folder}
  if [ -d "$arg" ]; then
    stop_dir "$arg"
  else
    port=${arg##*:}; port=${port%%/*}
    for d in "$ROOT/$PREFIX-$port-"*; do stop_dir "$d"; done
  fi
  ;;
halt)
  dir=${2:?halt needs the folder}
  as_pg "$BIN/pg_ctl" stop -D "$dir/data" -m fast -w -t 30 >/dev/null
  ;;
resume)
  dir=${2:?resume needs the folder}
  as_pg "$BIN/pg_ctl" start -D "$dir/data" -l "$dir/server.log" -w -t 30 >/dev/null
  ;;
stop-all)
  for d in "$ROOT/$PREFIX-"*; do [ -d "$d" ] && stop_dir "$d"; done
  ;;
*)
  echo "usage: $0 start [--owner PID] [--conf FILE] [--hba FILE] [--files DIR] | stop URL|PORT|DIR | stop-all | halt DIR | resume DIR" >&2
  exit 2
  ;;
esac
