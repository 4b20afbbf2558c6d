-- Benchmark S: :reps evaluations of jb -> ':key' on row :id of table :tab.
-- The value is de-TOASTed by every call, as in a real query that names
-- several fields.  count() keeps the result from being sent or stored, so
-- memory stays bounded whatever the value's size.  By hand:
--   pgbench -n -t 3 -f bench/S/key_access.sql \
--     -D tab=s_stock_pglz -D id=100 -D key=key1 -D reps=1000
SELECT count(jb -> ':key') FROM :tab t CROSS JOIN generate_series(1, :reps) WHERE t.id = :id;
