#!/usr/bin/env bash
# Stops the PRIVATE PostgreSQL, Redis and NATS that ensure-services.sh started in .data/<service>.
# Services it did not start (the machine's own, a remote server) are never touched: every
# process is found through a pid file inside .data and checked to be that service before the
# signal. With --purge it also deletes .data/<service> (the private databases and streams).
# HERALD_DATA_DIR and HERALD_POSTGRES_LIB as in ensure-services.sh.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATA="${HERALD_DATA_DIR:-$ROOT/.data}"
PURGE=0
case "${1:-}" in
  '') ;;
  --purge) PURGE=1 ;;
  *) echo "usage: $0 [--purge]" >&2; exit 2 ;;
esac

say() { printf 'stop-services: %s\n' "$*"; }

stop_postgres() {
  local data="$DATA/postgres/data" bin='' d owner
  [[ -f $data/postmaster.pid ]] || return 0
  for d in ${PG_BIN:-} ${HERALD_POSTGRES_LIB:-/usr/lib/postgresql}/$(<"$data/PG_VERSION")/bin; do
    [[ -x $d/pg_ctl ]] && { bin=$d; break; }
  done
  [[ -n $bin ]] || bin=$(dirname "$(readlink -f "$(command -v pg_ctl)")")
  owner=$(stat -c %U "$data")
  local ctl=("$bin/pg_ctl" -D "$data" -m fast -w -t 60 -s stop)
  if ((EUID == 0)) && [[ $owner != root ]]; then
    (cd "$DATA/postgres" && runuser -u "$owner" -- "${ctl[@]}")
  else
    "${ctl[@]}"
  fi
  say "stopped the private PostgreSQL (.data/postgres)"
}

# A pid is ours only if it runs the expected program from .data: its command line names .data
# (NATS) or its working folder is in .data (redis-server chdirs to its --dir).
ours() { # pid program
  local args cwd=''
  args=$(ps -o args= -p "$1" 2>/dev/null) || return 1
  [[ $args == *"$2"* ]] || return 1
  [[ -e /proc/$1/cwd ]] && cwd=$(readlink "/proc/$1/cwd" 2>/dev/null || true)
  [[ $args == *"$DATA/"* || $cwd == "$DATA"/* ]]
}

# Stops the process named in a pid file, if it still is that private server.
stop_pidfile() { # label pidfile program
  local label=$1 pidfile=$2 program=$3 pid
  [[ -f $pidfile ]] || return 0
  pid=$(tr -dc 0-9 <"$pidfile")
  if [[ -z $pid ]] || ! ours "$pid" "$program"; then
    rm -f "$pidfile"
    return 0
  fi
  kill -TERM "$pid"
  for _ in $(seq 1 200); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "stop-services: $label (pid $pid) did not stop within 20 s" >&2
    exit 1
  fi
  rm -f "$pidfile"
  say "stopped the private $label (pid $pid)"
}

stop_postgres
stop_pidfile Redis "$DATA/redis/redis.pid" redis-server
stop_pidfile NATS "$DATA/nats/nats.pid" nats-server

if ((PURGE)); then
  rm -rf "$DATA/postgres" "$DATA/redis" "$DATA/nats" "$DATA/.ensure-services.lock"
  say "deleted .data/postgres, .data/redis and .data/nats"
fi
