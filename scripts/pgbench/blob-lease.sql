-- Lease Blob acquire then release on the client's own blob: two
-- transactions, each reading the blob's row and updating it.
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT k, v FROM bench_kv WHERE h = 1000 + :client_id;
WITH u AS (UPDATE bench_kv SET v = convert_to(repeat('l', 1194), 'UTF8') WHERE h = 1000 + :client_id AND k IS NOT DISTINCT FROM convert_to(rpad('b/' || :client_id, 48, '.'), 'UTF8') RETURNING 1) SELECT 1 / count(*) FROM u;
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT k, v FROM bench_kv WHERE h = 1000 + :client_id;
WITH u AS (UPDATE bench_kv SET v = convert_to(repeat('x', 1147), 'UTF8') WHERE h = 1000 + :client_id AND k IS NOT DISTINCT FROM convert_to(rpad('b/' || :client_id, 48, '.'), 'UTF8') RETURNING 1) SELECT 1 / count(*) FROM u;
COMMIT;
