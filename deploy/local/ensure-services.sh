#!/usr/bin/env bash
# Makes sure the services Herald needs answer before `npm start` / `npm test`:
#   PostgreSQL (DATABASE_URL), Redis (REDIS_URL) and NATS with JetStream (first of NATS_URL).
# A service that does not answer on a loopback host is started here as a PRIVATE instance from
# the installed server binary, with its data, pid and log under .data/<service> (stop them with
# deploy/local/stop-services.sh). A service on another host is only checked. Then the database
# named in DATABASE_URL is created if it is missing.
#
# On a fresh machine, a server that has to be started here but is not installed is installed
# first: as root with apt-get (the packages in one command, then the script goes on); as another
# user the script stops and prints the one command to run. A service that answers, or one on
# another host, never causes an install.
#
# Idempotent and silent when everything answers (a few milliseconds). Each variable comes from
# the environment, else from .env in the project root, else Herald's default. For tests (and odd
# machines): HERALD_APT_GET is the installer to run instead of apt-get, HERALD_DATA_DIR the folder
# of the private instances instead of .data, HERALD_POSTGRES_LIB where the PostgreSQL versions
# are installed instead of Debian's /usr/lib/postgresql.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATA="${HERALD_DATA_DIR:-$ROOT/.data}"
PG_LIB="${HERALD_POSTGRES_LIB:-/usr/lib/postgresql}"
APT_GET="${HERALD_APT_GET:-apt-get}"

say() { printf 'ensure-services: %s\n' "$*"; }
die() { printf 'ensure-services: %s\n' "$*" >&2; exit 1; }

# The environment wins over .env, as with dotenv; .env is parsed, never sourced.
setting() {
  local name=$1 fallback=$2 value=${!1:-}
  if [[ -z $value && -f $ROOT/.env ]]; then
    value=$(sed -nE "s/^[[:space:]]*(export[[:space:]]+)?${name}[[:space:]]*=[[:space:]]*(.*)$/\2/p" "$ROOT/.env" | tail -n 1)
    value=${value%$'\r'}
    if [[ $value =~ ^\"(.*)\"$ || $value =~ ^\'(.*)\'$ ]]; then
      value=${BASH_REMATCH[1]}
    else
      value=$(sed -E 's/[[:space:]]+#.*$//; s/[[:space:]]+$//' <<<"$value")
    fi
  fi
  printf '%s' "${value:-$fallback}"
}

urldecode() { printf '%b' "${1//%/\\x}"; }

# Splits scheme://user:pass@host:port/path?query into U_USER U_PASS U_HOST U_PORT U_PATH.
parse_url() {
  local url=$1 default_port=$2 rest auth='' hostport
  rest=${url#*://}
  rest=${rest%%\?*}
  hostport=${rest%%/*}
  U_PATH=''
  [[ $rest == */* ]] && U_PATH=${rest#*/}
  if [[ $hostport == *@* ]]; then auth=${hostport%@*}; hostport=${hostport##*@}; fi
  U_USER=$(urldecode "${auth%%:*}")
  U_PASS=''
  [[ $auth == *:* ]] && U_PASS=$(urldecode "${auth#*:}")
  if [[ $hostport == \[* ]]; then
    U_HOST=${hostport#[}; U_HOST=${U_HOST%%]*}
    U_PORT=${hostport##*]}; U_PORT=${U_PORT#:}
  else
    U_HOST=${hostport%%:*}
    U_PORT=''
    [[ $hostport == *:* ]] && U_PORT=${hostport##*:}
  fi
  U_HOST=${U_HOST:-127.0.0.1}
  U_PORT=${U_PORT:-$default_port}
}

is_loopback() { [[ $1 == localhost || $1 == 127.* || $1 == ::1 ]]; }

bounded() { # seconds command...: `timeout` where it exists (not on stock macOS)
  if command -v timeout >/dev/null; then timeout "$@"; else shift; "$@"; fi
}

wait_until() { # seconds command...
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

# Runs a probe function in a child bash under `timeout`, so a host that drops packets cannot
# hang the script; connection errors stay quiet (an unreachable service is an expected state).
probe() { # function args... (status 2: nothing answered, including a connect that timed out)
  local fn=$1 rc=0
  shift
  bounded 3 bash -c "$(declare -f "$fn"); $fn \"\$@\" 2>/dev/null" "$fn" "$@" || rc=$?
  ((rc == 124)) && rc=2
  return "$rc"
}
tcp_probe() { exec 3<>"/dev/tcp/$1/$2" || return 2; }

# One lock around the slow path, so two `npm test` runs do not both start a server. The servers
# are started with fd 9 closed: a daemon that inherited it would hold the lock for its lifetime.
locked=0
take_lock() {
  ((locked)) && return
  mkdir -p "$DATA"
  if command -v flock >/dev/null; then
    exec 9>"$DATA/.ensure-services.lock"
    flock -w 120 9 || die "timed out waiting for another ensure-services run"
  fi
  locked=1
}

log_size() { if [[ -f $1 ]]; then wc -c <"$1" | tr -d ' '; else echo 0; fi; }
tail_log() { # file [bytes to skip]: shows what this run added to a log
  if [[ -f $1 ]]; then tail -c +"$((${2:-0} + 1))" "$1" | tail -n 15 | sed 's/^/  | /' >&2; fi
}

# ---------------------------------------------------------------------------------- PostgreSQL

# A PostgreSQL client program: the binary beside the newest installed server (Debian's
# /usr/bin ones are wrapper scripts that fail when no client version is installed), else the one
# on PATH if it runs.
pg_tool() { # name
  local candidates=("$PG_LIB"/*/bin/"$1") i
  for ((i = ${#candidates[@]} - 1; i >= 0; i--)); do
    [[ -x ${candidates[i]} ]] && { printf '%s' "${candidates[i]}"; return 0; }
  done
  command -v "$1" >/dev/null && "$1" --version >/dev/null 2>&1 && printf '%s' "$1"
}
PG_ISREADY=unknown

pg_state() { # 0 accepting, 1 starting or rejecting, 2 no answer
  [[ $PG_ISREADY == unknown ]] && PG_ISREADY=$(pg_tool pg_isready || true)
  if [[ -n $PG_ISREADY ]]; then
    local rc=0
    PGCONNECT_TIMEOUT=3 "$PG_ISREADY" -q -h "$PG_HOST" -p "$PG_PORT" -t 3 || rc=$?
    case $rc in 0) return 0 ;; 1) return 1 ;; *) return 2 ;; esac
  fi
  probe tcp_probe "$PG_HOST" "$PG_PORT" || return 2
}
pg_up() { pg_state; }

pg_bindir() { # the server binaries, preferring the version the data folder was made with
  local want='' d
  [[ -f $DATA/postgres/data/PG_VERSION ]] && want=$(<"$DATA/postgres/data/PG_VERSION")
  for d in ${PG_BIN:-} ${want:+$PG_LIB/$want/bin} $(printf '%s\n' "$PG_LIB"/*/bin | sort -rV); do
    [[ -x $d/initdb && -x $d/pg_ctl && -x $d/postgres ]] && { printf '%s' "$d"; return 0; }
  done
  d=$(command -v pg_ctl 2>/dev/null) || return 1
  d=$(dirname "$(readlink -f "$d")")
  [[ -x $d/initdb && -x $d/postgres ]] && printf '%s' "$d"
}

# Postgres refuses to run as root: as root, run it as the data folder's owner or `postgres`.
pg_os_user() {
  local owner=''
  ((EUID != 0)) && { id -un; return; }
  [[ -d $DATA/postgres/data ]] && owner=$(stat -c %U "$DATA/postgres/data")
  if [[ -n $owner && $owner != root ]]; then echo "$owner"; else echo postgres; fi
}
as_pg() {
  if ((EUID != 0)); then "$@"
  elif command -v runuser >/dev/null; then runuser -u "$PG_OS_USER" -- "$@"
  else su -s /bin/sh "$PG_OS_USER" -c "$(printf '%q ' "$@")"
  fi
}

start_postgres() {
  local dir="$DATA/postgres" bin version sock
  bin=$(pg_bindir) || die "PostgreSQL does not answer at $PG_HOST:$PG_PORT and no PostgreSQL server is installed to start one. Install it: apt-get install -y postgresql-15 (Debian 12; brew install postgresql@15 on macOS), or point DATABASE_URL at a running server."
  PG_OS_USER=$(pg_os_user)
  if ((EUID == 0)); then
    id "$PG_OS_USER" >/dev/null 2>&1 || die "running as root, and PostgreSQL refuses to run as root; there is no '$PG_OS_USER' user to run it as (create one: useradd -r -m postgres), or run as a normal user"
  fi
  mkdir -p "$dir/socket"
  ((EUID == 0)) && chown "$PG_OS_USER": "$dir" "$dir/socket"
  as_pg test -w "$dir" || die "the user $PG_OS_USER cannot write $dir (is a parent folder closed to it?)"

  if [[ ! -f $dir/data/PG_VERSION ]]; then
    (cd "$dir" && as_pg "$bin/initdb" -D "$dir/data" -U "${PG_USER:-postgres}" --auth=trust --no-locale -E UTF8) >"$dir/initdb.log" 2>&1 ||
      { tail_log "$dir/initdb.log"; die "initdb failed; see .data/postgres/initdb.log"; }
  fi
  if (cd "$dir" && as_pg "$bin/pg_ctl" -D "$dir/data" status) >/dev/null 2>&1; then
    die "the private PostgreSQL in .data/postgres already runs, on port $(sed -n 4p "$dir/data/postmaster.pid"), not $PG_PORT; stop it with deploy/local/stop-services.sh or fix DATABASE_URL"
  fi
  # A Unix socket path longer than 107 bytes is refused; then listen on TCP only.
  sock="$dir/socket"
  ((${#sock} > 90)) && sock=''
  local mark
  mark=$(log_size "$dir/postgres.log")
  (cd "$dir" && as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 -s \
    -o "-p $PG_PORT -h $PG_HOST -k '$sock'" start) >/dev/null 2>&1 9>&- ||
    { tail_log "$dir/postgres.log" "$mark"; die "the private PostgreSQL did not start; see .data/postgres/postgres.log"; }
  wait_until 30 pg_up || die "the private PostgreSQL started but does not answer on $PG_HOST:$PG_PORT"
  version=$("$bin/postgres" --version | sed -nE 's/.*\(PostgreSQL\) ([0-9.]+).*/\1/p')
  say "started a private PostgreSQL $version on $PG_HOST:$PG_PORT (data and log in .data/postgres)"
}

ensure_postgres() {
  local rc=0
  pg_state || rc=$?
  if ((rc == 1)); then
    wait_until 30 pg_up || die "PostgreSQL at $PG_HOST:$PG_PORT answers but does not accept connections (still starting?)"
  elif ((rc == 2)); then
    is_loopback "$PG_HOST" || die "PostgreSQL does not answer at $PG_HOST:$PG_PORT (DATABASE_URL); that host is not this machine, so nothing was started"
    take_lock
    rc=0
    pg_state || rc=$?
    if ((rc == 2)); then start_postgres; else wait_until 30 pg_up || die "PostgreSQL at $PG_HOST:$PG_PORT does not accept connections"; fi
  fi
}

ensure_database() {
  local psql maint found
  [[ -z $PG_DB || $PG_DB == postgres ]] && return 0
  psql=$(pg_tool psql) || die "psql is missing (needed to check that database $PG_DB exists): apt-get install -y postgresql-client-15"
  maint=$(sed -E 's#^(postgres(ql)?://[^/?]*)(/[^?]*)?#\1/postgres#' <<<"$DATABASE_URL")
  exists() {
    found=$(PGCONNECT_TIMEOUT=5 "$psql" -d "$maint" -XqAt -v ON_ERROR_STOP=1 -v db="$PG_DB" \
      <<<"SELECT 1 FROM pg_database WHERE datname = :'db';" 2>&1) || die "cannot query PostgreSQL at $PG_HOST:$PG_PORT: $found"
    [[ $found == 1 ]]
  }
  exists && return 0
  if ! found=$("$psql" -d "$maint" -XqAt -v ON_ERROR_STOP=1 -v db="$PG_DB" <<<'CREATE DATABASE :"db";' 2>&1); then
    exists && return 0 # created meanwhile by a concurrent run
    die "could not create database $PG_DB: $found"
  fi
  say "created database $PG_DB on $PG_HOST:$PG_PORT"
}

# --------------------------------------------------------------------------------------- Redis

# Speaks RESP over /dev/tcp: AUTH when the URL has a password, then PING. Exit 0 on +PONG,
# 1 when something answered otherwise (the reply is printed), 2 when nothing answered.
redis_probe() { # host port user password
  local line
  resp() {
    local a
    printf '*%d\r\n' $# >&3
    for a in "$@"; do printf '$%d\r\n%s\r\n' "${#a}" "$a" >&3; done
  }
  exec 3<>"/dev/tcp/$1/$2" || return 2
  if [[ -n $4 ]]; then
    if [[ -n $3 ]]; then resp AUTH "$3" "$4"; else resp AUTH "$4"; fi
    IFS= read -r -t 2 line <&3 || return 1
  fi
  resp PING
  IFS= read -r -t 2 line <&3 || return 1
  line=${line%$'\r'}
  [[ $line == +PONG ]] && return 0
  printf '%s\n' "$line"
  return 1
}
redis_ping() {
  if [[ $REDIS_TLS == 1 ]]; then probe tcp_probe "$REDIS_HOST" "$REDIS_PORT"; return; fi
  probe redis_probe "$REDIS_HOST" "$REDIS_PORT" "$REDIS_USER" "$REDIS_PASS"
}
redis_up() { redis_ping >/dev/null; }

start_redis() {
  local dir="$DATA/redis" listen=("$REDIS_HOST")
  command -v redis-server >/dev/null ||
    die "Redis does not answer at $REDIS_HOST:$REDIS_PORT and redis-server is not installed to start one. Install it: apt-get install -y redis-server (brew install redis on macOS), or point REDIS_URL at a running server."
  mkdir -p "$dir"
  [[ $REDIS_HOST == localhost ]] && listen=(127.0.0.1 -::1)
  local args=(--daemonize yes --bind "${listen[@]}" --port "$REDIS_PORT" --dir "$dir"
    --save '' --appendonly no --pidfile "$dir/redis.pid" --logfile "$dir/redis.log")
  [[ -n $REDIS_PASS ]] && args+=(--requirepass "$REDIS_PASS")
  local mark
  mark=$(log_size "$dir/redis.log")
  redis-server "${args[@]}" >/dev/null 9>&- || { tail_log "$dir/redis.log" "$mark"; die "redis-server did not start; see .data/redis/redis.log"; }
  wait_until 10 redis_up || { tail_log "$dir/redis.log" "$mark"; die "the private Redis does not answer on $REDIS_HOST:$REDIS_PORT"; }
  say "started a private Redis $(redis-server --version | sed -nE 's/.*v=([0-9.]+).*/\1/p') on $REDIS_HOST:$REDIS_PORT (log in .data/redis, nothing kept on disk)"
}

ensure_redis() {
  local rc=0 reply
  reply=$(redis_ping) || rc=$?
  ((rc == 0)) && return 0
  if ((rc != 2)); then
    [[ $reply == -LOADING* ]] && { wait_until 30 redis_up && return 0; }
    die "something answers at $REDIS_HOST:$REDIS_PORT (REDIS_URL) but not as Redis would to PING: ${reply:-no reply}"
  fi
  is_loopback "$REDIS_HOST" || die "Redis does not answer at $REDIS_HOST:$REDIS_PORT (REDIS_URL); that host is not this machine, so nothing was started"
  take_lock
  redis_up || start_redis
}

# ---------------------------------------------------------------------------------------- NATS

# A NATS server greets every client with one INFO line, whose JSON says whether JetStream is on
# (`"jetstream":true`), so no monitoring port is needed. Exit 0 with JetStream, 3 without it,
# 1 when something else answered, 2 when nothing answered.
nats_probe() { # host port
  local line
  exec 3<>"/dev/tcp/$1/$2" || return 2
  IFS= read -r -t 2 line <&3 || return 1
  [[ $line == INFO* ]] || return 1
  [[ $line =~ \"jetstream\":[[:space:]]*true ]] || return 3
}
nats_info() { probe nats_probe "$NATS_HOST" "$NATS_PORT"; }
nats_up() { nats_info; }

start_nats() {
  local dir="$DATA/nats" pid
  command -v nats-server >/dev/null ||
    die "NATS does not answer at $NATS_HOST:$NATS_PORT and nats-server is not installed to start one. Install it: apt-get install -y nats-server (brew install nats-server on macOS), or point NATS_URL at a running server."
  mkdir -p "$dir"
  local mark
  mark=$(log_size "$dir/nats.log")
  local args=(-n herald-local -a "$NATS_HOST" -p "$NATS_PORT" -js -sd "$dir" -P "$dir/nats.pid" -l "$dir/nats.log")
  if [[ -n $NATS_PASS ]]; then args+=(--user "$NATS_USER" --pass "$NATS_PASS")
  elif [[ -n $NATS_USER ]]; then args+=(--auth "$NATS_USER")
  fi
  # Its own session, so a Ctrl-C in the terminal that ran `npm start` does not stop it.
  if command -v setsid >/dev/null; then
    setsid nohup nats-server "${args[@]}" </dev/null >/dev/null 2>&1 9>&- &
  else
    nohup nats-server "${args[@]}" </dev/null >/dev/null 2>&1 9>&- &
  fi
  pid=$!
  nats_alive() { kill -0 "$pid" 2>/dev/null || { tail_log "$dir/nats.log" "$mark"; die "nats-server exited at start; see .data/nats/nats.log"; }; nats_up; }
  wait_until 10 nats_alive || { tail_log "$dir/nats.log" "$mark"; die "the private NATS does not answer on $NATS_HOST:$NATS_PORT"; }
  say "started a private NATS $(nats-server --version | sed -nE 's/.*v([0-9.]+).*/\1/p') with JetStream on $NATS_HOST:$NATS_PORT (data and log in .data/nats)"
}

ensure_nats() {
  local rc=0
  nats_info || rc=$?
  case $rc in
    0) return 0 ;;
    3) die "NATS at $NATS_HOST:$NATS_PORT runs without JetStream; Herald needs it: restart that server with -js (or 'jetstream {}' in its config)" ;;
    2) ;;
    *) die "something answers at $NATS_HOST:$NATS_PORT (NATS_URL) but does not greet like a NATS server" ;;
  esac
  is_loopback "$NATS_HOST" || die "NATS does not answer at $NATS_HOST:$NATS_PORT (NATS_URL); that host is not this machine, so nothing was started"
  take_lock
  nats_up || start_nats
}

# ------------------------------------------------------------------- programs (a fresh machine)

# The Debian packages of the servers this run will have to start and cannot: a server binary is
# looked for first (cheap); only when it is missing is its service asked whether it answers.
missing_packages() {
  local rc server=0
  if ! pg_bindir >/dev/null && is_loopback "$PG_HOST"; then
    rc=0
    pg_state || rc=$?
    ((rc == 2)) && { echo postgresql-15; server=1; }
  fi
  # psql checks that the database exists; the server package brings it along.
  if ((server == 0)) && [[ -n $PG_DB && $PG_DB != postgres ]] && ! pg_tool psql >/dev/null; then echo postgresql-client-15; fi
  if ! command -v redis-server >/dev/null && is_loopback "$REDIS_HOST"; then
    rc=0
    redis_ping >/dev/null || rc=$?
    ((rc == 2)) && echo redis-server
  fi
  if ! command -v nats-server >/dev/null && is_loopback "$NATS_HOST"; then
    rc=0
    nats_info || rc=$?
    ((rc == 2)) && echo nats-server
  fi
  return 0
}

# Debian starts a package's service as it installs it (where systemd runs). Two of them would
# stand in Herald's way on its default ports: the nats-server unit runs without JetStream, and
# postgresql-15 creates a cluster `main` on 5432 that asks for passwords. Only what this install
# created is undone; Herald's own private instances take their place.
after_install() { # packages... ; HAD_PG_MAIN says whether a cluster 15/main existed before
  local pkg
  for pkg in "$@"; do
    case $pkg in
      nats-server)
        if command -v systemctl >/dev/null && systemctl is-active --quiet nats-server 2>/dev/null; then
          systemctl disable --now nats-server >/dev/null 2>&1 &&
            say "stopped and disabled the nats-server service the package started (it runs without JetStream); Herald starts its own"
        fi
        ;;
      postgresql-15)
        if ((HAD_PG_MAIN == 0)) && [[ -d /etc/postgresql/15/main ]] && command -v pg_dropcluster >/dev/null &&
          [[ $(sed -nE 's/^[[:space:]]*port[[:space:]]*=[[:space:]]*([0-9]+).*/\1/p' /etc/postgresql/15/main/postgresql.conf) == "$PG_PORT" ]]; then
          pg_dropcluster --stop 15 main >/dev/null 2>&1 &&
            say "removed the empty cluster 15/main the package created on port $PG_PORT (it asks for passwords); Herald starts its own in .data/postgres"
        fi
        ;;
    esac
  done
}

ensure_programs() {
  local pkgs log
  read -r -a pkgs <<<"$(missing_packages | tr '\n' ' ')"
  ((${#pkgs[@]} == 0)) && return 0
  local command="apt-get install -y ${pkgs[*]}"
  if ((EUID != 0)); then
    if command -v apt-get >/dev/null || [[ -n ${HERALD_APT_GET:-} ]]; then
      die "${pkgs[*]} must be installed to start the services Herald needs on this machine, and only root can install them. Run: sudo $command"
    fi
    die "${pkgs[*]} must be installed to start the services Herald needs on this machine (Debian: $command; macOS: brew install postgresql@15 redis nats-server), or point DATABASE_URL, REDIS_URL and NATS_URL at running servers"
  fi
  command -v "$APT_GET" >/dev/null ||
    die "${pkgs[*]} must be installed to start the services Herald needs, and there is no apt-get here: install them with this system's package manager, or point DATABASE_URL, REDIS_URL and NATS_URL at running servers"
  take_lock
  read -r -a pkgs <<<"$(missing_packages | tr '\n' ' ')" # another run may have installed them meanwhile
  ((${#pkgs[@]} == 0)) && return 0
  HAD_PG_MAIN=0
  [[ -d /etc/postgresql/15/main ]] && HAD_PG_MAIN=1
  log="$DATA/apt-get.log"
  say "installing ${pkgs[*]} (apt-get, as root; the log is in $log)"
  local install=("$APT_GET" install -y --no-install-recommends "${pkgs[@]}")
  if ! DEBIAN_FRONTEND=noninteractive "${install[@]}" >"$log" 2>&1 9>&-; then
    # A fresh machine's package lists may be empty or stale.
    { DEBIAN_FRONTEND=noninteractive "$APT_GET" update && DEBIAN_FRONTEND=noninteractive "${install[@]}"; } >>"$log" 2>&1 9>&- ||
      { tail_log "$log"; die "apt-get could not install ${pkgs[*]}; see $log"; }
  fi
  after_install "${pkgs[@]}"
  hash -r
  PG_ISREADY=unknown
}

# ---------------------------------------------------------------------------------------- main

DATABASE_URL=$(setting DATABASE_URL postgres://postgres@127.0.0.1:5432/herald)
REDIS_URL=$(setting REDIS_URL redis://127.0.0.1:6379)
NATS_URL=$(setting NATS_URL nats://127.0.0.1:4222)

[[ $DATABASE_URL =~ ^postgres(ql)?:// ]] || die "DATABASE_URL must start with postgres://, got: $DATABASE_URL"
parse_url "$DATABASE_URL" 5432
PG_HOST=$U_HOST PG_PORT=$U_PORT PG_USER=$U_USER PG_DB=$(urldecode "$U_PATH")

[[ $REDIS_URL =~ ^rediss?:// ]] || die "REDIS_URL must start with redis:// or rediss://, got: $REDIS_URL"
parse_url "$REDIS_URL" 6379
REDIS_HOST=$U_HOST REDIS_PORT=$U_PORT REDIS_USER=$U_USER REDIS_PASS=$U_PASS REDIS_TLS=0
[[ $REDIS_URL == rediss://* ]] && REDIS_TLS=1

NATS_FIRST=${NATS_URL%%,*}
NATS_FIRST=${NATS_FIRST#"${NATS_FIRST%%[![:space:]]*}"}
[[ $NATS_FIRST =~ ^(nats|tls):// ]] || die "NATS_URL must start with nats:// or tls://, got: $NATS_URL"
parse_url "$NATS_FIRST" 4222
NATS_HOST=$U_HOST NATS_PORT=$U_PORT NATS_USER=$U_USER NATS_PASS=$U_PASS

ensure_programs
ensure_postgres
ensure_redis
ensure_nats
ensure_database
