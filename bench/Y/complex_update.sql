-- Benchmark Y, "complex" documents: set the v0 value at a random path of
-- one document, chosen at random, to a new 12-character string.  The other
-- half of workload A:
--   pgbench -n -c 4 -j 2 -T 10 -f bench/Y/complex_read.sql@1 -f bench/Y/complex_update.sql@1 \
--     -D tab=y_complex_stock_pglz -D rows=10000
\set id random(1, :rows)
\set k random(0, 99)
\set p random(0, 2)
\set r random(1, 1000000000)
UPDATE :tab SET jb = jsonb_set(jb, '{k:k,p:p,v0}', to_jsonb(left(encode(sha512(':r'::bytea), 'hex'), 12)))
WHERE id = :id;
