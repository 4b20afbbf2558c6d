-- Benchmark C, inline budgets: one short field read from every row of :tab.
-- By hand: pgbench -n -t 3 -f bench/C/short_field.sql -D tab=c_budget_r_150 -D "expr=jb->>'username'"
SELECT count(:expr) FROM :tab;
