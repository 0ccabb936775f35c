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
#     the same build with --sync=false, beside the limit the disk sets:
#     nosync+fsync, the --sync=false server's workload with each durable
#     request's record group-committed to a file on the same file system;
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

base=${BENCH_PORT_BASE:-26000}
maxconns=${PG_MAX_CONNS:-16}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/lazuli-limits.XXXXXX")
chmod 755 "$scratch"
pids=()
. scripts/bench-lib.sh
trap cleanup EXIT

if port_busy "$base"; then
  echo "port $base is in use; choose another BENCH_PORT_BASE" >&2
  exit 1
fi

echo "== building lazuli and lazuli-bench" >&2
go build -o "$scratch/lazuli" ./cmd/lazuli
go build -o "$scratch/lazuli-bench" ./cmd/lazuli-bench

start_postgres "$base"
"$pgbin/psql" -q -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -c "CREATE DATABASE lazuli" >&2
# The pgbench scripts' own table, beside lazuli's in the same database.
"$pgbin/psql" -q -h 127.0.0.1 -p "$pg_port" -U postgres -d lazuli -v ON_ERROR_STOP=1 \
  -f scripts/pgbench/schema.sql >"$scratch/schema.log" 2>&1 || { cat "$scratch/schema.log" >&2; exit 1; }

start lazuli $((base + 10)) --location "$scratch/durable"
durable_pid=$started_pid durable_port=$started_port
start lazuli-nosync $((started_port + 10)) --location "$scratch/nosync" --sync=false
nosync_pid=$started_pid nosync_port=$started_port
start pg1 $((started_port + 10)) --engine postgres \
  --postgres "postgres://postgres@127.0.0.1:$pg_port/lazuli?sslmode=disable" --postgresMaxConns "$maxconns"
pg1_pid=$started_pid pg1_port=$started_port

scripts=()
pg_workloads=""
for f in scripts/pgbench/*.sql; do
  w=$(basename "$f" .sql)
  [ "$w" = schema ] && continue
  scripts+=(--pgbench-script "$w=$f")
  pg_workloads+="${pg_workloads:+,}$w"
done

echo "== disk: $(df -h "$scratch" | awk 'NR == 2 {print $1 " (" $2 ") mounted on " $6}'); load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$scratch/lazuli-bench" --goals --rounds 3 --disk-dir "$scratch" \
  --target "lazuli=$(conn "$durable_port")" --target "lazuli-nosync=$(conn "$nosync_port")" --target "pg1=$(conn "$pg1_port")" \
  --pgbench-bin "$pgbin/pgbench" --pgbench-db "host=127.0.0.1 port=$pg_port user=postgres dbname=lazuli sslmode=disable" \
  "${scripts[@]}" \
  --cpu "lazuli:lazuli=$durable_pid" --cpu "lazuli-nosync:lazuli=$nosync_pid" \
  --cpu "pg1:lazuli=$pg1_pid" --cpu "pg1:postgres=$pg_master" --cpu "pgbench:postgres=$pg_master" \
  --engine-stats "lazuli=http://127.0.0.1:$((durable_port + 4))/metrics" \
  --engine-stats "pg1=http://127.0.0.1:$((pg1_port + 4))/metrics" "$@"

# The PostgreSQL goal again with PostgreSQL on a CPU of its own, as on a
# database server of its own: its processes (those it starts later
# inherit it) on CPU 0, the lazuli instance and the load generator (its
# clients, or the pgbench it runs) on CPU 1. On two CPUs shared by all,
# the first pass weighs lazuli's and its clients' CPU against pgbench's;
# this one asks whether lazuli keeps PostgreSQL as busy as its replay
# does.
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null 2>&1; then
  pin() {
    taskset -a -p -c "$1" "$2" >/dev/null 2>&1 || true
    local c
    for c in $(pgrep -P "$2" || true); do pin "$1" "$c"; done
  }
  pin 0 "$pg_master"
  pin 1 "$pg1_pid"
  echo "== PostgreSQL pinned to CPU 0, pg1 and the load generator to CPU 1" >&2
  taskset -c 1 "$scratch/lazuli-bench" --goals --rounds 3 --workloads "$pg_workloads" \
    --target "pg1=$(conn "$pg1_port")" \
    --pgbench-bin "$pgbin/pgbench" --pgbench-db "host=127.0.0.1 port=$pg_port user=postgres dbname=lazuli sslmode=disable" \
    "${scripts[@]}" \
    --cpu "pg1:lazuli=$pg1_pid" --cpu "pg1:postgres=$pg_master" --cpu "pgbench:postgres=$pg_master" \
    --engine-stats "pg1=http://127.0.0.1:$((pg1_port + 4))/metrics" "$@"
  pin 0-$(($(nproc) - 1)) "$pg_master"
  pin 0-$(($(nproc) - 1)) "$pg1_pid"
fi

# lazuli logs its group commit's figures when it stops.
kill -TERM "$durable_pid" 2>/dev/null || true
wait "$durable_pid" 2>/dev/null || true
grep -h "group commit" "$scratch/lazuli.log" >&2 || true
