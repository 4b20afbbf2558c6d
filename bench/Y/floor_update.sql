-- Benchmark Y: the floor of workload A's update.  A new version of one
-- row, chosen at random, that leaves its document as it was: what an UPDATE
-- of that row costs before any work on the document.  With <kind>_read.sql
-- it makes "workload A floor", the most any storage of the document could
-- reach in workload A:
--   pgbench -n -c 4 -j 2 -T 10 -f bench/Y/large_read.sql@1 -f bench/Y/floor_update.sql@1 \
--     -D tab=y_large_stock_pglz -D rows=10000
\set id random(1, :rows)
UPDATE :tab SET id = id WHERE id = :id;
