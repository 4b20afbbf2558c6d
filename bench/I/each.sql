-- Benchmark I: jsonb_each(jb), every pair of the root, on every document of
-- size bucket :bucket of :tab.
-- By hand: pgbench -n -t 5 -f bench/I/each.sql -D tab=imdb_stock_pglz -D bucket=3
SELECT count(*) FROM :tab t, jsonb_each(t.jb) WHERE bucket = :bucket;
