#!/usr/bin/env bash
# Measures lazuli against the limits this machine sets, in one run of
# cmd/lazuli-bench --goals, and prints every speed goal's figure beside its
# limit or anchor, the ratio, the ratio wanted and whether it is met:
#
#   - the disk: disk-write-64m writes 64 MiB files with fdatasync (as
#     dd conv=fdatasync), as many streams as upload clients, on the file
#     system of the servers' data directories; blob-upload-64m and
#     file-upload-64m of lazuli (durable) over it;
#   - one shared fsync: every small write workload of lazuli (durable) over
#     the same build with --sync=false;
#   - PostgreSQL: the pgbench scripts in scripts/pgbench replay the
#     statements one lazuli operation sends, on the same database as a
#     lazuli instance on PostgreSQL, whose workloads go over them;
#   - equal work: file-upload-64m over blob-upload-64m-md5 (Content-MD5 on
#     every block), file-put-1k over blob-put-setmeta-1k.
#
# Every workload runs on every target in each of --rounds rounds (default
# 3), the targets' order reversed every other round; figures are medians.
#
#   scripts/bench-limits.sh                              # 3 rounds of 10 s per workload and target
#   scripts/bench-limits.sh --rounds 5 --duration 20s    # a longer final run
#   scripts/bench-limits.sh --duration 2s --warmup 1s --rounds 1 --settle=false   # a quick check
#   scripts/bench-limits.sh --json > limits.json
#
# Every argument goes to lazuli-bench (see `go run ./cmd/lazuli-bench --help`).
# PostgreSQL is a throw-away server (initdb into the scratch directory, as
# the "postgres" user when run as root; fsync and synchronous_commit on).
# Linux only (/proc, fdatasync).
# Environment:
#   BENCH_PORT_BASE   PostgreSQL listens here, lazuli instances on free blocks of
#                     four from +10 (default 26000)
#   POSTGRES_BIN      directory of initdb, postgres and pgbench (default: the newest
#                     /usr/lib/postgresql/*/bin)
#   PG_MAX_CONNS      --postgresMaxConns of the lazuli instance on PostgreSQL (default 16)
#   TMPDIR            where the scratch directory (data directories, the disk's
#                     test files) goes: the file system measured
#   KEEP_LOGS=1       keep the scratch directory (server logs) after the run
set -euo pipefail
cd "$(dirname "$0")/.."

key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
base=${BENCH_PORT_BASE:-26000}
maxconns=${PG_MAX_CONNS:-16}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/lazuli-limits.XXXXXX")
chmod 755 "$scratch"
pids=()
pg_pid=""
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "$pg_pid" ]; then
    # A fast shutdown, sent to the postmaster itself (runuser does not
    # pass signals on).
    kill -INT "${pg_master:-$pg_pid}" 2>/dev/null || true
    wait "$pg_pid" 2>/dev/null || true
  fi
  if [ "${KEEP_LOGS:-}" = 1 ]; then
    echo "logs kept in $scratch" >&2
  else
    rm -rf "$scratch"
  fi
}
trap cleanup EXIT

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if port_busy "$base"; then
  echo "port $base is in use; choose another BENCH_PORT_BASE" >&2
  exit 1
fi

# conn PORT: a connection string for the blob, queue, table and file
# endpoints on PORT..PORT+3.
conn() {
  local h=http://127.0.0.1
  echo "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$key;BlobEndpoint=$h:$1/devstoreaccount1;QueueEndpoint=$h:$(($1 + 1))/devstoreaccount1;TableEndpoint=$h:$(($1 + 2))/devstoreaccount1;FileEndpoint=$h:$(($1 + 3))/devstoreaccount1"
}

echo "== building lazuli and lazuli-bench" >&2
go build -o "$scratch/lazuli" ./cmd/lazuli
go build -o "$scratch/lazuli-bench" ./cmd/lazuli-bench

pgbin=${POSTGRES_BIN:-}
if [ -z "$pgbin" ]; then
  pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$pgbin" ] || pgbin=$(dirname "$(command -v postgres)")
fi
run_pg=()
mkdir -p "$scratch/pg"
if [ "$(id -u)" = 0 ]; then
  run_pg=(runuser -u postgres --)
  chown postgres: "$scratch/pg"
fi
pg_port=$base
echo "== PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') on 127.0.0.1:$pg_port" >&2
"${run_pg[@]}" "$pgbin/initdb" -D "$scratch/pg/data" -U postgres --auth=trust -E UTF8 --locale=C >"$scratch/initdb.log" 2>&1 ||
  { cat "$scratch/initdb.log" >&2; exit 1; }
"${run_pg[@]}" "$pgbin/postgres" -D "$scratch/pg/data" -p "$pg_port" -c listen_addresses=127.0.0.1 \
  -c unix_socket_directories="$scratch/pg" -c max_connections=200 -c shared_buffers=128MB \
  -c max_pred_locks_per_transaction=256 >"$scratch/postgres.log" 2>&1 &
pg_pid=$!
for _ in $(seq 1 150); do
  "$pgbin/psql" -q -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -c "SELECT 1" >/dev/null 2>&1 && break
  if ! kill -0 "$pg_pid" 2>/dev/null; then cat "$scratch/postgres.log" >&2; exit 1; fi
  sleep 0.2
done
pg_master=$(head -n 1 "$scratch/pg/data/postmaster.pid")
"$pgbin/psql" -q -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -c "CREATE DATABASE lazuli" >&2
# The pgbench scripts' own table, beside lazuli's in the same database.
"$pgbin/psql" -q -h 127.0.0.1 -p "$pg_port" -U postgres -d lazuli -v ON_ERROR_STOP=1 \
  -f scripts/pgbench/schema.sql >"$scratch/schema.log" 2>&1 || { cat "$scratch/schema.log" >&2; exit 1; }

# start NAME FIRST_PORT ARGS...: a lazuli on the first free block of four
# ports from FIRST_PORT (in steps of ten); sets started_pid, started_port.
start() {
  local name=$1 p=$2 try
  shift 2
  for try in 1 2 3 4 5; do
    while port_busy "$p" || port_busy $((p + 1)) || port_busy $((p + 2)) || port_busy $((p + 3)); do p=$((p + 10)); done
    "$scratch/lazuli" --blobHost 127.0.0.1 --blobPort "$p" --queueHost 127.0.0.1 --queuePort "$((p + 1))" \
      --tableHost 127.0.0.1 --tablePort "$((p + 2))" --fileHost 127.0.0.1 --filePort "$((p + 3))" --smbPort -1 --adminPort -1 \
      --silent "$@" >"$scratch/$name.log" 2>&1 &
    started_pid=$! started_port=$p
    for _ in $(seq 1 300); do
      if grep -q '^lazuli: blob' "$scratch/$name.log" || ! kill -0 "$started_pid" 2>/dev/null; then break; fi
      sleep 0.2
    done
    if grep -q '^lazuli: blob' "$scratch/$name.log"; then
      pids+=("$started_pid")
      return 0
    fi
    wait "$started_pid" 2>/dev/null || true
    grep -q "already in use" "$scratch/$name.log" || break
    p=$((p + 10))
  done
  echo "$name did not start; its log:" >&2
  cat "$scratch/$name.log" >&2
  exit 1
}

start lazuli $((base + 10)) --location "$scratch/durable"
durable_pid=$started_pid durable_port=$started_port
start lazuli-nosync $((started_port + 10)) --location "$scratch/nosync" --sync=false
nosync_pid=$started_pid nosync_port=$started_port
start pg1 $((started_port + 10)) --engine postgres \
  --postgres "postgres://postgres@127.0.0.1:$pg_port/lazuli?sslmode=disable" --postgresMaxConns "$maxconns"
pg1_pid=$started_pid pg1_port=$started_port

scripts=()
for f in scripts/pgbench/*.sql; do
  w=$(basename "$f" .sql)
  [ "$w" = schema ] || scripts+=(--pgbench-script "$w=$f")
done

echo "== disk: $(df -h "$scratch" | awk 'NR == 2 {print $1 " (" $2 ") mounted on " $6}'); load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$scratch/lazuli-bench" --goals --rounds 3 --disk-dir "$scratch" \
  --target "lazuli=$(conn "$durable_port")" --target "lazuli-nosync=$(conn "$nosync_port")" --target "pg1=$(conn "$pg1_port")" \
  --pgbench-bin "$pgbin/pgbench" --pgbench-db "host=127.0.0.1 port=$pg_port user=postgres dbname=lazuli sslmode=disable" \
  "${scripts[@]}" \
  --cpu "lazuli:lazuli=$durable_pid" --cpu "lazuli-nosync:lazuli=$nosync_pid" \
  --cpu "pg1:lazuli=$pg1_pid" --cpu "pg1:postgres=$pg_master" --cpu "pgbench:postgres=$pg_master" "$@"

# lazuli logs its group commit's figures when it stops.
kill -TERM "$durable_pid" 2>/dev/null || true
wait "$durable_pid" 2>/dev/null || true
grep -h "group commit" "$scratch/lazuli.log" >&2 || true
