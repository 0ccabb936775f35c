-- Get Messages (1) then Delete Message, the client on its own message
-- (row 2000+c) so that clients meet only where lazuli's do, on the
-- queue's row. Receive, two round trips: BEGIN, check that the queue's
-- row holds what the instance last read (the engine's hints) and scan
-- the visibility order for the first visible message; then check the
-- message's row likewise, update it, insert its new place in the
-- visibility order, delete the old one, COMMIT. Delete, one round trip:
-- BEGIN; check the message's, its visibility entry's and the queue's
-- rows; insert the queue's new sequence row; delete three rows; COMMIT.
\startpipeline
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT 1 / ((SELECT v FROM bench_kv WHERE h = 4 AND k IS NOT DISTINCT FROM convert_to('queue', 'UTF8')) IS NOT DISTINCT FROM convert_to(repeat('q', 90), 'UTF8'))::int;
SELECT k, v FROM bench_kv WHERE k >= convert_to('v/' || :client_id || '/', 'UTF8') AND k < convert_to('v/' || :client_id || '0', 'UTF8') ORDER BY k LIMIT 32;
\endpipeline
\startpipeline
SELECT 1 / ((SELECT v FROM bench_kv WHERE h = 2000 + :client_id AND k IS NOT DISTINCT FROM convert_to(rpad('m/' || :client_id, 48, '.'), 'UTF8')) IS NOT DISTINCT FROM convert_to(repeat('m', 160), 'UTF8'))::int;
WITH u AS (UPDATE bench_kv SET v = convert_to(repeat('m', 160), 'UTF8') WHERE h = 2000 + :client_id AND k IS NOT DISTINCT FROM convert_to(rpad('m/' || :client_id, 48, '.'), 'UTF8') RETURNING 1) SELECT 1 / count(*) FROM u;
INSERT INTO bench_kv (h, k, v) VALUES (3000 + :client_id, convert_to('v/' || :client_id || '/a', 'UTF8'), ''::bytea) ON CONFLICT (h, k) DO UPDATE SET v = excluded.v;
DELETE FROM bench_kv AS t USING unnest(ARRAY[4000 + :client_id]::int8[], ARRAY[convert_to('v/' || :client_id || '/b', 'UTF8')]::bytea[]) AS x (h, k) WHERE t.h = x.h AND t.k IS NOT DISTINCT FROM x.k;
COMMIT;
\endpipeline
\startpipeline
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT 1 / (count(*) = 3)::int FROM (VALUES ((2000 + :client_id)::int8, convert_to(rpad('m/' || :client_id, 48, '.'), 'UTF8'), convert_to(repeat('m', 160), 'UTF8')::bytea), ((3000 + :client_id)::int8, convert_to('v/' || :client_id || '/a', 'UTF8'), ''::bytea), (4::int8, convert_to('queue', 'UTF8'), convert_to(repeat('q', 90), 'UTF8')::bytea)) AS x (h, k, v) WHERE (SELECT t.v FROM bench_kv AS t WHERE t.h = x.h AND t.k IS NOT DISTINCT FROM x.k) IS NOT DISTINCT FROM x.v;
INSERT INTO bench_kv (h, k, v) VALUES (4000 + :client_id, convert_to('v/' || :client_id || '/b', 'UTF8'), '\x01'::bytea);
DELETE FROM bench_kv AS t USING unnest(ARRAY[3000 + :client_id, 5000 + :client_id, 6000 + :client_id]::int8[], ARRAY[convert_to('v/' || :client_id || '/a', 'UTF8'), convert_to('s/' || :client_id, 'UTF8'), convert_to('s/' || :client_id, 'UTF8')]::bytea[]) AS x (h, k) WHERE t.h = x.h AND t.k IS NOT DISTINCT FROM x.k;
COMMIT;
\endpipeline
