# Shell functions the benchmark scripts share; source it after setting
# scratch (the scratch directory) and pids=() in a script run with
# `set -euo pipefail` from the repository's root.
#
#   cleanup        stop every process in pids and the PostgreSQL server,
#                  remove scratch unless KEEP_LOGS=1 (install with trap)
#   port_busy P    whether something accepts connections on 127.0.0.1:P
#   start_postgres PORT   a throw-away PostgreSQL on PORT; sets pgbin,
#                  pg_pid, pg_master, pg_port
#   start NAME PORT ARGS...   a lazuli on four free ports from PORT; sets
#                  started_pid, started_port
#   conn PORT...   a connection string for the instances on PORT..PORT+3

# The development account's key, as every lazuli starts with.
key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
pg_pid=""
pg_master=""

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "$pg_pid" ]; then
    # A fast shutdown, sent to the postmaster itself (runuser, when root
    # started it through that, does not pass signals on).
    kill -INT "${pg_master:-$pg_pid}" 2>/dev/null || true
    wait "$pg_pid" 2>/dev/null || true
  fi
  if [ "${KEEP_LOGS:-}" = 1 ]; then
    echo "logs kept in $scratch" >&2
  else
    rm -rf "$scratch"
  fi
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start_postgres PORT: initdb into $scratch/pg (as the "postgres" user when
# run as root) and start PostgreSQL on 127.0.0.1:PORT with its default
# durability (fsync, synchronous_commit), max_connections 200 and
# max_pred_locks_per_transaction 256 as the README advises. POSTGRES_BIN
# names the directory of its programs (default: the newest
# /usr/lib/postgresql/*/bin, else the PATH).
start_postgres() {
  pg_port=$1
  pgbin=${POSTGRES_BIN:-}
  if [ -z "$pgbin" ]; then
    pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    [ -n "$pgbin" ] || pgbin=$(dirname "$(command -v postgres)")
  fi
  local run_pg=()
  mkdir -p "$scratch/pg"
  if [ "$(id -u)" = 0 ]; then
    run_pg=(runuser -u postgres --)
    chown postgres: "$scratch/pg"
  fi
  echo "== PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') on 127.0.0.1:$pg_port" >&2
  "${run_pg[@]}" "$pgbin/initdb" -D "$scratch/pg/data" -U postgres --auth=trust -E UTF8 --locale=C >"$scratch/initdb.log" 2>&1 ||
    { cat "$scratch/initdb.log" >&2; exit 1; }
  "${run_pg[@]}" "$pgbin/postgres" -D "$scratch/pg/data" -p "$pg_port" -c listen_addresses=127.0.0.1 \
    -c unix_socket_directories="$scratch/pg" -c max_connections=200 -c shared_buffers=128MB \
    -c max_pred_locks_per_transaction=256 >"$scratch/postgres.log" 2>&1 &
  pg_pid=$!
  local ok=0
  for _ in $(seq 1 300); do
    if "$pgbin/psql" -q -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -c "SELECT 1" >/dev/null 2>&1; then ok=1; break; fi
    if ! kill -0 "$pg_pid" 2>/dev/null; then break; fi
    sleep 0.2
  done
  if [ "$ok" != 1 ]; then
    echo "PostgreSQL did not start; its log:" >&2
    cat "$scratch/postgres.log" >&2
    exit 1
  fi
  # The postmaster: runuser's child when run as root.
  pg_master=$(head -n 1 "$scratch/pg/data/postmaster.pid")
}

# start NAME FIRST_PORT ARGS...: a lazuli on FIRST_PORT..FIRST_PORT+3 (its
# admin listener, for /metrics, on FIRST_PORT+4), or,
# when one of those is taken meanwhile (the ephemeral port of an outgoing
# connection, such as one to the database, may land in the range), on the
# next free block of ten upwards; its log is $scratch/NAME.log.
start() {
  local name=$1 p=$2 try
  shift 2
  for try in 1 2 3 4 5; do
    while port_busy "$p" || port_busy $((p + 1)) || port_busy $((p + 2)) || port_busy $((p + 3)) || port_busy $((p + 4)); do p=$((p + 10)); done
    "$scratch/lazuli" --blobHost 127.0.0.1 --blobPort "$p" --queueHost 127.0.0.1 --queuePort "$((p + 1))" \
      --tableHost 127.0.0.1 --tablePort "$((p + 2))" --fileHost 127.0.0.1 --filePort "$((p + 3))" --smbPort -1 \
      --adminHost 127.0.0.1 --adminPort "$((p + 4))" \
      --silent "$@" >"$scratch/$name.log" 2>&1 &
    started_pid=$!
    started_port=$p
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

# conn PORT...: a connection string whose endpoints list the blob,
# queue, table and file ports of each instance whose first port is given
# (consecutive ports per instance); lazuli-bench spreads its connections
# over the instances of an endpoint.
conn() {
  local s="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$key" svc i p urls
  local -a names=(BlobEndpoint QueueEndpoint TableEndpoint FileEndpoint)
  for i in 0 1 2 3; do
    urls=""
    for p in "$@"; do urls+="${urls:+,}http://127.0.0.1:$((p + i))/devstoreaccount1"; done
    svc=${names[$i]}
    s+=";$svc=$urls"
  done
  echo "$s"
}
