-- Benchmark Q: :reps evaluations of the table function :from (which names
-- t.jb, and g so that it is evaluated for every repetition) on row :id of
-- table :tab.  By hand:
--   pgbench -n -t 3 -f bench/Q/from.sql -D tab=s_stock_pglz -D id=100 -D reps=100 \
--     -D "from=JSON_TABLE(t.jb, '\$' PASSING g AS g COLUMNS (k int PATH '\$.key1')) x"
SELECT count(*) FROM :tab t CROSS JOIN generate_series(1, :reps) g
CROSS JOIN LATERAL :from WHERE t.id = :id;
