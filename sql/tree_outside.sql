--
-- Trees outside the row (patched servers only, format version 7): a
-- document whose tree is one reference (a root that left whole, as a wide
-- object of short fields does) keeps in the row only the entry of a part
-- holding its tree, stored with its other parts in one TOAST value, so
-- that an UPDATE of another column writes a short row.  Every reader gets
-- the builtins' answer, the update paths keep their parts and deltas,
-- rewrites keep every value, the TOAST relation holds exactly what live
-- rows name, and a forged entry raises an ERROR.
--
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster_test;

SET jsonb_toaster.range_size = 1024;
-- 800 keys of numbers: no field short enough to keep, ranges of 1 kB;
-- half of it for units of 4 kB, which leave it ranges of 1 kB too (a
-- container no longer than a unit is one range)
CREATE FUNCTION wide(id int) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_object_agg(j, id * 1000 + j) FROM generate_series(1, 800) j
$$;
CREATE FUNCTION narrow(id int) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_object_agg(j, id * 1000 + j) FROM generate_series(1, 400) j
$$;
-- TOAST rows against the chunks of the values live rows name, each once;
-- and the values two rows name (as in packing.sql)
CREATE FUNCTION try(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	result text;
BEGIN
	EXECUTE query INTO result;
	RETURN 'ok: ' || coalesce(left(result, 30), 'NULL');
EXCEPTION WHEN OTHERS THEN
	DECLARE
		detail text;
	BEGIN
		GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
		RETURN SQLSTATE || ': ' ||
			regexp_replace(regexp_replace(SQLERRM || coalesce(' (' || nullif(detail, '') || ')', ''),
										  'pg_toast_[0-9]+', 'pg_toast_N', 'g'),
						   '\m[0-9]+\M', 'N', 'g');
	END;
END $$;

CREATE TABLE plain (id int PRIMARY KEY, note text, jb jsonb);
INSERT INTO plain SELECT i, NULL, wide(i) FROM generate_series(1, 20) i;
CREATE TABLE t (id int PRIMARY KEY, note text, jb jsonb);
ALTER TABLE t ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO t SELECT * FROM plain;

-- the layout: version 7, a short row, the tree one more part of the one
-- value the parts lie in
CREATE FUNCTION layout(rel regclass) RETURNS TABLE (version int, inline_max int,
	many_parts bool, tree_parts bigint, one_value bool) LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE format($q$
		SELECT min(jt_test_format_version(jb)), max((jsonb_toaster_storage(jb)).inline_size)::int,
			bool_and((SELECT count(*) FROM jsonb_toaster_parts(jb) WHERE kind <> 'tree') > 4),
			sum((SELECT count(*) FROM jsonb_toaster_parts(jb) p WHERE p.kind = 'tree' AND p.path IS NULL))::bigint,
			bool_and((SELECT count(DISTINCT value_id) FROM jsonb_toaster_parts(jb)) = 1)
		FROM %s $q$, rel);
END $$;
SELECT * FROM layout('t');
SELECT jt_test_toast_ok('t');

-- reads: the builtins' answers
CREATE FUNCTION differ() RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM t JOIN plain p USING (id)
	WHERE t.jb IS DISTINCT FROM p.jb
		OR t.jb::text IS DISTINCT FROM p.jb::text
		OR jt_test_flat_bytes(t.jb) IS DISTINCT FROM jt_test_flat_bytes(p.jb)
		OR (t.jb -> '1') IS DISTINCT FROM (p.jb -> '1')
		OR (t.jb ->> '250') IS DISTINCT FROM (p.jb ->> '250')
		OR (t.jb #> '{399}') IS DISTINCT FROM (p.jb #> '{399}')
		OR (t.jb ? '77') IS DISTINCT FROM (p.jb ? '77')
		OR (t.jb ? 'none') IS DISTINCT FROM (p.jb ? 'none')
		OR (t.jb['123']) IS DISTINCT FROM (p.jb['123'])
		OR jsonb_path_query_first(t.jb, '$."300"') IS DISTINCT FROM
		   jsonb_path_query_first(p.jb, '$."300"')
		OR (t.jb @> jsonb_build_object('5', t.id * 1000 + 5)) IS DISTINCT FROM
		   (p.jb @> jsonb_build_object('5', p.id * 1000 + 5))
		OR (SELECT count(*) FROM jsonb_each(t.jb)) <> (SELECT count(*) FROM jsonb_each(p.jb))
$$;
SELECT differ();

-- the accessors of one query read the tree once (chunks fetched through
-- the TOAST index: the tree's, then its first part's for each key)
SELECT jt_test_toast_fetches('t', $$SELECT jb -> '1', jb -> '2', jb -> '3' FROM t WHERE id = 16$$) <=
	(SELECT sum(chunks) FILTER (WHERE kind = 'tree') +
		3 * sum(chunks) FILTER (WHERE range = 0)
	 FROM t, jsonb_toaster_parts(jb) WHERE id = 16) AS tree_read_once;

-- an UPDATE of another column keeps the pointer as it is
CREATE TEMP TABLE before AS SELECT id, jb::text AS doc,
	(jsonb_toaster_storage(jb)).inline_size FROM t;
UPDATE t SET note = 'n' || id;
UPDATE plain SET note = 'n' || id;
SELECT count(*) AS changed FROM t JOIN before b USING (id)
WHERE (jsonb_toaster_storage(t.jb)).inline_size <> b.inline_size OR t.jb::text <> b.doc;
DROP TABLE before;

-- partial updates read the tree; one that writes no part (its change kept
-- as a delta) names the old tree part and keeps the edits of it in the
-- row, one that writes a part writes the tree with it; the old tree's
-- value goes when nothing names it
UPDATE t SET jb = jb - '1' WHERE id <= 4;
UPDATE plain SET jb = jb - '1' WHERE id <= 4;
UPDATE t SET jb = jsonb_set(jb, '{200}', '0') WHERE id BETWEEN 3 AND 8;
UPDATE plain SET jb = jsonb_set(jb, '{200}', '0') WHERE id BETWEEN 3 AND 8;
UPDATE t SET jb = jb || '{"bar": "baz"}' WHERE id BETWEEN 7 AND 10;
UPDATE plain SET jb = jb || '{"bar": "baz"}' WHERE id BETWEEN 7 AND 10;
UPDATE t SET jb['100'] = '"set"' WHERE id IN (11, 12);
UPDATE plain SET jb['100'] = '"set"' WHERE id IN (11, 12);
SELECT differ();
-- (a view: a function's argument may be given to it detoasted)
CREATE VIEW states AS SELECT id, jt_test_format_version(jb) AS version,
	CASE
		WHEN jt_test_tree_edits(jb) IS NULL THEN 'row'
		WHEN jt_test_tree_edits(jb) > 0 THEN 'edited'
		ELSE 'outside' END AS tree_state,
	(SELECT count(*) FROM jsonb_toaster_parts(jb) WHERE kind = 'tree') AS tree_parts,
	(SELECT count(DISTINCT value_id) FROM jsonb_toaster_parts(jb)) AS tvalues,
	(jsonb_toaster_storage(jb)).inline_size > 300 AS wide_row
FROM t;
SELECT id, version, tree_state, tree_parts, tvalues FROM states
WHERE id IN (1, 3, 7, 11, 13) ORDER BY id;
VACUUM t;
SELECT jt_test_toast_ok('t');

-- edits add up, each change of a part once; a part written takes the
-- tree with it, which ends the edits
CREATE TEMP TABLE seen (n int, state text);
DO $$
BEGIN
	FOR n IN 1..11 LOOP
		UPDATE t SET jb = jb - (n * 36)::text WHERE id = 12;
		UPDATE plain SET jb = jb - (n * 36)::text WHERE id = 12;
		INSERT INTO seen SELECT n, tree_state FROM states WHERE id = 12;
	END LOOP;
	UPDATE t SET jb = jsonb_set(jb, '{60}', to_jsonb(repeat('p', 900))) WHERE id = 12;
	UPDATE plain SET jb = jsonb_set(jb, '{60}', to_jsonb(repeat('p', 900))) WHERE id = 12;
	INSERT INTO seen SELECT 12, tree_state FROM states WHERE id = 12;
END $$;
SELECT string_agg(state, ' ' ORDER BY n) AS states FROM seen;
SELECT differ();
DROP TABLE seen;
VACUUM t;
SELECT jt_test_toast_ok('t');

-- past half the tree's bytes, edits give way to the tree in the row, which
-- stays there until a part is written (a tree of six parts here: half the
-- document, and units small enough for it to be cut)
SET jsonb_toaster.range_size = 2048;
SET jsonb_toaster.unit_size = 4096;
CREATE TABLE few (id int, jb jsonb);
ALTER TABLE few ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO few SELECT 1, narrow(1);
CREATE TEMP TABLE seen (n int, state text);
DO $$
DECLARE
	keys text[] := '{100,300,200}';
BEGIN
	FOR n IN 1..4 LOOP
		IF n <= 3 THEN
			UPDATE few SET jb = jb - keys[n];
		ELSE
			UPDATE few SET jb = jsonb_set(jb, '{250}', to_jsonb(repeat('p', 900)));
		END IF;
		INSERT INTO seen SELECT n, CASE WHEN jt_test_tree_edits(jb) IS NULL THEN 'row'
			WHEN jt_test_tree_edits(jb) > 0 THEN 'edited' ELSE 'outside' END FROM few;
	END LOOP;
END $$;
SELECT string_agg(state, ' ' ORDER BY n) AS states FROM seen;
SELECT jb = jsonb_set(narrow(1) - '{100,300,200}'::text[], '{250}', to_jsonb(repeat('p', 900))) AS same
FROM few;
DROP TABLE seen, few;
RESET jsonb_toaster.unit_size;
SET jsonb_toaster.range_size = 1024;

-- the tree part a version names may be an earlier version's, whose
-- entries its deltas described: a change kept as a delta, written with a
-- tree (a part written too), then undone (the part taken as it was, no
-- delta, nothing written, edits of that tree)
SET jsonb_toaster.unit_size = 4096;
CREATE TABLE undo (id int, jb jsonb);
ALTER TABLE undo ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO undo SELECT 1, narrow(1);
UPDATE undo SET jb = narrow(1) || '{"20": 123456789}' || jsonb_build_object('300', repeat('z', 700));
UPDATE undo SET jb = narrow(1) || jsonb_build_object('300', repeat('z', 700));
VACUUM undo;
SELECT jb = narrow(1) || jsonb_build_object('300', repeat('z', 700)) AS same,
	jt_test_tree_edits(jb) > 0 AS edited, jt_test_toast_ok('undo') FROM undo;
DROP TABLE undo;
RESET jsonb_toaster.unit_size;

-- a document sent whole: its unchanged parts are shared with the old
-- value.  A small change is kept as a delta, with the old tree part and
-- edits of it (a TOAST value for the tree alone at every such UPDATE
-- would cost more than the row saves); a change that writes a part writes
-- the tree with it.
UPDATE t SET jb = (SELECT jsonb_set(p.jb, '{300}', '"new"') FROM plain p WHERE p.id = t.id)
WHERE id BETWEEN 13 AND 14;
UPDATE plain SET jb = jsonb_set(jb, '{300}', '"new"') WHERE id BETWEEN 13 AND 14;
CREATE FUNCTION widened(doc jsonb) RETURNS jsonb LANGUAGE sql AS $$
	SELECT doc || (SELECT jsonb_object_agg(k, repeat('w', 50)) FROM generate_series(300, 330) k)
$$;
UPDATE t SET jb = (SELECT widened(p.jb) FROM plain p WHERE p.id = t.id)
WHERE id BETWEEN 15 AND 16;
UPDATE plain SET jb = widened(jb) WHERE id BETWEEN 15 AND 16;
SELECT differ();
SELECT * FROM states WHERE id BETWEEN 13 AND 16 ORDER BY id;
VACUUM t;
SELECT jt_test_toast_ok('t');

-- a DELETE reads the tree from the chunks of its value as it deletes them
-- (each chunk of the row's values fetched once), whatever the row's state:
-- rolled back, every row is as it was; done, nothing of the rows is left
SELECT tree_state, tvalues > 1 AS spread, count(*) FROM states
GROUP BY 1, 2 ORDER BY 1, 2;
BEGIN;
DELETE FROM t;
SELECT count(*) AS left FROM t;
ROLLBACK;
SELECT differ(), jt_test_toast_ok('t');
SELECT id, tree_state, tvalues FROM states WHERE id IN (3, 12, 13, 17) ORDER BY id;
CREATE TEMP TABLE row_chunks AS
	SELECT sum(v.chunks) AS chunks
	FROM (SELECT DISTINCT v.value_id, v.chunks FROM t, jsonb_toaster_values(jb) v
		  WHERE id IN (12, 17)) v;
SELECT jt_test_toast_fetches('t', $$DELETE FROM t WHERE id IN (12, 17)$$) = chunks AS fetched_once
FROM row_chunks;
DROP TABLE row_chunks;
DELETE FROM t WHERE id IN (3, 13);
DELETE FROM plain WHERE id IN (3, 12, 13, 17);
SELECT differ(), jt_test_toast_ok('t');

-- the same in one transaction that reads the old documents first (its
-- part cache), and rolled back: nothing changes
BEGIN;
SELECT count(*) FROM t WHERE jb::text LIKE '%"7"%';
UPDATE t SET jb = jb || '{"x": 1}' WHERE id = 20;
UPDATE t SET jb = jsonb_set(jb, '{5}', '5') WHERE id = 20;
ROLLBACK;
SELECT differ();

-- rewrites keep every value, and the tree's
VACUUM FULL t;
SELECT differ(), jt_test_toast_ok('t');
CLUSTER t USING t_pkey;
SELECT differ(), jt_test_toast_ok('t');
SELECT * FROM layout('t') WHERE false;
-- an ALTER TABLE rewrite stores every document anew
ALTER TABLE t ALTER COLUMN note TYPE varchar(20);
SELECT differ(), jt_test_toast_ok('t');
SELECT count(*) FILTER (WHERE jt_test_format_version(jb) = 7) AS outside FROM t;

-- rows deleted: their values go
DELETE FROM t WHERE id > 16;
DELETE FROM plain WHERE id > 16;
VACUUM t;
SELECT differ(), jt_test_toast_ok('t');

-- what stays in the row: a tree below the threshold, a root object with a
-- short field, and every tree with format_version = 6
CREATE TABLE kept (id int, jb jsonb);
ALTER TABLE kept ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
SET jsonb_toaster.range_size = 8192;
INSERT INTO kept SELECT 1, wide(1);
SET jsonb_toaster.range_size = 1024;
INSERT INTO kept VALUES
	(2, jsonb_build_object('name', 'short', 'big', (SELECT jsonb_object_agg(j, j) FROM generate_series(1, 800) j)));
SET jsonb_toaster.format_version = 6;
INSERT INTO kept SELECT 3, wide(3);
RESET jsonb_toaster.format_version;
SELECT id, jt_test_format_version(jb) AS version,
	(SELECT count(*) FROM jsonb_toaster_parts(jb) WHERE kind = 'tree') AS tree_parts,
	(SELECT count(*) FROM jsonb_toaster_parts(jb)) > 1 AS split
FROM kept ORDER BY id;
-- a version 6 value updated under version 7 settings keeps its version
UPDATE kept SET jb = jb - '1' WHERE id = 3;
SELECT jt_test_format_version(jb) AS version, jb = wide(3) - '1' AS same FROM kept WHERE id = 3;
DROP TABLE kept;
SET jsonb_toaster.range_size = 1024;

-- forged entries of the part holding the tree: every read raises an ERROR
SELECT f.field, r.how,
	try(format('SELECT %s FROM (SELECT jt_test_skeleton_set_tree_entry(jb, %L, %s) AS jb FROM t WHERE id = 16) s',
			   r.expr, f.field, f.val)) AS result
FROM (VALUES ('hash', '12345'), ('rawsize', '100'), ('valueid', '0'),
			 ('valueid', '4000000000'), ('value_size', '1'), ('offset', '3'),
			 ('header', '1'), ('extinfo', '0'), ('unit', '16842752'),
			 ('version', '6')) f(field, val),
	(VALUES ('text', 'jb::text'), ('key', 'jb -> ''7'''), ('parts', '(SELECT count(*) FROM jsonb_toaster_parts(jb))::text')) r(how, expr)
ORDER BY f.field, f.val, r.how;

-- and forged edits of the tree: an ERROR too
UPDATE t SET jb = jsonb_set(jb, '{2}', '0') WHERE id = 15;
UPDATE plain SET jb = jsonb_set(jb, '{2}', '0') WHERE id = 15;
SELECT tree_state FROM states WHERE id = 15;
SELECT f.field, f.val, r.how,
	try(format('SELECT %s FROM (SELECT jt_test_skeleton_set_tree_entry(jb, %L, %s) AS jb FROM t WHERE id = %s) s',
			   r.expr, f.field, f.val, f.id)) AS result
FROM (VALUES ('edited', '0', 15), ('edited', '1', 16), ('edits_len', '0', 15),
			 ('edits_len', '100000', 15), ('edits_len', '4', 15),
			 ('edit_offset', '0', 15), ('edit_offset', '100000', 15),
			 ('edit_length', '0', 15), ('edit_length', '100000', 15)) f(field, val, id),
	(VALUES ('text', 'jb::text'), ('key', 'jb -> ''7''')) r(how, expr)
ORDER BY f.field, f.val, r.how;
SELECT differ();

DROP VIEW states;
DROP TABLE t, plain;
DROP FUNCTION wide(int), narrow(int), widened(jsonb), try(text), layout(regclass), differ();
