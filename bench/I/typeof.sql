-- Benchmark I: jsonb_typeof(jb), the root's kind on every document of size bucket :bucket of :tab.
-- By hand: pgbench -n -t 5 -f bench/I/typeof.sql -D tab=imdb_stock_pglz -D bucket=3
SELECT count(jsonb_typeof(jb)) FROM :tab WHERE bucket = :bucket;
