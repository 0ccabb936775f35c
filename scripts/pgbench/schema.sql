-- The table the pgbench scripts beside this file write: the same shape,
-- keys, index and placeholder rows as lazuli's own
-- (internal/engine/pgstore/schema.go), apart from lazuli's so that
-- replaying its statements leaves its data alone.
-- Rows 1..4 stand for what every operation reads besides its own key (the
-- account, the container, the table, the queue); rows 1000+c are client
-- c's own blob, 8000+c its own leased blob, 2000+c its own message,
-- 7000+c its queue count shard. Each holds what the scripts check it
-- holds (as lazuli checks the values its engine's hints hold), and what
-- they write leaves it so.
DROP TABLE IF EXISTS bench_kv;
CREATE TABLE bench_kv (h BIGINT NOT NULL, k BYTEA NOT NULL, v BYTEA NOT NULL, PRIMARY KEY (h, k));
CREATE INDEX bench_kv_k ON bench_kv (k);
INSERT INTO bench_kv (h, k, v) VALUES
  (1, convert_to('account', 'UTF8'), convert_to(repeat('a', 120), 'UTF8')),
  (2, convert_to('container', 'UTF8'), convert_to(repeat('c', 130), 'UTF8')),
  (3, convert_to('table', 'UTF8'), convert_to(repeat('t', 60), 'UTF8')),
  (4, convert_to('queue', 'UTF8'), convert_to(repeat('q', 90), 'UTF8'));
INSERT INTO bench_kv (h, k, v)
  SELECT 1000 + c, convert_to(rpad('b/' || c, 48, '.'), 'UTF8'), convert_to(repeat('y', 1146), 'UTF8')
  FROM generate_series(0, 1023) AS c;
INSERT INTO bench_kv (h, k, v)
  SELECT 8000 + c * 9007199254740992, convert_to(rpad('l/' || c, 48, '.'), 'UTF8'), convert_to(repeat('x', 1170), 'UTF8')
  FROM generate_series(0, 1023) AS c;
INSERT INTO bench_kv (h, k, v)
  SELECT 2000 + c, convert_to(rpad('m/' || c, 48, '.'), 'UTF8'), convert_to(repeat('m', 160), 'UTF8')
  FROM generate_series(0, 1023) AS c;
INSERT INTO bench_kv (h, k, v)
  SELECT 7000 + c, convert_to(rpad('s/' || c, 26, '.'), 'UTF8'), '\x02'::bytea
  FROM generate_series(0, 1023) AS c;
-- lazuli's placeholder rows (schema version 2): 8,192 long keys spread
-- over the hash space keep the primary key's pages many however few rows
-- the table holds (internal/engine/pgstore/schema.go, placeholders).
INSERT INTO bench_kv (h, k, v)
  SELECT (i - 4096) * 2251799813685248 + 1125899906842624,
    '\xffffffffffffffff'::bytea || decode(lpad(to_hex(i), 8, '0') || repeat('00', 244), 'hex'), ''::bytea
  FROM generate_series(0, 8191) AS i;
ANALYZE bench_kv;
