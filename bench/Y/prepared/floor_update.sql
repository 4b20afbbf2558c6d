-- Benchmark Y, prepared statements: floor_update.sql (see large_read.sql
-- here for how to run it by hand).
\set id random(1, :rows)
UPDATE :tab SET id = id WHERE id = :id;
