-- Put Blob with If-Match on the client's own blob: read the blob's, its
-- staging record's (absent), the container's and the account's delete
-- retention policy's (absent) rows, update the blob's row (a row count of
-- zero divides by zero: the engine's check that it existed), commit.
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT k, v FROM bench_kv WHERE h = ANY(ARRAY[1000 + :client_id, -3000000000000000000 + :client_id * 377000000000000000, 2, 3141592653589793238]::int8[]);
WITH u AS (UPDATE bench_kv SET v = convert_to(repeat('y', 1146), 'UTF8') WHERE h = 1000 + :client_id AND k IS NOT DISTINCT FROM convert_to(rpad('b/' || :client_id, 48, '.'), 'UTF8') RETURNING 1) SELECT 1 / count(*) FROM u;
COMMIT;
