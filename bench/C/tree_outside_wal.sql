-- The WAL of an UPDATE of another column on U's documents: stock, trees in the
-- row (format version 6), trees outside it (7), and the buffers of reads.
-- docs/storage-economy.md.
DROP TABLE IF EXISTS ws, w6, w7;
CREATE TABLE ws (id int, name text, js jsonb);
CREATE TABLE w6 (id int, name text, js jsonb); ALTER TABLE w6 ALTER COLUMN js SET (toaster = 'jsonb_toaster');
CREATE TABLE w7 (id int, name text, js jsonb); ALTER TABLE w7 ALTER COLUMN js SET (toaster = 'jsonb_toaster');
INSERT INTO ws SELECT i, NULL, (SELECT jsonb_object_agg(j, j) FROM generate_series(1, 1000) j) FROM generate_series(1,10000) i;
SET jsonb_toaster.format_version = 6; INSERT INTO w6 SELECT * FROM ws; RESET jsonb_toaster.format_version;
INSERT INTO w7 SELECT * FROM ws;
VACUUM ANALYZE ws, w6, w7;
SELECT relname, pg_relation_size(oid) AS heap, pg_total_relation_size(oid) AS total FROM pg_class WHERE relname IN ('ws','w6','w7') ORDER BY 1;
-- buffers of reading one key, and three, of every document
SELECT 'ws' AS tab, 'one key' AS read;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) SELECT sum((js->>'500')::int) FROM ws;
SELECT 'ws' AS tab, 'three keys' AS read;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) SELECT sum((js->>'500')::int + (js->>'5')::int + (js->>'995')::int) FROM ws;
SELECT 'w6' AS tab, 'one key' AS read;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) SELECT sum((js->>'500')::int) FROM w6;
SELECT 'w6' AS tab, 'three keys' AS read;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) SELECT sum((js->>'500')::int + (js->>'5')::int + (js->>'995')::int) FROM w6;
SELECT 'w7' AS tab, 'one key' AS read;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) SELECT sum((js->>'500')::int) FROM w7;
SELECT 'w7' AS tab, 'three keys' AS read;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) SELECT sum((js->>'500')::int + (js->>'5')::int + (js->>'995')::int) FROM w7;
CHECKPOINT;
SELECT pg_current_wal_insert_lsn() AS b \gset
UPDATE ws SET id = id + 1;
SELECT 'ws' AS tab, 'id = id + 1' AS stmt, round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'b') / 10000) AS wal_per_row;
CHECKPOINT;
SELECT pg_current_wal_insert_lsn() AS b \gset
UPDATE w6 SET id = id + 1;
SELECT 'w6' AS tab, 'id = id + 1' AS stmt, round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'b') / 10000) AS wal_per_row;
CHECKPOINT;
SELECT pg_current_wal_insert_lsn() AS b \gset
UPDATE w7 SET id = id + 1;
SELECT 'w7' AS tab, 'id = id + 1' AS stmt, round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'b') / 10000) AS wal_per_row;
CHECKPOINT;
SELECT pg_current_wal_insert_lsn() AS b \gset
UPDATE w6 SET js = js - '1';
SELECT 'w6' AS tab, 'js - ''1''' AS stmt, round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'b') / 10000) AS wal_per_row;
CHECKPOINT;
SELECT pg_current_wal_insert_lsn() AS b \gset
UPDATE w7 SET js = js - '1';
SELECT 'w7' AS tab, 'js - ''1''' AS stmt, round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'b') / 10000) AS wal_per_row;
CHECKPOINT;
SELECT pg_current_wal_insert_lsn() AS b \gset
UPDATE w6 SET id = id + 1;
SELECT 'w6' AS tab, 'id = id + 1 after' AS stmt, round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'b') / 10000) AS wal_per_row;
CHECKPOINT;
SELECT pg_current_wal_insert_lsn() AS b \gset
UPDATE w7 SET id = id + 1;
SELECT 'w7' AS tab, 'id = id + 1 after' AS stmt, round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'b') / 10000) AS wal_per_row;
DROP TABLE ws, w6, w7;
