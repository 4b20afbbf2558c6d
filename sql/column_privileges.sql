--
-- A role that may change a column of documents but not read it: an UPDATE
-- it makes shares no part with the old value, so that nothing it can
-- observe (what the UPDATE writes, TOAST statistics, messages) tells it
-- whether a part of the document it sends equals the stored one.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
RESET client_min_messages;
SET jsonb_toaster.range_size = 1024;

CREATE TABLE secrets (id int PRIMARY KEY, jb jsonb);
ALTER TABLE secrets ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO secrets
SELECT g, jsonb_build_object('id', g,
	'secret', (SELECT string_agg(md5(g::text || i::text), ' ') FROM generate_series(1, 100) i),
	'items', (SELECT jsonb_agg(md5(i::text)) FROM generate_series(1, 400) i))
FROM generate_series(1, 3) g;
SELECT id, (jsonb_toaster_storage(jb)).form, (jsonb_toaster_storage(jb)).parts > 2 AS several_parts
FROM secrets ORDER BY id;

-- the parts a row's document has now, and how many of them a later
-- version still names
CREATE TEMP TABLE before AS
SELECT id, p.value_id, p.value_offset FROM secrets, jsonb_toaster_parts(jb) p;
CREATE FUNCTION parts_kept(row_id int) RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM secrets, jsonb_toaster_parts(jb) p
	WHERE secrets.id = row_id AND (p.value_id, p.value_offset) IN (SELECT value_id, value_offset FROM before WHERE before.id = row_id)
$$;

CREATE ROLE regress_jt_blind_writer;
CREATE ROLE regress_jt_reading_writer;
GRANT SELECT (id), UPDATE (jb) ON secrets TO regress_jt_blind_writer;
GRANT SELECT (id, jb), UPDATE (jb) ON secrets TO regress_jt_reading_writer;

-- each sends back the document the row holds, unchanged
SELECT jb::text AS doc1 FROM secrets WHERE id = 1 \gset
SELECT jb::text AS doc2 FROM secrets WHERE id = 2 \gset
SELECT jb::text AS doc3 FROM secrets WHERE id = 3 \gset

-- may not read: every part written anew
SET ROLE regress_jt_blind_writer;
SELECT jb FROM secrets WHERE id = 1;
UPDATE secrets SET jb = :'doc1' WHERE id = 1;
RESET ROLE;
SELECT parts_kept(1) AS kept_blind;

-- may read the column: the parts are shared
SET ROLE regress_jt_reading_writer;
UPDATE secrets SET jb = :'doc2' WHERE id = 2;
RESET ROLE;
SELECT parts_kept(2) = (SELECT count(*) FROM before WHERE id = 2) AS kept_all_reading;

-- the owner, likewise
UPDATE secrets SET jb = :'doc3' WHERE id = 3;
SELECT parts_kept(3) = (SELECT count(*) FROM before WHERE id = 3) AS kept_all_owner;

-- with SELECT on the whole table rather than the column
GRANT SELECT ON secrets TO regress_jt_blind_writer;
DELETE FROM before WHERE id = 1;
INSERT INTO before SELECT id, p.value_id, p.value_offset FROM secrets, jsonb_toaster_parts(jb) p WHERE id = 1;
SET ROLE regress_jt_blind_writer;
UPDATE secrets SET jb = :'doc1' WHERE id = 1;
RESET ROLE;
SELECT parts_kept(1) = (SELECT count(*) FROM before WHERE id = 1) AS kept_all_table_select;

-- row security: the UPDATE policies let the writer reach a row the SELECT
-- policies hide from it, so it shares nothing either
CREATE ROLE regress_jt_rls_writer;
GRANT SELECT, UPDATE ON secrets TO regress_jt_rls_writer;
ALTER TABLE secrets ENABLE ROW LEVEL SECURITY;
CREATE POLICY see_none ON secrets FOR SELECT USING (false);
CREATE POLICY update_two ON secrets FOR UPDATE USING (id = 2);
DELETE FROM before WHERE id = 2;
INSERT INTO before SELECT id, p.value_id, p.value_offset FROM secrets, jsonb_toaster_parts(jb) p WHERE id = 2;
SET ROLE regress_jt_rls_writer;
SELECT count(*) AS rows_seen FROM secrets;
UPDATE secrets SET jb = :'doc2';
RESET ROLE;
SELECT parts_kept(2) AS kept_rls;
ALTER TABLE secrets DISABLE ROW LEVEL SECURITY;

-- the documents are intact either way
SELECT id, jb::text = CASE id WHEN 1 THEN :'doc1' WHEN 2 THEN :'doc2' ELSE :'doc3' END AS same
FROM secrets ORDER BY id;

DROP TABLE secrets;
DROP FUNCTION parts_kept(int);
DROP ROLE regress_jt_blind_writer, regress_jt_reading_writer, regress_jt_rls_writer;
RESET jsonb_toaster.range_size;
