-- Benchmark I: jb -> 'imdb_id' on every document of size bucket :bucket of :tab.
-- By hand: pgbench -n -t 5 -f bench/I/imdb_id.sql -D tab=imdb_stock_pglz -D bucket=3
SELECT count(jb -> 'imdb_id') FROM :tab WHERE bucket = :bucket;
