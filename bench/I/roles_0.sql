-- Benchmark I: jb -> 'roles' -> 0 on every document of size bucket :bucket of :tab.
-- By hand: pgbench -n -t 5 -f bench/I/roles_0.sql -D tab=imdb_stock_pglz -D bucket=3
SELECT count(jb -> 'roles' -> 0) FROM :tab WHERE bucket = :bucket;
