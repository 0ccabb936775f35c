#!/usr/bin/env bash
# Compares lazuli with the reference emulator (npm package "azurite") on the
# same machine, in one run, with cmd/lazuli-bench.
#
# It installs azurite with npm into a scratch directory, starts it on
# loopback on non-default ports in its default disk mode with a temporary
# location, builds lazuli and starts it (its defaults: the log engine,
# durable with --sync; temporary --location) on other loopback ports, runs
# lazuli-bench against them — each workload on lazuli, then on the others —
# prints the side-by-side table with lazuli/other ops/s ratios, and stops
# the servers.
#
#   scripts/bench-vs-azurite.sh                                  # every Blob, Queue and Table workload, 10 s each
#   scripts/bench-vs-azurite.sh --duration 5s --warmup 1s        # shorter run
#   scripts/bench-vs-azurite.sh --workloads blob-put-1k,queue-put --concurrency 32
#   scripts/bench-vs-azurite.sh --json > results.json
#   scripts/bench-vs-azurite.sh --fazure /path/to/fazure --nosync   # also the peer and lazuli --sync=false
#
# Options of the script itself:
#   --fazure PATH  also run the Go peer emulator fazure (github.com/fgrzl/fazure,
#                  built by you from that repository) and measure it as target
#                  "fazure". It listens on the fixed ports 10000-10002, which must
#                  be free; its data goes to a temporary DATA_DIR. It checks no
#                  credentials, so the same signed requests serve.
#   --nosync       also run a second lazuli with --sync=false (target
#                  "lazuli-nosync"), to see what durability costs in the same run.
# lazuli itself runs in its default mode (durable: --sync). When it stops, the
# script prints its group-commit figures (fsyncs, Updates per fsync, fsync
# latency) from its log.
#
# Every other argument goes to lazuli-bench (see `go run ./cmd/lazuli-bench --help`).
# Unless one is given, --preload-for lazuli=200000 is added: lazuli receives
# and deletes thousands of messages a second, so it needs a deeper queue than
# the --preload minimum (30,000) to stay that deep until the run ends, while
# the reference emulator works through a few messages a second.
# Environment:
#   AZURITE_BIN        use this azurite executable instead of installing one
#   AZURITE_PORT_BASE  where to look for azurite's three free ports (default 20000)
#   LAZULI_PORT_BASE   where to look for lazuli's four free ports (default 21000)
#   KEEP_LOGS=1        keep the scratch directory (server logs) after the run
#
# Both servers and the benchmark client share the machine's CPUs, so note
# the load average the table header reports when reading the numbers.
set -euo pipefail
cd "$(dirname "$0")/.."

fazure=""
nosync=0
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --fazure) fazure=$2; shift 2 ;;
    --fazure=*) fazure=${1#--fazure=}; shift ;;
    --nosync) nosync=1; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
set -- "${args[@]+"${args[@]}"}"
if [ -n "$fazure" ] && [ ! -x "$fazure" ]; then
  echo "--fazure: $fazure is not an executable" >&2
  exit 2
fi

key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

scratch=$(mktemp -d "${TMPDIR:-/tmp}/lazuli-bench.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [ "${KEEP_LOGS:-}" = 1 ]; then
    echo "logs kept in $scratch" >&2
  else
    rm -rf "$scratch"
  fi
}
trap cleanup EXIT

# wait_port HOST PORT PID NAME: wait until something accepts connections on
# HOST:PORT (HOST is always 127.0.0.1 here), failing early if PID has exited.
wait_port() {
  for _ in $(seq 1 300); do
    if port_busy "$2"; then
      return 0
    fi
    if ! kill -0 "$3" 2>/dev/null; then
      echo "$4 exited before listening on $1:$2; its log:" >&2
      cat "$scratch/$4.log" >&2 || true
      exit 1
    fi
    sleep 0.2
  done
  echo "$4 is not listening on $1:$2 after 60 s" >&2
  exit 1
}

# port_busy PORT: whether something accepts connections on 127.0.0.1:PORT.
port_busy() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# free_ports BASE N: the first port p >= BASE, in steps of 10, such that
# p .. p+N-1 are all free, so that a server already running on this
# machine is never mistaken for the one this script starts.
free_ports() {
  local p=$1 i busy
  for _ in $(seq 1 200); do
    busy=0
    for ((i = 0; i < $2; i++)); do
      if port_busy $((p + i)); then busy=1; break; fi
    done
    if [ "$busy" = 0 ]; then echo "$p"; return 0; fi
    p=$((p + 10))
  done
  echo "no $2 free ports from $1" >&2
  exit 1
}

# conn PORT_BASE: a connection string for three consecutive ports.
conn() {
  local h=http://127.0.0.1
  echo "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$key;BlobEndpoint=$h:$1/devstoreaccount1;QueueEndpoint=$h:$(($1 + 1))/devstoreaccount1;TableEndpoint=$h:$(($1 + 2))/devstoreaccount1;"
}

azurite=${AZURITE_BIN:-}
if [ -z "$azurite" ]; then
  echo "== installing azurite with npm" >&2
  npm install --prefix "$scratch/npm" --no-audit --no-fund --loglevel=error azurite >&2
  azurite="$scratch/npm/node_modules/.bin/azurite"
fi
echo "== azurite $("$azurite" --version 2>/dev/null || echo '(version unknown)')" >&2

echo "== building lazuli and lazuli-bench" >&2
go build -o "$scratch/lazuli" ./cmd/lazuli
go build -o "$scratch/lazuli-bench" ./cmd/lazuli-bench

az_base=$(free_ports "${AZURITE_PORT_BASE:-20000}" 3)
lz_base=$(free_ports "${LAZULI_PORT_BASE:-21000}" 4)
if [ "$lz_base" -lt $((az_base + 3)) ] && [ "$az_base" -lt $((lz_base + 4)) ]; then
  lz_base=$(free_ports $((az_base + 10)) 4)
fi

az_flags=(--blobHost 127.0.0.1 --blobPort "$az_base"
  --queueHost 127.0.0.1 --queuePort "$((az_base + 1))"
  --tableHost 127.0.0.1 --tablePort "$((az_base + 2))"
  --location "$scratch/azurite-data" --skipApiVersionCheck --loose --silent)
# Recent versions report telemetry unless told not to.
if "$azurite" --help 2>/dev/null | grep -q -- --disableTelemetry; then
  az_flags+=(--disableTelemetry)
fi
mkdir -p "$scratch/azurite-data"
"$azurite" "${az_flags[@]}" >"$scratch/azurite.log" 2>&1 &
pids+=($!)
az_pid=$!

"$scratch/lazuli" --blobHost 127.0.0.1 --blobPort "$lz_base" \
  --queueHost 127.0.0.1 --queuePort "$((lz_base + 1))" \
  --tableHost 127.0.0.1 --tablePort "$((lz_base + 2))" \
  --fileHost 127.0.0.1 --filePort "$((lz_base + 3))" --smbPort -1 --adminPort -1 \
  --location "$scratch/lazuli-data" --silent >"$scratch/lazuli.log" 2>&1 &
pids+=($!)
lz_pid=$!

targets=(--target "lazuli=$(conn "$lz_base")")
if [ "$nosync" = 1 ]; then
  ns_base=$(free_ports $((lz_base + 10)) 4)
  "$scratch/lazuli" --blobHost 127.0.0.1 --blobPort "$ns_base" \
    --queueHost 127.0.0.1 --queuePort "$((ns_base + 1))" \
    --tableHost 127.0.0.1 --tablePort "$((ns_base + 2))" \
    --fileHost 127.0.0.1 --filePort "$((ns_base + 3))" --smbPort -1 --adminPort -1 \
    --location "$scratch/lazuli-nosync-data" --sync=false --silent >"$scratch/lazuli-nosync.log" 2>&1 &
  pids+=($!)
  ns_pid=$!
  targets+=(--target "lazuli-nosync=$(conn "$ns_base")")
fi
if [ -n "$fazure" ]; then
  for p in 10000 10001 10002; do
    if port_busy "$p"; then
      echo "port $p is in use; fazure needs 10000-10002" >&2
      exit 1
    fi
  done
  mkdir -p "$scratch/fazure-data"
  DATA_DIR="$scratch/fazure-data" LOG_LEVEL=error "$fazure" >"$scratch/fazure.log" 2>&1 &
  pids+=($!)
  fz_pid=$!
  targets+=(--target "fazure=$(conn 10000)")
fi
targets+=(--target "azurite=$(conn "$az_base")")

for i in 0 1 2; do
  wait_port 127.0.0.1 "$((az_base + i))" "$az_pid" azurite
  wait_port 127.0.0.1 "$((lz_base + i))" "$lz_pid" lazuli
  if [ "$nosync" = 1 ]; then wait_port 127.0.0.1 "$((ns_base + i))" "$ns_pid" lazuli-nosync; fi
  if [ -n "$fazure" ]; then wait_port 127.0.0.1 "$((10000 + i))" "$fz_pid" fazure; fi
done
sleep 0.5
for p in "${pids[@]}"; do
  if ! kill -0 "$p" 2>/dev/null; then
    echo "a server exited right after starting; logs:" >&2
    cat "$scratch"/*.log >&2 || true
    exit 1
  fi
done
echo "== azurite on 127.0.0.1:$az_base-$((az_base + 2)), lazuli on 127.0.0.1:$lz_base-$((lz_base + 3))" >&2

echo "== load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)" >&2
extra=(--preload-for lazuli=200000)
if [ "$nosync" = 1 ]; then extra+=(--preload-for lazuli-nosync=200000); fi
if [ -n "$fazure" ]; then extra+=(--preload-for fazure=100000); fi
# The peers have no File service: unless told otherwise, measure the
# workloads they serve (lazuli-bench alone compares File with Blob).
workloads=(--workloads blob-put-1k,blob-get-1k,blob-put-ifmatch,blob-lease,blob-upload-64m,table-insert,table-replace-ifmatch,table-query-partition,queue-put,queue-receive-delete,trivial)
for a in "$@"; do
  case "$a" in
    --preload-for|--preload-for=*) extra=() ;;
    --workloads|--workloads=*) workloads=() ;;
  esac
done
extra+=("${workloads[@]+"${workloads[@]}"}")
"$scratch/lazuli-bench" "${targets[@]}" "${extra[@]+"${extra[@]}"}" "$@"

# lazuli logs its group commit's figures when it stops.
kill -TERM "$lz_pid" 2>/dev/null || true
wait "$lz_pid" 2>/dev/null || true
grep -h "group commit" "$scratch/lazuli.log" >&2 || true
