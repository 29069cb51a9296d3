#!/usr/bin/env bash
# A local NATS supercluster for trying regions on one machine, from the installed nats-server
# (2.9): one cluster per region, joined by gateways, every server tagged `region:<region>` so
# JetStream keeps each region's streams on its own servers. Each node is rendered from
# deploy/local/nats/supercluster-node.conf.tmpl (the template the tests' supercluster uses too),
# with its data, config, pid and log under .data/supercluster/<node>.
#
#   deploy/local/supercluster.sh start [--regions us-east-1:3,eu-west-1]   (default: those two)
#   deploy/local/supercluster.sh env      the Herald settings for it (eval-able)
#   deploy/local/supercluster.sh status
#   deploy/local/supercluster.sh stop [--purge]   (--purge deletes .data/supercluster)
#
# `region:N` gives a region N nodes (1 or 3; 3 shows R3 streams); two to four regions. Ports:
# region i (0-based), node n (1-based) listens for clients on BASE+10*i+n-1, where BASE is
# SUPERCLUSTER_BASE_PORT (default 14222); routes, gateways and monitoring use BASE+1000, +2000
# and +3000 on the same offsets. Only servers this script started (found by their pid files and
# checked to run this config) are ever stopped. The machine's NATS on 4222 is left alone.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATA="${SUPERCLUSTER_DATA:-$ROOT/.data/supercluster}"
TEMPLATE="$ROOT/deploy/local/nats/supercluster-node.conf.tmpl"
BASE="${SUPERCLUSTER_BASE_PORT:-14222}"
DEFAULT_REGIONS="us-east-1:3,eu-west-1"

say() { printf 'supercluster: %s\n' "$*"; }
die() { printf 'supercluster: %s\n' "$*" >&2; exit 1; }

# REGION_NAMES[i], REGION_NODES[i] from "us-east-1:3,eu-west-1"
parse_regions() {
  local spec=$1 item name nodes
  REGION_NAMES=()
  REGION_NODES=()
  IFS=',' read -ra items <<<"$spec"
  for item in "${items[@]}"; do
    name=${item%%:*}
    nodes=1
    [[ $item == *:* ]] && nodes=${item#*:}
    [[ $name =~ ^[a-z]{2}-[a-z]+-[0-9]$ ]] || die "\"$name\" is not a region name like us-east-1"
    [[ $nodes == 1 || $nodes == 3 ]] || die "$name: a region has 1 or 3 nodes, not \"$nodes\""
    REGION_NAMES+=("$name")
    REGION_NODES+=("$nodes")
  done
  ((${#REGION_NAMES[@]} >= 2 && ${#REGION_NAMES[@]} <= 4)) || die "give two to four regions (got ${#REGION_NAMES[@]})"
}

port_of() { # kind(0 client, 1 route, 2 gateway, 3 monitor) region-index node
  echo $((BASE + 1000 * $1 + 10 * $2 + $3 - 1))
}

render() { # region-index node
  local i=$1 n=$2 region=${REGION_NAMES[$1]} routes=() gateways=() j k urls
  for ((k = 1; k <= REGION_NODES[i]; k++)); do
    ((k == n && REGION_NODES[i] > 1)) && continue
    routes+=("\"nats-route://127.0.0.1:$(port_of 1 "$i" "$k")\"")
  done
  for j in "${!REGION_NAMES[@]}"; do
    urls=()
    for ((k = 1; k <= REGION_NODES[j]; k++)); do urls+=("\"nats://127.0.0.1:$(port_of 2 "$j" "$k")\""); done
    gateways+=("{ name: \"${REGION_NAMES[$j]}\", urls: [$(IFS=,; echo "${urls[*]}")] }")
  done
  sed -e "s|{{SERVER_NAME}}|$region-$n|g" \
    -e "s|{{REGION}}|$region|g" \
    -e "s|{{CLIENT_PORT}}|$(port_of 0 "$i" "$n")|g" \
    -e "s|{{CLUSTER_PORT}}|$(port_of 1 "$i" "$n")|g" \
    -e "s|{{GATEWAY_PORT}}|$(port_of 2 "$i" "$n")|g" \
    -e "s|{{GATEWAY_ADVERTISE_PORT}}|$(port_of 2 "$i" "$n")|g" \
    -e "s|{{MONITOR_PORT}}|$(port_of 3 "$i" "$n")|g" \
    -e "s|{{STORE_DIR}}|$DATA/$region-$n|g" \
    -e "s|{{ROUTES}}|$(IFS=,; echo "${routes[*]}")|g" \
    -e "s|{{GATEWAYS}}|$(IFS=,; echo "${gateways[*]}")|g" \
    "$TEMPLATE"
}

# The nodes of the last start, from their folders: "name monitor-url client-url" lines.
started_nodes() {
  local dir
  for dir in "$DATA"/*/; do
    [[ -f $dir/nats.conf ]] || continue
    local name monitor client
    name=$(basename "$dir")
    client=$(sed -nE 's/^listen: "(.*)"$/\1/p' "$dir/nats.conf")
    monitor=$(sed -nE 's/^http: "(.*)"$/\1/p' "$dir/nats.conf")
    echo "$name http://$monitor nats://$client"
  done
}

ours() { # pid conf: the pid runs nats-server with this config
  local args
  args=$(ps -o args= -p "$1" 2>/dev/null) || return 1
  [[ $args == *nats-server* && $args == *"$2"* ]]
}

running() { # node-dir
  [[ -f $1/nats.pid ]] && ours "$(<"$1/nats.pid")" "$1/nats.conf"
}

formed() { # nodes regions: every node has gateways to the other regions and one JetStream meta leader
  local nodes=$1 regions=$2 name monitor client leaders=() out size leader
  while read -r name monitor client; do
    out=$(curl -sf --max-time 2 "$monitor/gatewayz" | jq '.outbound_gateways | length') || return 1
    ((out == regions - 1)) || return 1
    read -r size leader < <(curl -sf --max-time 2 "$monitor/jsz" | jq -r '"\(.meta_cluster.cluster_size // 0) \(.meta_cluster.leader // "")"') || return 1
    ((size == nodes)) && [[ -n $leader ]] || return 1
    leaders+=("$leader")
  done < <(started_nodes)
  [[ $(printf '%s\n' "${leaders[@]}" | sort -u | wc -l) == 1 ]]
}

start() {
  local spec=$DEFAULT_REGIONS
  while (($#)); do
    case $1 in
      --regions) spec=${2:?--regions needs a list}; shift 2 ;;
      --regions=*) spec=${1#*=}; shift ;;
      *) die "unknown option $1" ;;
    esac
  done
  parse_regions "$spec"
  command -v nats-server >/dev/null || die "nats-server is not installed (apt-get install nats-server)"
  for dir in "$DATA"/*/; do
    [[ -d $dir ]] && running "$dir" && die "already running (deploy/local/supercluster.sh stop first)"
  done
  rm -rf "$DATA"
  mkdir -p "$DATA"
  echo "$spec $BASE" >"$DATA/layout"
  local i n total=0 dir
  for i in "${!REGION_NAMES[@]}"; do
    for ((n = 1; n <= REGION_NODES[i]; n++)); do
      dir="$DATA/${REGION_NAMES[$i]}-$n"
      mkdir -p "$dir"
      render "$i" "$n" >"$dir/nats.conf"
      nats-server -t -c "$dir/nats.conf" >/dev/null 2>&1 || die "$dir/nats.conf does not pass nats-server -t"
      setsid nats-server -c "$dir/nats.conf" -P "$dir/nats.pid" -l "$dir/nats.log" </dev/null >/dev/null 2>&1 &
      total=$((total + 1))
    done
  done
  local deadline=$((SECONDS + 60))
  until formed "$total" "${#REGION_NAMES[@]}"; do
    ((SECONDS < deadline)) || die "the supercluster did not form within 60 s; see $DATA/*/nats.log"
    sleep 0.3
  done
  say "running: ${#REGION_NAMES[@]} regions, $total servers (logs in $DATA/<node>/nats.log)"
  env_lines
}

env_lines() {
  [[ -f $DATA/layout ]] || die "not started (deploy/local/supercluster.sh start)"
  local spec base i n urls replicas=() by_region=()
  read -r spec base <"$DATA/layout"
  BASE=$base
  parse_regions "$spec"
  echo "# Herald on this supercluster: \`herald all --regions $(IFS=,; echo "${REGION_NAMES[*]}")\` runs the api and smtp"
  echo "# on the first region's servers (NATS_URL) and each region's worker and webhooks on that"
  echo "# region's servers (NATS_REGION_URLS). A role deployed per region takes its region's URLs as NATS_URL."
  echo "export NATS_PLACE_BY_REGION=true"
  echo "export HERALD_REGIONS=$(IFS=,; echo "${REGION_NAMES[*]}")"
  for i in "${!REGION_NAMES[@]}"; do ((REGION_NODES[i] == 3)) && replicas+=("${REGION_NAMES[$i]}=3"); done
  ((${#replicas[@]})) && echo "export NATS_REGION_REPLICAS=$(IFS=,; echo "${replicas[*]}")"
  for i in "${!REGION_NAMES[@]}"; do
    urls=()
    for ((n = 1; n <= REGION_NODES[i]; n++)); do urls+=("nats://127.0.0.1:$(port_of 0 "$i" "$n")"); done
    ((i == 0)) && echo "export NATS_URL=$(IFS=,; echo "${urls[*]}")"
    by_region+=("${REGION_NAMES[$i]}=$(IFS='|'; echo "${urls[*]}")")
  done
  echo "export NATS_REGION_URLS='$(IFS=,; echo "${by_region[*]}")'"
}

status() {
  local name monitor client state
  while read -r name monitor client; do
    state=down
    running "$DATA/$name" && state=up
    printf '%-20s %-5s %s %s\n' "$name" "$state" "$client" "$monitor"
  done < <(started_nodes)
}

stop() {
  local dir pid purge=0
  [[ ${1:-} == --purge ]] && purge=1
  for dir in "$DATA"/*/; do
    [[ -d $dir ]] || continue
    dir=${dir%/}
    if running "$dir"; then
      pid=$(<"$dir/nats.pid")
      kill "$pid"
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      say "stopped $(basename "$dir")"
    fi
  done
  ((purge)) && rm -rf "$DATA" && say "deleted $DATA"
  return 0
}

case "${1:-}" in
  start) shift; start "$@" ;;
  env) env_lines ;;
  status) status ;;
  stop) shift; stop "$@" ;;
  *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
