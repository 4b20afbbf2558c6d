-- Benchmark Y, "complex" documents (100 keys k0..k99, each an object of 3
-- objects p0..p2 of 3 values v0 (12 characters), v1 (a number), v2 (6
-- characters)): read one value, at a random path, of one document, chosen at
-- random, by primary key.  Workload C alone; half of workload A.
-- By hand:
--   pgbench -n -c 4 -j 2 -T 10 -f bench/Y/complex_read.sql -D tab=y_complex_stock_pglz -D rows=10000
\set id random(1, :rows)
\set k random(0, 99)
\set p random(0, 2)
\set v random(0, 2)
SELECT jb->'k:k'->'p:p'->>'v:v' FROM :tab WHERE id = :id;
