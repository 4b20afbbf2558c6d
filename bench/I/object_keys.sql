-- Benchmark I: jsonb_object_keys(jb) on every document of size bucket
-- :bucket of :tab.
-- By hand: pgbench -n -t 5 -f bench/I/object_keys.sql -D tab=imdb_stock_pglz -D bucket=3
SELECT count(*) FROM :tab t, jsonb_object_keys(t.jb) WHERE bucket = :bucket;
