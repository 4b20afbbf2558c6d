-- Benchmark I, the access alone: jb -> ':key' evaluated :reps times on each
-- document of bucket :bucket of :tab (each evaluation reads the stored
-- document again: nothing is cached between calls).  The difference
-- between two values of :reps is the cost of the extra accesses, without
-- the cost of visiting the rows or of the query.  By hand:
--   pgbench -n -t 5 -f bench/I/repeated.sql -D tab=imdb_stock_pglz_by_form \
--     -D bucket=3 -D key=id -D reps=5
SELECT count(x) FROM :tab d, LATERAL (SELECT d.jb -> ':key' AS x FROM generate_series(1, :reps) OFFSET 0) r
WHERE d.bucket = :bucket;
