-- Put Blob of a new 1 KiB blob, as lazuli's PostgreSQL engine sends it:
-- read the blob's, its staging record's (absent), the container's and the
-- account's delete retention policy's (absent) rows in one statement,
-- insert the blob's row (its 1 KiB inline), commit.
\set h random(-4000000000000000000, 4000000000000000000)
\set s random(-4000000000000000000, 4000000000000000000)
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT k, v FROM bench_kv WHERE h = ANY(ARRAY[:h, :s, 2, 3141592653589793238]::int8[]);
INSERT INTO bench_kv (h, k, v) VALUES (:h, convert_to(rpad('b/' || :h, 48, '.'), 'UTF8'), convert_to(repeat('x', 1148), 'UTF8'));
COMMIT;
