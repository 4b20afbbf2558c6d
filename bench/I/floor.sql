-- Benchmark I floor: visiting the documents of bucket :bucket without
-- reading them.  By hand: pgbench -n -t 5 -f bench/I/floor.sql -D tab=imdb_stock_pglz -D bucket=3
SELECT count(*) FROM :tab WHERE bucket = :bucket;
