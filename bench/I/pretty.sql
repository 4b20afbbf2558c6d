-- Benchmark I: jsonb_pretty(jb) on every document of size bucket :bucket of :tab.
-- By hand: pgbench -n -t 5 -f bench/I/pretty.sql -D tab=imdb_stock_pglz -D bucket=3
SELECT count(length(jsonb_pretty(jb))) FROM :tab WHERE bucket = :bucket;
