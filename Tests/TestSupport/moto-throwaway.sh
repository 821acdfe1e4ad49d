#!/usr/bin/env bash
# A throwaway S3-compatible endpoint for tests: moto's server (PyPI's moto[server], pinned) on
# 127.0.0.1, a free port, a temporary folder under ${TMPDIR:-/tmp}, AWS authentication on.
#
#   moto-throwaway.sh start [--owner PID]   prints the folder, then the endpoint URL
#                                           (http://127.0.0.1:PORT); the folder's
#                                           credentials.json has the test keys (moto-s3.py setup),
#                                           the test's S3 client is `moto-s3.py FOLDER ...`
#   moto-throwaway.sh stop DIR              stops the server, removes the folder
#   moto-throwaway.sh python                prints the virtual environment's python (made if missing)
#
# The virtual environment is made once per machine and moto version, under the package's
# .build/test-venv (flock-guarded, so parallel test processes make it once). It sees the system's
# site-packages: where moto is installed already (as on this project's machines) pip has nothing
# to download; elsewhere it installs moto[server] from PyPI.
#
# Cleanup when the test process dies (even by SIGKILL): a watchdog (setsid, detached) polls the
# owner PID (default: the caller) and stops the server once the owner is gone.
set -euo pipefail

MOTO_VERSION=5.2.1
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${BATCHRUN_TEST_VENV:-$HERE/../../.build/test-venv/moto-$MOTO_VERSION}
ROOT=${TMPDIR:-/tmp}
PREFIX=moto-throwaway

ensure_venv() { # makes the virtual environment unless it is there and has moto
  mkdir -p "$(dirname "$VENV")"
  exec 9>"$VENV.lock"
  flock 9
  if ! "$VENV/bin/python" -c "import moto, flask, boto3, sys; sys.exit(moto.__version__ != '$MOTO_VERSION')" 2>/dev/null; then
    rm -rf "$VENV"
    python3 -m venv --system-site-packages "$VENV" >&2
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check "moto[server]==$MOTO_VERSION" >&2
  fi
  flock -u 9
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

stop_server() { # PID: SIGTERM, then SIGKILL if it is still there 2 s later
  local pid=$1
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

stop_dir() { # DIR: stop the server and the watchdog, remove the folder
  local dir=$1
  [ -d "$dir" ] || return 0
  if [ -f "$dir/server.pid" ]; then stop_server "$(cat "$dir/server.pid")"; fi
  if [ -f "$dir/watchdog.pid" ]; then
    local w; w=$(cat "$dir/watchdog.pid")
    [ "$w" != "${WATCHDOG_SELF:-}" ] && kill "$w" 2>/dev/null || true
  fi
  rm -rf "$dir"
}

cmd=${1:-}
case "$cmd" in
start)
  owner=$PPID
  shift
  while [ $# -gt 0 ]; do
    case "$1" in
      --owner) owner=$2; shift ;;
      *) echo "moto-throwaway: unknown option $1" >&2; exit 2 ;;
    esac
    shift
  done
  ensure_venv
  dir=
  for attempt in 1 2 3; do
    port=$(free_port)
    dir=$(mktemp -d "$ROOT/$PREFIX-$port-XXXXXX")
    setsid "$VENV/bin/python" -m moto.server -H 127.0.0.1 -p "$port" </dev/null >"$dir/server.log" 2>&1 &
    echo $! >"$dir/server.pid"
    up=
    for _ in $(seq 1 300); do # up to 60 s: moto imports a lot on a busy machine
      if ! kill -0 "$(cat "$dir/server.pid")" 2>/dev/null; then break; fi
      if "$VENV/bin/python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/moto-api/data.json', timeout=2)" 2>/dev/null; then up=1; break; fi
      sleep 0.2
    done
    if [ -n "$up" ]; then break; fi
    # most likely the port was taken between free_port and the bind: try another
    echo "moto-throwaway: start failed on port $port (attempt $attempt):" >&2
    tail -n 5 "$dir/server.log" >&2 || true
    stop_dir "$dir"
    dir=
  done
  [ -n "$dir" ] || { echo "moto-throwaway: could not start moto_server" >&2; exit 1; }
  endpoint="http://127.0.0.1:$port"
  echo "$endpoint" >"$dir/endpoint"
  if ! "$VENV/bin/python" "$HERE/moto-s3.py" "$dir" setup; then
    stop_dir "$dir"
    exit 1
  fi
  # watchdog: stops the server when the owner process is gone (also after SIGKILL)
  # (it knows the server's PID itself: a folder removed by someone else must not leave the server running)
  setsid bash -c '
    owner=$1 dir=$2 script=$3 server=$4
    while kill -0 "$owner" 2>/dev/null && [ -d "$dir" ]; do sleep 0.2; done
    WATCHDOG_SELF=$$ "$script" stop "$dir"
    kill "$server" 2>/dev/null && sleep 2 && kill -9 "$server" 2>/dev/null
    true
  ' watchdog "$owner" "$dir" "$HERE/moto-throwaway.sh" "$(cat "$dir/server.pid")" </dev/null >/dev/null 2>&1 &
  echo $! >"$dir/watchdog.pid"
  echo "$dir"
  echo "$endpoint"
  ;;
stop)
  stop_dir "${2:?stop needs the folder}"
  ;;
python)
  ensure_venv
  echo "$VENV/bin/python"
  ;;
*)
  echo "usage: $0 start [--owner PID] | stop DIR | python" >&2
  exit 2
  ;;
esac
