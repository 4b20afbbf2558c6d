-- Benchmark I: jb = jb (a comparison reads both documents whole) on every
-- document of size bucket :bucket of :tab.
-- By hand: pgbench -n -t 5 -f bench/I/equal.sql -D tab=imdb_stock_pglz -D bucket=3
SELECT count(NULLIF(jb = jb, false)) FROM :tab WHERE bucket = :bucket;
