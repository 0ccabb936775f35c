-- Insert Entity of ~200 bytes, in one round trip: BEGIN; check that the
-- table's row holds what the instance last read and the new entity's row
-- is absent (the engine's hints); insert the entity's row; COMMIT.
\set h random(-4000000000000000000, 4000000000000000000)
\startpipeline
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT 1 / (count(*) = 2)::int FROM (VALUES (3::int8, convert_to('table', 'UTF8'), convert_to(repeat('t', 60), 'UTF8')::bytea), (:h::int8, convert_to(rpad('e/' || :h, 42, '.'), 'UTF8'), NULL::bytea)) AS x (h, k, v) WHERE (SELECT t.v FROM bench_kv AS t WHERE t.h = x.h AND t.k IS NOT DISTINCT FROM x.k) IS NOT DISTINCT FROM x.v;
INSERT INTO bench_kv (h, k, v) VALUES (:h, convert_to(rpad('e/' || :h, 42, '.'), 'UTF8'), convert_to(repeat('e', 183), 'UTF8'));
COMMIT;
\endpipeline
