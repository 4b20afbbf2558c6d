--
-- Packed parts (patched servers only): the parts one statement writes for a
-- value share one TOAST value; a value stays while a row version names one
-- of its parts, and a version keeps no more dead bytes than live ones.
-- Each part compressed on its own here: units.sql has compression units.
--
-- The trees of this file's documents stay in the row (format version 6),
-- whose directories it reads and forges; tree_outside.sql has version 7.
SET jsonb_toaster.format_version = 6;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster_test;
SET jsonb_toaster.unit_size = 0;

-- 200 keys of 600 bytes: a dozen parts or more per document (a container
-- is cut into 16 ranges at most)
CREATE FUNCTION pdoc(id int, edit int DEFAULT 0) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_object_agg(format('k%s', lpad(j::text, 3, '0')),
		CASE WHEN j = edit THEN 'edited' ELSE repeat(md5((id * 1000 + j)::text), 19) END)
	FROM generate_series(1, 200) j
$$;
-- TOAST rows against the chunks of the values live rows name, each once;
-- and the values two rows name

CREATE TABLE pk (id int PRIMARY KEY, jb jsonb);
ALTER TABLE pk ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE pk_plain (id int PRIMARY KEY, jb jsonb);
INSERT INTO pk SELECT i, pdoc(i) FROM generate_series(1, 4) i;
INSERT INTO pk_plain SELECT i, pdoc(i) FROM generate_series(1, 4) i;

-- one TOAST value per document, holding every part, back to back
SELECT id, jt_test_format_version(jb) AS version,
	(SELECT count(*) FROM jsonb_toaster_parts(jb)) > 10 AS many_parts,
	(SELECT count(*) FROM jsonb_toaster_values(jb)) AS tvalues,
	(SELECT parts FROM jsonb_toaster_values(jb)) =
		(SELECT count(*) FROM jsonb_toaster_parts(jb)) AS all_in_it,
	(SELECT size FROM jsonb_toaster_values(jb)) =
		(SELECT sum(stored_size) FROM jsonb_toaster_parts(jb)) AS no_gap
FROM pk ORDER BY id;
-- the parts tile the value: each starts where the one before ends
SELECT count(*) AS gaps FROM (
	SELECT value_offset, lag(value_offset + stored_size) OVER (PARTITION BY id ORDER BY value_offset) AS prev_end
	FROM pk, jsonb_toaster_parts(jb)) s
WHERE prev_end IS NOT NULL AND value_offset <> prev_end;
SELECT jt_test_toast_ok('pk');
SELECT count(*) AS differ FROM pk JOIN pk_plain USING (id)
WHERE jt_test_flat_bytes(pk.jb) <> jt_test_flat_bytes(pk_plain.jb);
-- reads of one key, the first, the last, every key
SELECT count(*) FILTER (WHERE pk.jb -> k IS DISTINCT FROM pk_plain.jb -> k) AS differ
FROM pk JOIN pk_plain USING (id), jsonb_object_keys(pk_plain.jb) k;

-- a client-sent document with one value changed much (no delta): one new
-- TOAST value holding the new part, the other parts still named where
-- they were, and the old value kept since most of it is still named
CREATE TEMP TABLE before AS SELECT id, p.value_id, p.value_offset FROM pk, jsonb_toaster_parts(jb) p;
UPDATE pk SET jb = jsonb_set(pdoc(1), '{k100}', to_jsonb(repeat('z', 900))) WHERE id = 1;
UPDATE pk_plain SET jb = jsonb_set(pdoc(1), '{k100}', to_jsonb(repeat('z', 900))) WHERE id = 1;
SELECT (SELECT count(*) FROM jsonb_toaster_values(jb)) AS tvalues,
	count(*) FILTER (WHERE (p.value_id, p.value_offset) IN (SELECT value_id, value_offset FROM before WHERE id = 1)) AS kept,
	count(*) FILTER (WHERE (p.value_id, p.value_offset) NOT IN (SELECT value_id, value_offset FROM before WHERE id = 1)) AS written
FROM pk, jsonb_toaster_parts(jb) p WHERE pk.id = 1 GROUP BY pk.jb;
VACUUM pk;
SELECT jt_test_toast_ok('pk');

-- the same row losing keys, five at a time: once the first value's dead
-- bytes would outnumber the row's live ones, the UPDATE writes the parts
-- still named there anew, and the first value goes
CREATE TEMP TABLE first_value AS SELECT value_id FROM pk, jsonb_toaster_values(jb) v
WHERE id = 2;
CREATE FUNCTION first_value_named() RETURNS boolean LANGUAGE sql AS $$
	SELECT EXISTS (SELECT FROM pk, jsonb_toaster_values(jb) v
				   WHERE id = 2 AND v.value_id IN (SELECT value_id FROM first_value))
$$;
-- dead bytes over live ones, of each row's TOAST values
CREATE FUNCTION dead_over_live() RETURNS TABLE (id int, dead bigint, live bigint) LANGUAGE sql AS $$
	SELECT id, sum(size) - sum(named), sum(named) FROM (
		SELECT pk.id, v.value_id, v.size,
			(SELECT sum(p.stored_size) FROM jsonb_toaster_parts(pk.jb) p
			 WHERE p.value_id = v.value_id) AS named
		FROM pk, jsonb_toaster_values(jb) v) s
	GROUP BY id
$$;
DO $$
DECLARE
	j int := 0;
	worst numeric := 0;
BEGIN
	WHILE first_value_named() AND j < 200 LOOP
		UPDATE pk SET jb = jb - (SELECT array_agg(format('k%s', lpad(k::text, 3, '0')))
								 FROM generate_series(j + 1, j + 5) k) WHERE id = 2;
		UPDATE pk_plain SET jb = jb - (SELECT array_agg(format('k%s', lpad(k::text, 3, '0')))
									   FROM generate_series(j + 1, j + 5) k) WHERE id = 2;
		j := j + 5;
		SELECT greatest(worst, max(dead::numeric / live)) INTO worst FROM dead_over_live();
	END LOOP;
	RAISE NOTICE 'first value given up: %, before the keys ran out: %; at most as many dead bytes as live ones all along: %',
		NOT first_value_named(), j < 200, worst <= 1;
END $$;
SELECT count(*) AS too_many_dead FROM dead_over_live() WHERE dead > live;
VACUUM pk;
SELECT jt_test_toast_ok('pk');
SELECT count(*) AS differ FROM pk JOIN pk_plain USING (id)
WHERE jt_test_flat_bytes(pk.jb) <> jt_test_flat_bytes(pk_plain.jb);

-- the values to give up are chosen before the new parts are compressed,
-- from the old parts' ratio: a version whose new parts compress far better
-- than the old ones (nine incompressible values replaced by repetitive
-- ones, the tenth kept) would keep more dead bytes than live ones; it then
-- shares nothing
CREATE TABLE pe (id int PRIMARY KEY, jb jsonb);
ALTER TABLE pe ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO pe SELECT 1, jsonb_object_agg(format('k%s', j),
	(SELECT string_agg(md5((j * 1000 + g)::text), '') FROM generate_series(1, 60) g))
FROM generate_series(1, 10) j;
SELECT count(*) AS parts, count(DISTINCT p.value_id) AS "values",
	count(*) FILTER (WHERE p.compression IS NULL) AS uncompressed
FROM pe, jsonb_toaster_parts(jb) p;
CREATE TEMP TABLE pe_before AS SELECT v.value_id FROM pe, jsonb_toaster_values(jb) v;
SET client_min_messages = debug1;
UPDATE pe SET jb = (SELECT jsonb_object_agg(key, CASE WHEN key = 'k1' THEN value
		ELSE to_jsonb(repeat('a', 1900) || key) END) FROM jsonb_each(jb)) WHERE id = 1;
RESET client_min_messages;
SELECT sum(v.size) - sum(v.named) AS dead, sum(v.named) AS live,
	count(*) FILTER (WHERE v.value_id IN (SELECT value_id FROM pe_before)) AS old_values_named
FROM (SELECT v.value_id, v.size,
		(SELECT sum(p.stored_size) FROM jsonb_toaster_parts(pe.jb) p WHERE p.value_id = v.value_id) AS named
	  FROM pe, jsonb_toaster_values(jb) v) v;
SELECT jb->'k1' = (SELECT to_jsonb(string_agg(md5((1000 + g)::text), '')) FROM generate_series(1, 60) g) AS k1_intact,
	jb->>'k5' = repeat('a', 1900) || 'k5' AS k5_new
FROM pe;
DROP TABLE pe, pe_before;

-- format version 4: every part a TOAST value of its own; read as ever,
-- and an UPDATE of such a value in the latest version takes its parts
SET jsonb_toaster.format_version = 4;
INSERT INTO pk SELECT 10, pdoc(10);
INSERT INTO pk_plain SELECT 10, pdoc(10);
SET jsonb_toaster.format_version = 6;
SELECT jt_test_format_version(jb) AS version,
	(SELECT count(*) FROM jsonb_toaster_values(jb)) = (SELECT count(*) FROM jsonb_toaster_parts(jb)) AS one_value_each,
	(SELECT bool_and(value_offset = 0) FROM jsonb_toaster_parts(jb)) AS at_zero
FROM pk WHERE id = 10;
UPDATE pk SET jb = jsonb_set(pdoc(10), '{k050}', to_jsonb(repeat('x', 900))) WHERE id = 10;
UPDATE pk_plain SET jb = jsonb_set(pdoc(10), '{k050}', to_jsonb(repeat('x', 900))) WHERE id = 10;
SELECT jt_test_format_version(jb) AS version,
	(SELECT count(*) FROM jsonb_toaster_values(jb)) - (SELECT count(*) FROM jsonb_toaster_parts(jb)) AS values_less_parts
FROM pk WHERE id = 10;
-- and back: a value of the latest version updated in format version 4
-- keeps none of its packed parts, and writes each part on its own
SET jsonb_toaster.format_version = 4;
UPDATE pk SET jb = jsonb_set(pdoc(3), '{k010}', to_jsonb(repeat('w', 900))) WHERE id = 3;
UPDATE pk_plain SET jb = jsonb_set(pdoc(3), '{k010}', to_jsonb(repeat('w', 900))) WHERE id = 3;
SET jsonb_toaster.format_version = 6;
SELECT jt_test_format_version(jb) AS version,
	(SELECT bool_and(value_offset = 0) FROM jsonb_toaster_parts(jb)) AS at_zero
FROM pk WHERE id = 3;
VACUUM pk;
SELECT jt_test_toast_ok('pk');
SELECT count(*) AS differ FROM pk JOIN pk_plain USING (id)
WHERE jt_test_flat_bytes(pk.jb) <> jt_test_flat_bytes(pk_plain.jb);
SELECT count(*) FILTER (WHERE pk.jb -> k IS DISTINCT FROM pk_plain.jb -> k) AS differ
FROM pk JOIN pk_plain USING (id), jsonb_object_keys(pk_plain.jb) k;

-- a document small enough once compressed: an inline skeleton, its parts
-- one compressed datum in the pointer, no TOAST value
INSERT INTO pk SELECT 20, jsonb_build_object('leader', 'L20', 'fields',
	(SELECT jsonb_agg(jsonb_build_object('tag', j, 'v', repeat('abc', 60))) FROM generate_series(1, 40) j));
INSERT INTO pk_plain SELECT * FROM pk WHERE id = 20;
SELECT (jsonb_toaster_storage(jb)).form, (jsonb_toaster_storage(jb)).chunks,
	pg_column_size(jb) < 1000 AS small,
	(SELECT count(*) FROM jsonb_toaster_parts(jb)) > 0 AS has_parts,
	(SELECT bool_and(value_id = 0) FROM jsonb_toaster_parts(jb)) AS in_the_pointer,
	(SELECT count(*) FROM jsonb_toaster_values(jb)) AS tvalues
FROM pk WHERE id = 20;
SELECT pk.jb ->> 'leader' AS leader, pk.jb #> '{fields,39,tag}' AS last_tag,
	pk.jb -> 'fields' -> 5 = pk_plain.jb -> 'fields' -> 5 AS same_element,
	jsonb_path_query_first(pk.jb, '$.fields[7].v') = pk_plain.jb #> '{fields,7,v}' AS same_path,
	jt_test_flat_bytes(pk.jb) = jt_test_flat_bytes(pk_plain.jb) AS same_bytes
FROM pk JOIN pk_plain USING (id) WHERE id = 20;
-- an UPDATE rebuilds it: still inline after a small change, in TOAST once
-- it no longer fits, inline again once it fits again
UPDATE pk SET jb = jsonb_set(jb, '{fields,3,v}', '"x"') WHERE id = 20;
UPDATE pk_plain SET jb = jsonb_set(jb, '{fields,3,v}', '"x"') WHERE id = 20;
SELECT (SELECT count(*) FROM jsonb_toaster_values(jb)) AS tvalues FROM pk WHERE id = 20;
UPDATE pk SET jb = jb || jsonb_build_object('noise', (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 100) i)) WHERE id = 20;
UPDATE pk_plain SET jb = jb || jsonb_build_object('noise', (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 100) i)) WHERE id = 20;
SELECT (SELECT count(*) FROM jsonb_toaster_values(jb)) AS tvalues FROM pk WHERE id = 20;
UPDATE pk SET jb = jb - 'noise' WHERE id = 20;
UPDATE pk_plain SET jb = jb - 'noise' WHERE id = 20;
SELECT (jsonb_toaster_storage(jb)).form, (SELECT count(*) FROM jsonb_toaster_values(jb)) AS tvalues
FROM pk WHERE id = 20;
SELECT count(*) AS differ FROM pk JOIN pk_plain USING (id)
WHERE jt_test_flat_bytes(pk.jb) <> jt_test_flat_bytes(pk_plain.jb);
-- a document that compresses as far as a run of zeros does (84 kB raw,
-- over 40 times the room in the row) stays there, as stock keeps it:
-- tried inline up to the most pglz or lz4 can compress
CREATE FUNCTION zeros_doc() RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_build_object('k', 21, 'zeros', (SELECT jsonb_agg(0) FROM generate_series(1, 7000)))
$$;
CREATE TABLE pk4 (id int PRIMARY KEY, jb jsonb COMPRESSION lz4);
ALTER TABLE pk4 ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE pk_stock (id int PRIMARY KEY, jb jsonb);
CREATE TABLE pk4_stock (id int PRIMARY KEY, jb jsonb COMPRESSION lz4);
INSERT INTO pk SELECT 21, zeros_doc();
INSERT INTO pk4 SELECT 21, zeros_doc();
INSERT INTO pk_stock SELECT 21, zeros_doc();
INSERT INTO pk4_stock SELECT 21, zeros_doc();
SELECT t.method, (jsonb_toaster_storage(t.jb)).raw_size > 80000 AS over_80k,
	(jsonb_toaster_storage(t.jb)).form, (SELECT count(*) FROM jsonb_toaster_values(t.jb)) AS tvalues,
	(jsonb_toaster_storage(t.stock)).form AS stock_form,
	jt_test_flat_bytes(t.jb) = jt_test_flat_bytes(zeros_doc()) AS same_bytes,
	t.jb #> '{zeros,6999}' AS last_zero
FROM (SELECT 'pglz' AS method, pk.jb, s.jb AS stock FROM pk, pk_stock s WHERE pk.id = 21
	  UNION ALL SELECT 'lz4', pk4.jb, s.jb FROM pk4, pk4_stock s WHERE pk4.id = 21) t;
DELETE FROM pk WHERE id = 21;
DROP TABLE pk4, pk_stock, pk4_stock;
DROP FUNCTION zeros_doc();
-- a skeleton kept in the row takes no more than the room core leaves the
-- column, its headers included, so the row's other columns stay in it:
-- documents whose short fields fill that room to a byte more each time,
-- beside a 64-character text that does not compress (whose TOAST value
-- jt_test_toast_ok() would count)
CREATE TABLE pb (id int PRIMARY KEY, path text, jb jsonb);
ALTER TABLE pb ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO pb SELECT n * 100 + z, md5(n::text) || md5(z::text),
	(SELECT jsonb_object_agg(format('k%s', lpad(j::text, 3, '0')), format('short value %s', lpad(j::text, 6, '0')))
	 FROM generate_series(1, n) j) || jsonb_build_object('z', repeat('z', z), 'pad', repeat('x', 3000))
FROM generate_series(50, 64) n, generate_series(0, 31) z;
SELECT count(*) AS rows,
	count(*) FILTER (WHERE (jsonb_toaster_storage(jb)).form = 'skeleton' AND
					 NOT EXISTS (SELECT FROM jsonb_toaster_values(jb))) > 100 AS many_inline,
	max(pg_column_size(jb)) > 1900 AS some_near_the_room,
	jt_test_toast_ok('pb') AS toast_ok
FROM pb;
DROP TABLE pb;
-- a part said to lie past the end of the parts kept in the pointer
SELECT jt_test_skeleton_set_part(jb, 0, p.raw_size, p.stored_size, 0, 100000) -> 'fields'
FROM pk, jsonb_toaster_parts(jb) p WHERE id = 20 AND p.range = 0 LIMIT 1;
-- format version 4 keeps parts in TOAST, as releases before did
SET jsonb_toaster.format_version = 4;
UPDATE pk SET jb = jsonb_set(jb, '{leader}', '"L20 v4"') WHERE id = 20;
UPDATE pk_plain SET jb = jsonb_set(jb, '{leader}', '"L20 v4"') WHERE id = 20;
SET jsonb_toaster.format_version = 6;
SELECT jt_test_format_version(jb) AS version, (SELECT count(*) FROM jsonb_toaster_values(jb)) > 0 AS in_toast
FROM pk WHERE id = 20;
VACUUM pk;
SELECT jt_test_toast_ok('pk');

-- the setting's bounds
SET jsonb_toaster.format_version = 3;
SET jsonb_toaster.format_version = 9;

-- rewrites copy each value once, whole
VACUUM FULL pk;
SELECT jt_test_toast_ok('pk');
CLUSTER pk USING pk_pkey;
SELECT jt_test_toast_ok('pk');
SELECT count(*) AS differ FROM pk JOIN pk_plain USING (id)
WHERE jt_test_flat_bytes(pk.jb) <> jt_test_flat_bytes(pk_plain.jb);
-- DELETE takes every value
DELETE FROM pk;
VACUUM pk;
SELECT jt_test_toast_ok('pk');

DROP TABLE pk, pk_plain;
DROP FUNCTION pdoc(int, int), first_value_named(), dead_over_live();
RESET jsonb_toaster.unit_size;
