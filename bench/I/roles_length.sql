-- Benchmark I: jsonb_array_length(jb -> 'roles') on every document of size bucket :bucket of :tab.
-- By hand: pgbench -n -t 5 -f bench/I/roles_length.sql -D tab=imdb_stock_pglz -D bucket=3
SELECT count(jsonb_array_length(jb -> 'roles')) FROM :tab WHERE bucket = :bucket;
