-- Benchmark Q, whole-document consumers: :consumer applied to each of the
-- documents of table :tab listed in :docs (I's documents that the toaster
-- stores as skeletons), the same list for every configuration.  By hand:
--   pgbench -n -t 3 -f bench/Q/whole.sql -D tab=imdb_stock_pglz \
--     -D docs=q_whole_toaster_pglz -D "consumer=length(t.jb::text)"
SELECT count(:consumer) FROM :docs d JOIN :tab t USING (n);
