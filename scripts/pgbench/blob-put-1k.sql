-- Put Blob of a new 1 KiB blob, as lazuli's PostgreSQL engine sends it,
-- in one round trip: BEGIN; check that the blob's and its staging
-- record's rows are absent, the container's row holds what the instance
-- last read and the account's delete retention policy's row is absent
-- (the engine's hints); insert the blob's row (its 1 KiB inline); COMMIT.
\set h random(-4000000000000000000, 4000000000000000000)
\set s random(-4000000000000000000, 4000000000000000000)
\startpipeline
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT 1 / (count(*) = 4)::int FROM (VALUES (:h::int8, convert_to(rpad('b/' || :h, 48, '.'), 'UTF8'), NULL::bytea), (:s::int8, convert_to(rpad('s/' || :s, 48, '.'), 'UTF8'), NULL::bytea), (2::int8, convert_to('container', 'UTF8'), convert_to(repeat('c', 130), 'UTF8')::bytea), (3141592653589793238::int8, convert_to('policy', 'UTF8'), NULL::bytea)) AS x (h, k, v) WHERE (SELECT t.v FROM bench_kv AS t WHERE t.h = x.h AND t.k IS NOT DISTINCT FROM x.k) IS NOT DISTINCT FROM x.v;
INSERT INTO bench_kv (h, k, v) VALUES (:h, convert_to(rpad('b/' || :h, 48, '.'), 'UTF8'), convert_to(repeat('x', 1148), 'UTF8'));
COMMIT;
\endpipeline
