-- Get Messages (1) then Delete Message, the client on its own message
-- (row 2000+c) so that clients meet only where lazuli's do, on the
-- queue's row. Receive: read the queue's row, scan the visibility order
-- for the first visible message, read and update the message, insert its
-- new place in the visibility order and delete the old one. Delete: read
-- the message's, its visibility entry's and the queue's rows, insert the
-- queue's new sequence row, delete three rows.
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT k, v FROM bench_kv WHERE h = 4;
SELECT k, v FROM bench_kv WHERE k >= convert_to('v/' || :client_id || '/', 'UTF8') AND k < convert_to('v/' || :client_id || '0', 'UTF8') ORDER BY k LIMIT 32;
SELECT k, v FROM bench_kv WHERE h = 2000 + :client_id;
WITH u AS (UPDATE bench_kv SET v = convert_to(repeat('n', 160), 'UTF8') WHERE h = 2000 + :client_id AND k IS NOT DISTINCT FROM convert_to(rpad('m/' || :client_id, 48, '.'), 'UTF8') RETURNING 1) SELECT 1 / count(*) FROM u;
INSERT INTO bench_kv (h, k, v) VALUES (3000 + :client_id, convert_to('v/' || :client_id || '/a', 'UTF8'), ''::bytea) ON CONFLICT (h, k) DO UPDATE SET v = excluded.v;
DELETE FROM bench_kv AS t USING unnest(ARRAY[4000 + :client_id]::int8[], ARRAY[convert_to('v/' || :client_id || '/b', 'UTF8')]::bytea[]) AS x (h, k) WHERE t.h = x.h AND t.k IS NOT DISTINCT FROM x.k;
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT k, v FROM bench_kv WHERE h = ANY(ARRAY[2000 + :client_id, 3000 + :client_id, 4]::int8[]);
INSERT INTO bench_kv (h, k, v) VALUES (4000 + :client_id, convert_to('v/' || :client_id || '/b', 'UTF8'), '\x01'::bytea);
DELETE FROM bench_kv AS t USING unnest(ARRAY[3000 + :client_id, 5000 + :client_id, 6000 + :client_id]::int8[], ARRAY[convert_to('v/' || :client_id || '/a', 'UTF8'), convert_to('s/' || :client_id, 'UTF8'), convert_to('s/' || :client_id, 'UTF8')]::bytea[]) AS x (h, k) WHERE t.h = x.h AND t.k IS NOT DISTINCT FROM x.k;
COMMIT;
