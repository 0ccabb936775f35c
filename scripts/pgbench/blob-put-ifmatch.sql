-- Put Blob with If-Match on the client's own blob, in one round trip:
-- BEGIN; check that the blob's row holds what the client's previous put
-- left, the staging record's row is absent, the container's row holds
-- what the instance last read and the account's delete retention
-- policy's row is absent (the engine's hints); update the blob's row (a
-- row count of zero divides by zero: the engine's check that it
-- existed); COMMIT.
\startpipeline
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT 1 / (count(*) = 4)::int FROM (VALUES ((1000 + :client_id)::int8, convert_to(rpad('b/' || :client_id, 48, '.'), 'UTF8'), convert_to(repeat('y', 1146), 'UTF8')::bytea), ((-3000000000000000000 + :client_id * 377000000000000000)::int8, convert_to(rpad('s/' || :client_id, 48, '.'), 'UTF8'), NULL::bytea), (2::int8, convert_to('container', 'UTF8'), convert_to(repeat('c', 130), 'UTF8')::bytea), (3141592653589793238::int8, convert_to('policy', 'UTF8'), NULL::bytea)) AS x (h, k, v) WHERE (SELECT t.v FROM bench_kv AS t WHERE t.h = x.h AND t.k IS NOT DISTINCT FROM x.k) IS NOT DISTINCT FROM x.v;
WITH u AS (UPDATE bench_kv SET v = convert_to(repeat('y', 1146), 'UTF8') WHERE h = 1000 + :client_id AND k IS NOT DISTINCT FROM convert_to(rpad('b/' || :client_id, 48, '.'), 'UTF8') RETURNING 1) SELECT 1 / count(*) FROM u;
COMMIT;
\endpipeline
