-- Insert Entity of ~200 bytes: read the table's and the new entity's rows,
-- insert the entity's row, commit.
\set h random(-4000000000000000000, 4000000000000000000)
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT k, v FROM bench_kv WHERE h = ANY(ARRAY[3, :h]::int8[]);
INSERT INTO bench_kv (h, k, v) VALUES (:h, convert_to(rpad('e/' || :h, 42, '.'), 'UTF8'), convert_to(repeat('e', 183), 'UTF8'));
COMMIT;
