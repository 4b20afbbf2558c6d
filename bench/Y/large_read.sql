-- Benchmark Y, "large" documents (100 keys field0..field99 of 200
-- characters): read one field, chosen at random, of one document, chosen
-- at random, by primary key.  Workload C alone; half of workload A.
-- By hand:
--   pgbench -n -c 4 -j 2 -T 10 -f bench/Y/large_read.sql -D tab=y_large_stock_pglz -D rows=10000
\set id random(1, :rows)
\set f random(0, 99)
SELECT jb->>'field:f' FROM :tab WHERE id = :id;
