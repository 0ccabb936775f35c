#!/usr/bin/env bash
# Measures lazuli on PostgreSQL in one run with cmd/lazuli-bench: one lazuli
# instance on the database ("pg1"), three instances sharing another database
# of the same server with the client's connections spread over them ("pg3"),
# lazuli on its default log engine ("log"), and the reference emulator (npm
# package "azurite"). Every figure comes with the CPU per operation of each
# tier (the lazuli processes, the PostgreSQL server with all its backends),
# read from /proc before and after each measurement, so the cost of a
# request on each tier is known and a larger deployment can be projected.
#
# Then a second pass races every client on one blob (workload blob-cas-hot:
# read the ETag, write with If-Match, again after 412) on fresh pg1 and pg3
# instances and prints what each instance's engine counted: Updates,
# attempts run again after a serialization failure, and the most attempts
# one Update took (bounded by the engine).
#
#   scripts/bench-postgres.sh                              # every workload, 10 s each
#   scripts/bench-postgres.sh --duration 5s --warmup 1s    # shorter
#   scripts/bench-postgres.sh --workloads blob-put-1k,table-insert
#   scripts/bench-postgres.sh --duration 3s --settle=false   # a few minutes on a busy machine
#
# Every argument goes to lazuli-bench (see `go run ./cmd/lazuli-bench --help`).
# The PostgreSQL server is a throw-away one: initdb into a scratch directory
# (as the "postgres" system user when run as root), default durability
# (fsync and synchronous_commit on), max_connections 200, max_pred_locks_per_transaction
# 256 as the README advises. Linux only (/proc).
# Environment:
#   BENCH_PORT_BASE   PostgreSQL listens here, the reference emulator on +50..+52,
#                     lazuli instances on free blocks of four from +10 (default 24000)
#   POSTGRES_BIN      directory of initdb and postgres (default: the newest
#                     /usr/lib/postgresql/*/bin, else the PATH)
#   PG_MAX_CONNS      --postgresMaxConns of every lazuli instance (default 16)
#   AZURITE_BIN       use this azurite executable instead of installing one
#   NO_AZURITE=1      leave the reference emulator out
#   KEEP_LOGS=1       keep the scratch directory (server logs) after the run
set -euo pipefail
cd "$(dirname "$0")/.."

base=${BENCH_PORT_BASE:-24000}
maxconns=${PG_MAX_CONNS:-16}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/lazuli-bench-pg.XXXXXX")
chmod 755 "$scratch"
pids=()
. scripts/bench-lib.sh
trap cleanup EXIT

# wait_port PORT PID NAME: wait until something accepts connections on
# 127.0.0.1:PORT, failing early if PID has exited.
wait_port() {
  for _ in $(seq 1 300); do
    port_busy "$1" && return 0
    if ! kill -0 "$2" 2>/dev/null; then
      echo "$3 exited before listening on port $1; its log:" >&2
      cat "$scratch/$3.log" >&2 || true
      exit 1
    fi
    sleep 0.2
  done
  echo "$3 is not listening on port $1 after 60 s" >&2
  exit 1
}

for p in $base $((base + 50)) $((base + 51)) $((base + 52)); do
  if port_busy "$p"; then
    echo "port $p is in use; choose another BENCH_PORT_BASE" >&2
    exit 1
  fi
done

echo "== building lazuli and lazuli-bench" >&2
go build -o "$scratch/lazuli" ./cmd/lazuli
go build -o "$scratch/lazuli-bench" ./cmd/lazuli-bench

start_postgres "$base"
for db in pg1 pg3; do
  "$pgbin/psql" -q -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -c "CREATE DATABASE $db" >&2
done
pg_url() { echo "postgres://postgres@127.0.0.1:$pg_port/$1?sslmode=disable"; }

# start_pg: the one instance of pg1 and the three of pg3 (from ports
# base+100 upwards); sets pg1_pid, pg1_port, pg3_pids and pg3_ports.
start_pg() {
  start pg1 $((base + 100)) --engine postgres --postgres "$(pg_url pg1)" --postgresMaxConns "$maxconns"
  pg1_pid=$started_pid pg1_port=$started_port
  pg3_pids=() pg3_ports=()
  for i in 0 1 2; do
    start "pg3-$i" $((started_port + 10)) --engine postgres --postgres "$(pg_url pg3)" --postgresMaxConns "$maxconns"
    pg3_pids+=("$started_pid") pg3_ports+=("$started_port")
  done
}

# stop_pg: stops the PostgreSQL instances and prints what their engines
# counted (Updates, retried attempts, most attempts of one Update).
stop_pg() {
  local pid
  for pid in "$pg1_pid" "${pg3_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "$pg1_pid" "${pg3_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for f in pg1 pg3-0 pg3-1 pg3-2; do
    echo "  $f: $(grep -h "pgstore updates" "$scratch/$f.log" | tail -n 1 | sed 's/.*msg="pgstore updates" //')"
  done
}

# The reference emulator first: ports of outgoing connections, many
# once lazuli instances connect to the database, cannot take its ports.
az_target=() az_cpu=()
if [ "${NO_AZURITE:-}" != 1 ]; then
  azurite=${AZURITE_BIN:-}
  if [ -z "$azurite" ]; then
    echo "== installing azurite with npm" >&2
    npm install --prefix "$scratch/npm" --no-audit --no-fund --loglevel=error azurite >&2
    azurite="$scratch/npm/node_modules/.bin/azurite"
  fi
  az=$((base + 50))
  az_flags=(--blobHost 127.0.0.1 --blobPort "$az" --queueHost 127.0.0.1 --queuePort "$((az + 1))"
    --tableHost 127.0.0.1 --tablePort "$((az + 2))" --location "$scratch/azurite-data" --skipApiVersionCheck --loose --silent)
  if "$azurite" --help 2>/dev/null | grep -q -- --disableTelemetry; then az_flags+=(--disableTelemetry); fi
  mkdir -p "$scratch/azurite-data"
  "$azurite" "${az_flags[@]}" >"$scratch/azurite.log" 2>&1 &
  az_pid=$!
  pids+=("$az_pid")
  for i in 0 1 2; do wait_port "$((az + i))" "$az_pid" azurite; done
  echo "== azurite $("$azurite" --version 2>/dev/null || echo '(version unknown)')" >&2
  h=http://127.0.0.1
  az_target=(--target "azurite=DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$key;BlobEndpoint=$h:$az/devstoreaccount1;QueueEndpoint=$h:$((az + 1))/devstoreaccount1;TableEndpoint=$h:$((az + 2))/devstoreaccount1;")
  az_cpu=(--cpu "azurite:azurite=$az_pid")
fi

start log $((base + 10)) --location "$scratch/log-data"
log_pid=$started_pid log_port=$started_port
start_pg

targets=(--target "pg1=$(conn "$pg1_port")"
  --target "pg3=$(conn "${pg3_ports[@]}")"
  --target "log=$(conn "$log_port")")
cpu=(--cpu "pg1:lazuli=$pg1_pid" --cpu "pg1:postgres=$pg_master"
  --cpu "pg3:lazuli=$(IFS=,; echo "${pg3_pids[*]}")" --cpu "pg3:postgres=$pg_master"
  --cpu "log:lazuli=$log_pid")

echo "== load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$scratch/lazuli-bench" "${targets[@]}" "${az_target[@]+"${az_target[@]}"}" "${cpu[@]}" "${az_cpu[@]+"${az_cpu[@]}"}" --preload-for log=200000 "$@"
echo
echo "PostgreSQL engine per instance (Updates, attempts run again, most attempts of one Update, time retries waited for their lane):"
stop_pg

echo
echo "== hot single-key compare-and-swap race, on fresh instances" >&2
start_pg
hot=()
for a in "$@"; do
  case "$a" in --workloads=*) ;; *) hot+=("$a") ;; esac
done
# Drop a "--workloads X" pair from the arguments: this pass names its own.
args=()
skip=0
for a in "${hot[@]+"${hot[@]}"}"; do
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  if [ "$a" = --workloads ]; then skip=1; continue; fi
  args+=("$a")
done
"$scratch/lazuli-bench" --target "pg1=$(conn "$pg1_port")" --target "pg3=$(conn "${pg3_ports[@]}")" \
  --cpu "pg1:lazuli=$pg1_pid" --cpu "pg1:postgres=$pg_master" \
  --cpu "pg3:lazuli=$(IFS=,; echo "${pg3_pids[*]}")" --cpu "pg3:postgres=$pg_master" \
  "${args[@]+"${args[@]}"}" --workloads blob-cas-hot
echo
echo "PostgreSQL engine per instance during the race (Updates, attempts run again, most attempts of one Update):"
stop_pg
