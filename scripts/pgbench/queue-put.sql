-- Put Message of ~100 bytes: read the queue's row and the new message's,
-- insert four rows in one statement (the message, its place in the
-- visibility and expiry orders, the queue's sequence), commit.
\set h1 random(-4000000000000000000, 4000000000000000000)
\set h2 random(-4000000000000000000, 4000000000000000000)
\set h3 random(-4000000000000000000, 4000000000000000000)
\set h4 random(-4000000000000000000, 4000000000000000000)
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT k, v FROM bench_kv WHERE h = ANY(ARRAY[4, :h1]::int8[]);
INSERT INTO bench_kv (h, k, v) VALUES
  (:h1, convert_to(rpad('m/' || :h1, 37, '.'), 'UTF8'), convert_to(repeat('m', 160), 'UTF8')),
  (:h2, convert_to(rpad('v/' || :h2, 42, '.'), 'UTF8'), ''::bytea),
  (:h3, convert_to(rpad('x/' || :h3, 42, '.'), 'UTF8'), ''::bytea),
  (:h4, convert_to(rpad('s/' || :h4, 26, '.'), 'UTF8'), '\x02'::bytea);
COMMIT;
