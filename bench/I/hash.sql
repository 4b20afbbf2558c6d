-- Benchmark I: jsonb_hash(jb) (hash joins, hash aggregates) on every document of size bucket :bucket of :tab.
-- By hand: pgbench -n -t 5 -f bench/I/hash.sql -D tab=imdb_stock_pglz -D bucket=3
SELECT count(jsonb_hash(jb)) FROM :tab WHERE bucket = :bucket;
