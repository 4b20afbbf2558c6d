-- Benchmark I floor: visiting the rows of bucket :bucket without reading
-- their documents.  count(n) needs the row (n is not in the bucket index,
-- so this is no index-only scan), and n comes before jb, so the document
-- is not touched.  By hand: pgbench -n -t 5 -f bench/I/floor.sql -D tab=imdb_stock_pglz -D bucket=3
SELECT count(n) FROM :tab WHERE bucket = :bucket;
