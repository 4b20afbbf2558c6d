-- Benchmark I: jb -> 'height' on every document of size bucket :bucket of :tab.
-- By hand: pgbench -n -t 5 -f bench/I/height.sql -D tab=imdb_stock_pglz -D bucket=3
SELECT count(jb -> 'height') FROM :tab WHERE bucket = :bucket;
