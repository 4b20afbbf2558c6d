-- Benchmark I: jb::text, the whole document as text on every document of size bucket :bucket of :tab.
-- By hand: pgbench -n -t 5 -f bench/I/text.sql -D tab=imdb_stock_pglz -D bucket=3
SELECT count(length(jb::text)) FROM :tab WHERE bucket = :bucket;
