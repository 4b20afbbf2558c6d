-- Benchmark Q: :reps evaluations of the expression :expr on row :id of
-- table :tab (S's documents).  By hand:
--   pgbench -n -t 3 -f bench/Q/expr.sql -D tab=s_stock_pglz -D id=100 \
--     -D reps=100 -D "expr=jb['key1']"
SELECT count(:expr) FROM :tab t CROSS JOIN generate_series(1, :reps) g WHERE t.id = :id;
