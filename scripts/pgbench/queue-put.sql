-- Put Message of ~100 bytes, in one round trip: BEGIN; check that the
-- queue's row and the client's count shard (row 7000+c: lazuli reserves a
-- shard no concurrent put of its instance uses) hold what the instance
-- last read or wrote (the engine's hints); insert three rows in one
-- statement (the message, its place in the visibility and expiry
-- orders); rewrite the shard; COMMIT.
\set h1 random(-4000000000000000000, 4000000000000000000)
\set h2 random(-4000000000000000000, 4000000000000000000)
\set h3 random(-4000000000000000000, 4000000000000000000)
\startpipeline
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT 1 / (count(*) = 2)::int FROM (VALUES (4::int8, convert_to('queue', 'UTF8'), convert_to(repeat('q', 90), 'UTF8')::bytea), ((7000 + :client_id)::int8, convert_to(rpad('s/' || :client_id, 26, '.'), 'UTF8'), '\x02'::bytea)) AS x (h, k, v) WHERE (SELECT t.v FROM bench_kv AS t WHERE t.h = x.h AND t.k IS NOT DISTINCT FROM x.k) IS NOT DISTINCT FROM x.v;
INSERT INTO bench_kv (h, k, v) VALUES
  (:h1, convert_to(rpad('m/' || :h1, 37, '.'), 'UTF8'), convert_to(repeat('m', 160), 'UTF8')),
  (:h2, convert_to(rpad('v/' || :h2, 42, '.'), 'UTF8'), ''::bytea),
  (:h3, convert_to(rpad('x/' || :h3, 42, '.'), 'UTF8'), ''::bytea);
WITH u AS (UPDATE bench_kv SET v = '\x02'::bytea WHERE h = 7000 + :client_id AND k IS NOT DISTINCT FROM convert_to(rpad('s/' || :client_id, 26, '.'), 'UTF8') RETURNING 1) SELECT 1 / count(*) FROM u;
COMMIT;
\endpipeline
