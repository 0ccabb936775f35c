#!/usr/bin/env bash
# statements.sh CONNINFO COMMAND...: what PostgreSQL did per statement and
# per transaction while COMMAND ran (lazuli-bench on lazuli, or a pgbench
# replay), to check that a script replays what lazuli sends: calls, plans,
# planning and execution time, rows, shared buffers hit/read/dirtied, WAL
# records and bytes per call of each statement, then the database's
# commits, rollbacks and rows, and WAL per commit.
#
# The server must load pg_stat_statements (shared_preload_libraries =
# pg_stat_statements; pg_stat_statements.track_planning = on for the plan
# columns); the script creates the extension in CONNINFO's database. The
# counters are reset before COMMAND, so run one workload at a time, on a
# database nothing else writes.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 CONNINFO COMMAND..." >&2
  exit 2
fi
db=$1
shift
psql=${PSQL:-psql}
q() { "$psql" -X -q "$db" -v ON_ERROR_STOP=1 "$@"; }

q -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null
q -Atc "SELECT pg_stat_statements_reset()" -c "SELECT pg_stat_reset()" -c "SELECT pg_stat_reset_shared('wal')" >/dev/null
"$@"
q -c "SELECT calls, plans, round(total_plan_time::numeric / greatest(plans, 1) * 1000, 1) AS plan_us,
    round(total_exec_time::numeric / calls * 1000, 1) AS exec_us, round(rows::numeric / calls, 2) AS rows,
    round(shared_blks_hit::numeric / calls, 1) AS hit, round(shared_blks_read::numeric / calls, 2) AS read,
    round(shared_blks_dirtied::numeric / calls, 2) AS dirtied, round(wal_records::numeric / calls, 2) AS wal_recs,
    round(wal_bytes::numeric / calls) AS wal_bytes, left(regexp_replace(query, '\s+', ' ', 'g'), 100) AS statement
  FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND calls >= 100 ORDER BY calls DESC, total_exec_time DESC LIMIT 20"
q -c "SELECT d.xact_commit AS commits, d.xact_rollback AS rollbacks, d.tup_inserted AS inserted,
    d.tup_updated AS updated, d.tup_deleted AS deleted, d.tup_fetched AS fetched,
    round(w.wal_records::numeric / greatest(d.xact_commit, 1), 2) AS wal_recs_per_commit,
    round(w.wal_bytes::numeric / greatest(d.xact_commit, 1)) AS wal_bytes_per_commit, w.wal_write, w.wal_sync
  FROM pg_stat_database AS d, pg_stat_wal AS w WHERE d.datname = current_database()"
