-- Lease Blob acquire then release on the client's own blob (row 8000 +
-- c * 2^53, apart from the other clients' as lazuli's hashed keys are):
-- two transactions of one round trip each: BEGIN; check that the blob's
-- row holds what the previous one left (the engine's hints); update it;
-- COMMIT. Both write the same value (1,170 bytes, about lazuli's leased
-- and released records), so that pgbench, which runs the whole script
-- again when the second transaction fails to serialize, finds what the
-- first one checks.
\startpipeline
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT 1 / ((SELECT v FROM bench_kv WHERE h = 8000 + :client_id * 9007199254740992 AND k IS NOT DISTINCT FROM convert_to(rpad('l/' || :client_id, 48, '.'), 'UTF8')) IS NOT DISTINCT FROM convert_to(repeat('x', 1170), 'UTF8'))::int;
WITH u AS (UPDATE bench_kv SET v = convert_to(repeat('x', 1170), 'UTF8') WHERE h = 8000 + :client_id * 9007199254740992 AND k IS NOT DISTINCT FROM convert_to(rpad('l/' || :client_id, 48, '.'), 'UTF8') RETURNING 1) SELECT 1 / count(*) FROM u;
COMMIT;
\endpipeline
\startpipeline
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT 1 / ((SELECT v FROM bench_kv WHERE h = 8000 + :client_id * 9007199254740992 AND k IS NOT DISTINCT FROM convert_to(rpad('l/' || :client_id, 48, '.'), 'UTF8')) IS NOT DISTINCT FROM convert_to(repeat('x', 1170), 'UTF8'))::int;
WITH u AS (UPDATE bench_kv SET v = convert_to(repeat('x', 1170), 'UTF8') WHERE h = 8000 + :client_id * 9007199254740992 AND k IS NOT DISTINCT FROM convert_to(rpad('l/' || :client_id, 48, '.'), 'UTF8') RETURNING 1) SELECT 1 / count(*) FROM u;
COMMIT;
\endpipeline
