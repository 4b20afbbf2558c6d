-- Benchmark Y, "large" documents: set one field, chosen at random, of one
-- document, chosen at random, to a new 200-character string (hex digits of
-- two SHA-512 hashes of a random number: as incompressible as the loaded
-- values).  The other half of workload A:
--   pgbench -n -c 4 -j 2 -T 10 -f bench/Y/large_read.sql@1 -f bench/Y/large_update.sql@1 \
--     -D tab=y_large_stock_pglz -D rows=10000
\set id random(1, :rows)
\set f random(0, 99)
\set r random(1, 1000000000)
UPDATE :tab SET jb = jsonb_set(jb, '{field:f}',
  to_jsonb(left(encode(sha512(':r/1'::bytea), 'hex') || encode(sha512(':r/2'::bytea), 'hex'), 200)))
WHERE id = :id;
