--
-- Compression units (patched servers only, format version 6): consecutive
-- parts one statement writes and compresses are gathered into units of up
-- to jsonb_toaster.unit_size raw bytes, each compressed as one stream, so
-- that repetitions across parts are found.  Each part's directory entry
-- names its unit's stored bytes and where it starts in the unit's raw
-- bytes.  Every reader gets the builtins' answer, updates keep what they
-- can, rewrites copy values whole, and a directory entry that forges an
-- impossible unit is reported as corrupt data, never read as something
-- else.  packing.sql tests packed parts each compressed on its own.
--
-- The trees of this file's documents stay in the row (format version 6),
-- whose directories it reads and forges; tree_outside.sql has version 7.
SET jsonb_toaster.format_version = 6;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster_test;

-- 120 keys of 160 bytes (an array of two every fourth key), a value
-- repeated every 20 keys: ranges of 2 kB (1 kB wanted, doubled since a
-- container is cut into 16 ranges at most) compressed one by one do not
-- see the repetitions, a unit of 16 kB does.  12 parts: the skeleton
-- leaves room in the row for the delta of a part
SET jsonb_toaster.range_size = 1024;
CREATE FUNCTION udoc(id int, edit int DEFAULT 0) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_object_agg(format('k%s', lpad(j::text, 3, '0')),
		CASE WHEN j = edit THEN to_jsonb('edited'::text)
			WHEN j % 4 = 0 THEN jsonb_build_array(j, repeat(md5((id * 1000 + j % 20)::text), 5))
			ELSE to_jsonb(repeat(md5((id * 1000 + j % 20)::text), 5)) END)
	FROM generate_series(1, 120) j
$$;
-- TOAST rows against the chunks of the values live rows name, each once;
-- and the values two rows name (as in packing.sql)
-- the parts of a table's rows, numbered as jt_test_part_bytes() counts
-- them, with their index in their unit
CREATE FUNCTION uparts(rel regclass) RETURNS TABLE (id int, partno int, path text[],
	kind text, count int, raw_size int, stored_size int, compression text,
	value_id oid, hash bigint, value_offset int, stored_offset int,
	unit_offset int, unit_parts int, unit_index int) LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE format('SELECT t.id, (p.ordinality - 1)::int, p.path, p.kind,
		p.count, p.raw_size, p.stored_size, p.compression, p.value_id, p.hash,
		p.value_offset, p.stored_offset, p.unit_offset, p.unit_parts,
		p.value_offset - p.stored_offset
		FROM %s t, LATERAL (SELECT * FROM jsonb_toaster_parts(t.jb) WITH ORDINALITY) p', rel);
END $$;
-- Whether core reads each part of rows first .. last as its entry says:
-- its bytes (for a part in a unit, the unit decompressed whole by core and
-- the part cut out of it) of the raw size and the CRC-32C its entry gives.
-- (Not for a part kept as a delta, whose entry gives its new content's.)
CREATE FUNCTION parts_read(rel regclass, first int, last int) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE ok boolean;
BEGIN
	EXECUTE format('SELECT bool_and(octet_length(b) + 4 = raw_size AND crc32c(b) = hash) FROM
		(SELECT p.raw_size, p.hash, jt_test_part_bytes(t.jb, (p.ordinality - 1)::int) AS b
		 FROM %s t, LATERAL (SELECT * FROM jsonb_toaster_parts(t.jb) WITH ORDINALITY) p
		 WHERE t.id BETWEEN %s AND %s) s', rel, first, last)
		INTO ok;
	RETURN ok;
END $$;
-- the TOAST values of a table's rows (one row with NULLs for a value that
-- has none), with the rows' format version and form
CREATE FUNCTION uvalues(rel regclass) RETURNS TABLE (id int, value_id oid, size int,
	parts int, version int, form text) LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE format('SELECT t.id, v.value_id, v.size, v.parts,
		jt_test_format_version(t.jb)::int, (jsonb_toaster_storage(t.jb)).form
		FROM %s t LEFT JOIN LATERAL jsonb_toaster_values(t.jb) v ON true', rel);
END $$;
-- The layout of the values of rows first .. last of a table:
--   skeletons: every value stored as a skeleton, of format version 6
--   parts, outside_units: its parts, and those not in a unit
--   min_unit_parts: the fewest parts a unit holds
--   one_value: each row's parts all in one TOAST value, which lists them
--   tiled: the distinct stored pieces (a unit, or a part on its own) of
--     each value, in order, each starting where the one before ends, the
--     first at 0, the last ending at the value's size
--   units_whole: the parts of each unit agree on its stored size, method
--     and part count, and are indexed 0 .. count - 1
--   units_shrink: each unit's stored bytes fewer than its parts' contents
--   units_fit: no unit holds more than max_raw raw bytes
--   units_packed: the parts of a unit follow each other in its raw bytes,
--     the first at 0
--   parts_read: each part's bytes, as core reads them, of the size and the
--     CRC-32C its entry gives
CREATE FUNCTION layout(rel regclass, first int, last int, max_raw int DEFAULT 16384)
RETURNS TABLE (skeletons boolean, parts bigint, outside_units bigint,
	min_unit_parts int, one_value boolean, tiled boolean, units_whole boolean,
	units_shrink boolean, units_fit boolean, units_packed boolean,
	parts_read boolean) LANGUAGE sql AS $$
	WITH lp AS MATERIALIZED (SELECT * FROM uparts(rel) u WHERE u.id BETWEEN first AND last),
	lv AS MATERIALIZED (SELECT * FROM uvalues(rel) v WHERE v.id BETWEEN first AND last),
	units AS (SELECT count(*) AS n, min(lp.unit_parts) AS up,
			count(DISTINCT lp.stored_size) AS nsizes, count(DISTINCT lp.compression) AS nmethods,
			count(DISTINCT lp.unit_parts) AS nup, min(lp.unit_index) AS first_index,
			max(lp.unit_index) AS last_index, count(DISTINCT lp.unit_index) AS nindex,
			min(lp.stored_size) AS stored, sum(lp.raw_size - 4) AS raw
		FROM lp WHERE lp.unit_parts IS NOT NULL GROUP BY lp.id, lp.value_id, lp.stored_offset),
	pieces AS (SELECT d.id, d.stored_offset,
			lag(d.stored_offset + d.stored_size) OVER w AS prev_end,
			CASE WHEN lead(d.stored_offset) OVER w IS NULL THEN d.stored_offset + d.stored_size END AS last_end
		FROM (SELECT DISTINCT lp.id, lp.value_id, lp.stored_offset, lp.stored_size FROM lp) d
		WINDOW w AS (PARTITION BY d.id ORDER BY d.stored_offset))
	SELECT
		(SELECT bool_and(lv.form = 'skeleton' AND lv.version = 6) FROM lv),
		(SELECT count(*) FROM lp),
		(SELECT count(*) FROM lp WHERE lp.unit_parts IS NULL),
		(SELECT min(lp.unit_parts) FROM lp),
		(SELECT bool_and(n = 1) FROM (SELECT count(*) AS n FROM lv GROUP BY lv.id) s) AND
			(SELECT bool_and(lv.parts = (SELECT count(*) FROM lp WHERE lp.id = lv.id)) FROM lv),
		(SELECT bool_and(coalesce(pieces.prev_end, 0) = pieces.stored_offset) AND
			bool_and(pieces.last_end IS NULL OR
					 pieces.last_end = (SELECT lv.size FROM lv WHERE lv.id = pieces.id))
		 FROM pieces),
		(SELECT bool_and(n = up AND nsizes = 1 AND nmethods = 1 AND nup = 1 AND
						 first_index = 0 AND last_index = up - 1 AND nindex = up) FROM units),
		(SELECT bool_and(stored < raw) FROM units),
		(SELECT bool_and(raw <= max_raw) FROM units),
		(SELECT bool_and(s.unit_offset = coalesce(s.prev_end, 0)) FROM
			(SELECT lp.unit_offset, lag(lp.unit_offset + lp.raw_size - 4) OVER
				(PARTITION BY lp.id, lp.value_id, lp.stored_offset ORDER BY lp.value_offset) AS prev_end
			 FROM lp WHERE lp.unit_parts IS NOT NULL) s),
		parts_read(rel, first, last)
$$;
-- Rows of a table whose reads differ from its plain copy's: the whole
-- value's bytes, every key, the second element of each (the arrays), a
-- jsonpath into an array and one to the last key, the keys' count
CREATE FUNCTION reads_differ(rel regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM %1$s t JOIN %1$s_plain p USING (id)
		WHERE jt_test_flat_bytes(t.jb) <> jt_test_flat_bytes(p.jb)
		OR EXISTS (SELECT FROM jsonb_object_keys(p.jb) k
				   WHERE t.jb -> k IS DISTINCT FROM p.jb -> k
				   OR t.jb #> ARRAY[k, ''1''] IS DISTINCT FROM p.jb #> ARRAY[k, ''1''])
		OR jsonb_path_query_first(t.jb, ''$.k100[1]'') IS DISTINCT FROM p.jb #> ''{k100,1}''
		OR jsonb_path_query_first(t.jb, ''$.k119'') IS DISTINCT FROM p.jb -> ''k119''
		OR (SELECT count(*) FROM jsonb_object_keys(t.jb)) <> (SELECT count(*) FROM jsonb_object_keys(p.jb))
		OR (SELECT count(*) FROM %1$s) <> (SELECT count(*) FROM %1$s_plain)', rel)
		INTO n;
	RETURN n;
END $$;

-- pglz and lz4 columns, and their plain copies
CREATE TABLE u (id int PRIMARY KEY, jb jsonb);
ALTER TABLE u ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE u_plain (id int PRIMARY KEY, jb jsonb);
CREATE TABLE u4 (id int PRIMARY KEY, jb jsonb COMPRESSION lz4);
ALTER TABLE u4 ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE u4_plain (id int PRIMARY KEY, jb jsonb);
INSERT INTO u SELECT i, udoc(i) FROM generate_series(1, 8) i;
INSERT INTO u_plain SELECT i, udoc(i) FROM generate_series(1, 8) i;
INSERT INTO u4 SELECT i, udoc(i) FROM generate_series(1, 8) i;
INSERT INTO u4_plain SELECT i, udoc(i) FROM generate_series(1, 8) i;

-- every part in a unit of several, a document's units in one TOAST value,
-- back to back, each smaller than its parts, within 16 kB, its parts one
-- after the other; core reads each part back out of its unit
SELECT 'pglz' AS method, * FROM layout('u', 1, 8)
UNION ALL SELECT 'lz4', * FROM layout('u4', 1, 8);
-- the units' method is the column's
SELECT (SELECT string_agg(DISTINCT compression, ',') FROM uparts('u')) AS u_methods,
	(SELECT string_agg(DISTINCT compression, ',') FROM uparts('u4')) AS u4_methods;
-- the same documents with each part compressed on its own: the same
-- parts, in no unit, taking more room (the units find the repetitions
-- across parts: under two thirds of the stored bytes)
SET jsonb_toaster.unit_size = 0;
CREATE TABLE u0 (id int PRIMARY KEY, jb jsonb);
ALTER TABLE u0 ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE u40 (id int PRIMARY KEY, jb jsonb COMPRESSION lz4);
ALTER TABLE u40 ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO u0 SELECT i, udoc(i) FROM generate_series(1, 8) i;
INSERT INTO u40 SELECT i, udoc(i) FROM generate_series(1, 8) i;
RESET jsonb_toaster.unit_size;
SELECT (SELECT count(*) FROM uparts('u0') WHERE unit_parts IS NOT NULL) AS u0_unit_parts,
	(SELECT count(*) FROM uparts('u40') WHERE unit_parts IS NOT NULL) AS u40_unit_parts,
	(SELECT array_agg(hash ORDER BY id, partno) FROM uparts('u0')) =
		(SELECT array_agg(hash ORDER BY id, partno) FROM uparts('u')) AS same_parts,
	pg_total_relation_size('u') < pg_total_relation_size('u0') AS pglz_smaller,
	pg_total_relation_size('u4') < pg_total_relation_size('u40') AS lz4_smaller,
	(SELECT sum(size) FROM uvalues('u')) * 3 < (SELECT sum(size) FROM uvalues('u0')) * 2 AS pglz_two_thirds,
	(SELECT sum(size) FROM uvalues('u4')) * 3 < (SELECT sum(size) FROM uvalues('u40')) * 2 AS lz4_two_thirds;
SELECT 'pglz' AS method, * FROM layout('u0', 1, 8)
UNION ALL SELECT 'lz4', * FROM layout('u40', 1, 8);
DROP TABLE u0, u40;

-- reads give the builtins' answers
SELECT reads_differ('u') AS u_differ, reads_differ('u4') AS u4_differ;

-- a smaller unit_size bounds the units so; a part larger than it stays
-- alone, in no unit
SET jsonb_toaster.unit_size = 2048;
CREATE TABLE us (id int PRIMARY KEY, jb jsonb);
ALTER TABLE us ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO us SELECT i, udoc(i) FROM generate_series(1, 2) i;
RESET jsonb_toaster.unit_size;
SELECT * FROM layout('us', 1, 2, 2048);
SELECT count(*) FILTER (WHERE raw_size - 4 > 2048) > 0 AS some_too_large,
	bool_and(unit_parts IS NULL) FILTER (WHERE raw_size - 4 > 2048) AS those_alone,
	bool_and(compression IS NOT NULL) AS all_compressed
FROM uparts('us');
DROP TABLE us;

-- parts that do not compress are stored as they are, in no unit
CREATE TABLE ux (id int PRIMARY KEY, jb jsonb);
ALTER TABLE ux ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO ux SELECT 1, jsonb_object_agg(format('k%s', j), md5(j::text) || md5((j + 1000)::text))
FROM generate_series(1, 300) j;
SELECT count(*) > 5 AS many_parts, bool_and(compression IS NULL) AS none_compressed,
	bool_and(unit_parts IS NULL) AS none_in_units, bool_and(stored_size = raw_size - 4) AS stored_raw,
	parts_read('ux', 1, 1) AS parts_read
FROM uparts('ux');
SELECT jt_test_flat_bytes(jb) = jt_test_flat_bytes((SELECT jsonb_object_agg(format('k%s', j), md5(j::text) || md5((j + 1000)::text))
	FROM generate_series(1, 300) j)) AS same_bytes FROM ux;
DROP TABLE ux;

-- rows written with each part on its own, in the same table as rows with
-- units: each read right
SET jsonb_toaster.unit_size = 0;
INSERT INTO u SELECT i, udoc(i) FROM generate_series(9, 10) i;
INSERT INTO u_plain SELECT i, udoc(i) FROM generate_series(9, 10) i;
RESET jsonb_toaster.unit_size;
SELECT (SELECT count(*) FROM uparts('u') WHERE id >= 9 AND unit_parts IS NOT NULL) AS unit_parts_9_10,
	(SELECT count(*) FROM uparts('u') WHERE id < 9 AND unit_parts IS NULL) AS lone_parts_1_8,
	parts_read('u', 1, 10) AS parts_read,
	reads_differ('u') AS differ;

-- Updates.  Per row: its TOAST values; its parts, and of those the ones
-- still named where they were before (value id and offset), the ones
-- among them that are deltas (another hash: a delta of the part stored
-- there), those of them whose base lies in a unit, and those written anew
CREATE TABLE u_before AS SELECT 'u'::text AS tbl, id, value_id, value_offset, hash, unit_parts FROM uparts('u')
UNION ALL SELECT 'u4', id, value_id, value_offset, hash, unit_parts FROM uparts('u4');
CREATE FUNCTION kept(rel regclass, row_id int) RETURNS TABLE (tvalues bigint, parts bigint,
	kept bigint, deltas bigint, deltas_in_units bigint, written bigint) LANGUAGE sql AS $$
	SELECT (SELECT count(*) FROM uvalues(rel) v WHERE v.id = row_id),
		count(*),
		count(*) FILTER (WHERE b.hash IS NOT NULL),
		count(*) FILTER (WHERE b.hash <> p.hash),
		count(*) FILTER (WHERE b.hash <> p.hash AND b.unit_parts IS NOT NULL),
		count(*) FILTER (WHERE b.hash IS NULL)
	FROM uparts(rel) p LEFT JOIN u_before b
		ON b.tbl = rel::text AND b.id = p.id AND b.value_id = p.value_id AND b.value_offset = p.value_offset
	WHERE p.id = row_id
$$;
-- a small edit of one key: the part kept as a delta of its old content,
-- which lies in a unit; no TOAST value written (the plain copies first,
-- so that the catalogs the statement needs are cached before debug1)
UPDATE u_plain SET jb = jsonb_set(jb, '{k050}', to_jsonb((jb ->> 'k050') || 'x')) WHERE id = 1;
UPDATE u4_plain SET jb = jsonb_set(jb, '{k050}', to_jsonb((jb ->> 'k050') || 'x')) WHERE id = 1;
SET client_min_messages = debug1;
UPDATE u SET jb = jsonb_set(jb, '{k050}', to_jsonb((jb ->> 'k050') || 'x')) WHERE id = 1;
UPDATE u4 SET jb = jsonb_set(jb, '{k050}', to_jsonb((jb ->> 'k050') || 'x')) WHERE id = 1;
RESET client_min_messages;
SELECT 'u' AS t, * FROM kept('u', 1) UNION ALL SELECT 'u4', * FROM kept('u4', 1);
SELECT reads_differ('u') AS u_differ, reads_differ('u4') AS u4_differ;
-- and a key of the same row in its other unit
UPDATE u_plain SET jb = jsonb_set(jb, '{k108,0}', '1108.5') WHERE id = 1;
SET client_min_messages = debug1;
UPDATE u SET jb = jsonb_set(jb, '{k108,0}', '1108.5') WHERE id = 1;
RESET client_min_messages;
SELECT * FROM kept('u', 1);
-- a large edit: the part carried whole and written, on its own, in a new
-- TOAST value; the others still named in their units
UPDATE u_plain SET jb = jsonb_set(jb, '{k060}', to_jsonb(repeat('z', 900))) WHERE id = 2;
UPDATE u4_plain SET jb = jsonb_set(jb, '{k060}', to_jsonb(repeat('z', 900))) WHERE id = 2;
SET client_min_messages = debug1;
UPDATE u SET jb = jsonb_set(jb, '{k060}', to_jsonb(repeat('z', 900))) WHERE id = 2;
UPDATE u4 SET jb = jsonb_set(jb, '{k060}', to_jsonb(repeat('z', 900))) WHERE id = 2;
RESET client_min_messages;
SELECT 'u' AS t, * FROM kept('u', 2) UNION ALL SELECT 'u4', * FROM kept('u4', 2);
SELECT count(*) FILTER (WHERE b.hash IS NULL AND p.unit_parts IS NOT NULL) AS written_in_units,
	count(*) FILTER (WHERE b.hash = p.hash AND p.unit_parts > 1) AS kept_in_units
FROM uparts('u') p LEFT JOIN u_before b ON b.tbl = 'u' AND b.id = p.id AND b.value_id = p.value_id AND b.value_offset = p.value_offset
WHERE p.id = 2;
-- a document sent by the client with one value changed: its other parts
-- still named where they were, in their units, the changed one kept as a
-- delta of its old content
UPDATE u_plain SET jb = udoc(3, 100) WHERE id = 3;
UPDATE u4_plain SET jb = udoc(3, 100) WHERE id = 3;
SET client_min_messages = debug1;
UPDATE u SET jb = (SELECT udoc(3, 100)::text::jsonb) WHERE id = 3;
UPDATE u4 SET jb = (SELECT udoc(3, 100)::text::jsonb) WHERE id = 3;
RESET client_min_messages;
SELECT 'u' AS t, * FROM kept('u', 3) UNION ALL SELECT 'u4', * FROM kept('u4', 3);
-- a key removed, then keys appended: each time a delta of the part, in
-- the pointer
UPDATE u SET jb = jb - 'k050' WHERE id = 4;
UPDATE u4 SET jb = jb - 'k050' WHERE id = 4;
UPDATE u_plain SET jb = jb - 'k050' WHERE id = 4;
UPDATE u4_plain SET jb = jb - 'k050' WHERE id = 4;
SELECT 'u' AS t, * FROM kept('u', 4) UNION ALL SELECT 'u4', * FROM kept('u4', 4);
SELECT reads_differ('u') AS u_differ, reads_differ('u4') AS u4_differ;
UPDATE u SET jb = jb || jsonb_build_object('k201', repeat(md5('x'), 5), 'k202', jsonb_build_array(202, 'y')) WHERE id = 4;
UPDATE u4 SET jb = jb || jsonb_build_object('k201', repeat(md5('x'), 5), 'k202', jsonb_build_array(202, 'y')) WHERE id = 4;
UPDATE u_plain SET jb = jb || jsonb_build_object('k201', repeat(md5('x'), 5), 'k202', jsonb_build_array(202, 'y')) WHERE id = 4;
UPDATE u4_plain SET jb = jb || jsonb_build_object('k201', repeat(md5('x'), 5), 'k202', jsonb_build_array(202, 'y')) WHERE id = 4;
SELECT 'u' AS t, * FROM kept('u', 4) UNION ALL SELECT 'u4', * FROM kept('u4', 4);
-- a row without units, edited the same way: a delta of a part on its own
UPDATE u SET jb = jsonb_set(jb, '{k050}', to_jsonb((jb ->> 'k050') || 'x')) WHERE id = 9;
UPDATE u_plain SET jb = jsonb_set(jb, '{k050}', to_jsonb((jb ->> 'k050') || 'x')) WHERE id = 9;
SELECT * FROM kept('u', 9);
SELECT reads_differ('u') AS u_differ, reads_differ('u4') AS u4_differ;
VACUUM u;
VACUUM u4;
SELECT jt_test_toast_ok('u') AS u_toast, jt_test_toast_ok('u4') AS u4_toast;
SELECT reads_differ('u') AS u_differ, reads_differ('u4') AS u4_differ;

-- Format versions.  In format version 5, a document sent whole is written
-- in version 5, none of its parts in a unit (a reader of version 5 would
-- not find them): none of the old value's parts, all in units, is kept;
-- an INSERT is written in version 5 too
SET jsonb_toaster.format_version = 5;
UPDATE u SET jb = (SELECT udoc(5, 10)::text::jsonb) WHERE id = 5;
INSERT INTO u SELECT 11, udoc(11);
-- and a small edit of one part of a stored value of version 6: the pointer
-- jsonb_set() returns, patched from the old one, is of version 6, which
-- the toaster does not take in format version 5 (jt_adopt()): the general
-- path writes version 5
UPDATE u SET jb = jsonb_set(jb, '{k010}', to_jsonb((jb ->> 'k010') || 'x')) WHERE id = 6;
SET jsonb_toaster.format_version = 6;
UPDATE u_plain SET jb = udoc(5, 10) WHERE id = 5;
INSERT INTO u_plain SELECT 11, udoc(11);
UPDATE u_plain SET jb = jsonb_set(jb, '{k010}', to_jsonb((jb ->> 'k010') || 'x')) WHERE id = 6;
SELECT id, jt_test_format_version(jb) AS version,
	(SELECT count(*) FROM uparts('u') p WHERE p.id = u.id) AS parts,
	(SELECT count(*) FROM uparts('u') p WHERE p.id = u.id AND p.unit_parts IS NOT NULL) AS unit_parts,
	(SELECT count(*) FROM uparts('u') p JOIN u_before b ON b.tbl = 'u' AND b.id = p.id
		AND b.value_id = p.value_id AND b.value_offset = p.value_offset WHERE p.id = u.id) AS kept
FROM u WHERE id IN (5, 6, 11) ORDER BY id;
SELECT parts_read('u', 5, 5) AND parts_read('u', 11, 11) AS parts_read;
SELECT reads_differ('u') AS differ;
-- and back: a document sent whole for a value of version 5 is written in
-- version 6, keeping the old value's parts (in no unit), two of them as
-- deltas; a small edit of one part of a value of version 5 keeps its
-- version, as deltas.sql shows for older versions
DELETE FROM u_before WHERE tbl = 'u' AND id IN (5, 11);
INSERT INTO u_before SELECT 'u', id, value_id, value_offset, hash, unit_parts FROM uparts('u') WHERE id IN (5, 11);
UPDATE u SET jb = (SELECT udoc(5, 20)::text::jsonb) WHERE id = 5;
UPDATE u SET jb = jsonb_set(jb, '{k020}', to_jsonb((jb ->> 'k020') || 'x')) WHERE id = 11;
UPDATE u_plain SET jb = udoc(5, 20) WHERE id = 5;
UPDATE u_plain SET jb = jsonb_set(jb, '{k020}', to_jsonb((jb ->> 'k020') || 'x')) WHERE id = 11;
SELECT id, jt_test_format_version(jb) AS version, k.*
FROM u, kept('u', u.id) k WHERE id IN (5, 11) ORDER BY id;
SELECT reads_differ('u') AS differ;
VACUUM u;
SELECT jt_test_toast_ok('u');

-- Rewrites copy each value once, whole, byte for byte, its units with it
CREATE TABLE flat_before AS SELECT 'u'::text AS tbl, id, jt_test_flat_bytes(jb) AS b FROM u
UNION ALL SELECT 'u4', id, jt_test_flat_bytes(jb) FROM u4;
CREATE FUNCTION changed(rel regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM flat_before f FULL JOIN %s t USING (id)
		WHERE f.tbl = %L AND f.b IS DISTINCT FROM jt_test_flat_bytes(t.jb)', rel, rel)
		INTO n;
	RETURN n;
END $$;
CREATE TABLE units_before AS SELECT 'u'::text AS tbl, id, count(*) AS in_units FROM uparts('u')
WHERE unit_parts IS NOT NULL GROUP BY id
UNION ALL SELECT 'u4', id, count(*) FROM uparts('u4') WHERE unit_parts IS NOT NULL GROUP BY id;
VACUUM FULL u;
VACUUM FULL u4;
SELECT jt_test_toast_ok('u') AS u_toast, jt_test_toast_ok('u4') AS u4_toast,
	changed('u') AS u_changed, changed('u4') AS u4_changed;
CLUSTER u USING u_pkey;
CLUSTER u4 USING u4_pkey;
SELECT jt_test_toast_ok('u') AS u_toast, jt_test_toast_ok('u4') AS u4_toast,
	changed('u') AS u_changed, changed('u4') AS u4_changed;
SELECT reads_differ('u') AS u_differ, reads_differ('u4') AS u4_differ;
SELECT count(*) AS rows_with_units,
	count(*) FILTER (WHERE b.in_units IS DISTINCT FROM a.in_units) AS units_lost
FROM units_before b FULL JOIN (SELECT 'u'::text AS tbl, id, count(*) AS in_units FROM uparts('u')
	WHERE unit_parts IS NOT NULL GROUP BY id
	UNION ALL SELECT 'u4', id, count(*) FROM uparts('u4') WHERE unit_parts IS NOT NULL GROUP BY id) a
	USING (tbl, id);
SELECT 'pglz' AS method, * FROM layout('u', 7, 8)
UNION ALL SELECT 'lz4', * FROM layout('u4', 5, 8);
DROP TABLE flat_before, units_before;
DROP FUNCTION changed(regclass);

-- Directory entries forged to name impossible units: every read of the
-- forged part raises an ERROR for corrupt data, never answers something
-- else.  An impossible index or part count is seen when the directory
-- holding the entry is read (in u the root's, whatever key is read; in sm
-- that of "small", not read for "big"); a raw offset past the unit's end
-- when the unit is decoded, so that a read of another part still answers,
-- and rightly.
-- Run a query, report its result or its error in a stable form: SQLSTATE
-- and message with numbers and TOAST relation names masked
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
-- small units: parts of about 100 to 500 bytes, a few to a unit of 600
-- bytes, which compresses to fewer bytes than a unit can have parts
SET jsonb_toaster.range_size = 64;
SET jsonb_toaster.unit_size = 600;
CREATE TABLE sm (id int PRIMARY KEY, jb jsonb);
ALTER TABLE sm ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE sm_plain (id int PRIMARY KEY, jb jsonb);
INSERT INTO sm SELECT 7, jsonb_build_object('big', (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 100) g),
	'small', (SELECT jsonb_object_agg(format('s%s', lpad(j::text, 3, '0')), repeat('a', 40)) FROM generate_series(1, 100) j));
INSERT INTO sm_plain SELECT * FROM sm;
SET jsonb_toaster.range_size = 1024;
RESET jsonb_toaster.unit_size;
SELECT * FROM layout('sm', 7, 7, 600);
-- The parts of row 7 of a table in the root object (in sm, in "small"),
-- with the path to the first key each holds (keys are in order, a part
-- holds "count" of them)
CREATE FUNCTION targets(rel regclass) RETURNS TABLE (partno int, unit_index int,
	unit_parts int, unit_offset int, raw_size int, stored_size int, last_in_unit boolean,
	key text[]) LANGUAGE sql AS $$
	SELECT p.partno, p.unit_index, p.unit_parts, p.unit_offset, p.raw_size, p.stored_size,
		p.unit_index = p.unit_parts - 1,
		p.path || (CASE WHEN rel = 'sm'::regclass THEN 's' ELSE 'k' END ||
			lpad((sum(p.count) OVER (ORDER BY p.partno) - p.count + 1)::text, 3, '0'))
	FROM uparts(rel) p WHERE p.id = 7 AND p.path = CASE WHEN rel = 'sm'::regclass THEN '{small}'::text[] ELSE '{}' END
$$;
-- the paths name keys of the documents, each in a part of its own
SELECT (SELECT count(*) FROM targets('u') t, u_plain p WHERE p.id = 7 AND p.jb #> t.key IS NOT NULL) AS u_keys,
	(SELECT count(DISTINCT key) FROM targets('u')) AS u_parts,
	(SELECT count(*) FROM targets('sm') t, sm_plain p WHERE p.id = 7 AND p.jb #> t.key IS NOT NULL) AS sm_keys,
	(SELECT count(DISTINCT key) FROM targets('sm')) AS sm_parts;
-- The forged entries: the part, its index in its unit, the unit's part
-- count and the part's raw offset in the unit; the path to a key in the
-- part, and to one in another part ("other")
CREATE TABLE forge (name text, rel text, partno int, unit_index int, unit_parts int,
	unit_offset int, key text[], other text[]);
-- as stored: the reads below work on an entry left as it was
INSERT INTO forge SELECT 'as stored', 'u', partno, unit_index, unit_parts, unit_offset, key, '{k119}'
FROM targets('u') WHERE unit_index = 1 AND unit_parts > 2 ORDER BY partno LIMIT 1;
INSERT INTO forge SELECT 'index = part count', 'u', partno, unit_parts, unit_parts, unit_offset, key, '{k119}'
FROM targets('u') WHERE unit_index = 1 AND unit_parts > 2 ORDER BY partno LIMIT 1;
INSERT INTO forge SELECT 'index past part count', 'u', partno, 200, unit_parts, unit_offset, key, '{k119}'
FROM targets('u') WHERE unit_index = 1 AND unit_parts > 2 ORDER BY partno LIMIT 1;
INSERT INTO forge SELECT 'lz4: index = part count', 'u4', partno, unit_parts, unit_parts, unit_offset, key, '{k119}'
FROM targets('u4') WHERE unit_index = 1 AND unit_parts > 2 ORDER BY partno LIMIT 1;
-- offset 65000: past what a unit can hold, for a part larger than 535
-- bytes; for a smaller one, past the end of the unit, which its stream
-- tells
INSERT INTO forge SELECT 'offset 65000, large part', 'u', partno, unit_index, unit_parts, 65000, key, '{k119}'
FROM targets('u') WHERE unit_parts > 2 AND raw_size > 1000 ORDER BY partno LIMIT 1;
INSERT INTO forge SELECT 'offset 65000, small part', 'u', partno, unit_index, unit_parts, 65000, key, '{k119}'
FROM targets('u') WHERE unit_parts > 2 AND raw_size < 500 ORDER BY partno LIMIT 1;
INSERT INTO forge SELECT 'lz4: offset 65000, small part', 'u4', partno, unit_index, unit_parts, 65000, key, '{k119}'
FROM targets('u4') WHERE unit_parts > 2 AND raw_size < 500 ORDER BY partno LIMIT 1;
-- the last part of a unit running one byte past its end
INSERT INTO forge SELECT 'last part one byte past', 'u', partno, unit_index, unit_parts, unit_offset + 1, key, '{k119}'
FROM targets('u') WHERE last_in_unit AND unit_parts > 2 ORDER BY partno LIMIT 1;
INSERT INTO forge SELECT 'lz4: last part one byte past', 'u4', partno, unit_index, unit_parts, unit_offset + 1, key, '{k119}'
FROM targets('u4') WHERE last_in_unit AND unit_parts > 2 ORDER BY partno LIMIT 1;
-- a part said to start where another part of its unit of the same kind
-- and count starts: the unit's parts follow one another in a reference,
-- and a part cut from its unit must hash as its entry says
INSERT INTO forge SELECT 'first part at another''s start', 'u', a.partno, a.unit_index,
	a.unit_parts, b.unit_offset, a.key, '{k119}'
FROM targets('u') a JOIN targets('u') b ON b.unit_parts = a.unit_parts
	AND b.partno > a.partno AND b.raw_size = a.raw_size AND b.unit_index > 1
WHERE a.unit_index = 0 ORDER BY a.partno, b.partno LIMIT 1;
INSERT INTO forge SELECT 'lz4: first part at another''s start', 'u4', a.partno, a.unit_index,
	a.unit_parts, b.unit_offset, a.key, '{k119}'
FROM targets('u4') a JOIN targets('u4') b ON b.unit_parts = a.unit_parts
	AND b.partno > a.partno AND b.raw_size = a.raw_size AND b.unit_index > 1
WHERE a.unit_index = 0 ORDER BY a.partno, b.partno LIMIT 1;
-- more parts than the smallest unit has stored bytes
SELECT stored_size < 255 AS small_unit, unit_parts > 1 AS several_parts
FROM targets('sm') WHERE unit_parts IS NOT NULL ORDER BY stored_size, partno LIMIT 1;
INSERT INTO forge SELECT 'small: as stored', 'sm', partno, unit_index, unit_parts, unit_offset, key, '{big}'
FROM targets('sm') WHERE unit_parts IS NOT NULL ORDER BY stored_size, partno LIMIT 1;
INSERT INTO forge SELECT 'small: 255 parts', 'sm', partno, unit_index, 255, unit_offset, key, '{big}'
FROM targets('sm') WHERE unit_parts IS NOT NULL ORDER BY stored_size, partno LIMIT 1;
SELECT count(*) AS forged FROM forge;
-- each forged value read whole (its bytes, its text), through the key in
-- the forged part, and through a key in another part: "ok: true" is the
-- plain copy's answer
SELECT f.name, r.how, try(format('SELECT %s FROM %s t JOIN %s_plain p USING (id) WHERE id = 7',
		format(r.expr, format('jt_test_skeleton_set_unit(t.jb, %s, %s, %s, %s)',
			f.partno, f.unit_index, f.unit_parts, f.unit_offset), f.key, f.other,
			(SELECT string_agg(format('-> %L', k), ' ') FROM unnest(f.key) k)),
		f.rel, f.rel)) AS result
FROM forge f, (VALUES
	(1, 'bytes', 'jt_test_flat_bytes(%1$s) = jt_test_flat_bytes(p.jb)'),
	(2, 'text', '(%1$s)::text = p.jb::text'),
	(3, 'its key, #>', '(%1$s) #> %2$L = p.jb #> %2$L'),
	(4, 'its key, ->', '(%1$s) %4$s = p.jb %4$s'),
	(5, 'other key', '(%1$s) #> %3$L = p.jb #> %3$L')
) r(n, how, expr)
ORDER BY f.name, r.n;
-- Three long strings, one part each, in one unit (hex digits that pglz
-- does not compress alone, but does together, the three alike): the
-- middle one's entry said to start where the last one starts (the same
-- kind, count and raw size): read whole, and through the key alone, which
-- reads the part without flattening anything, it is reported as corrupt,
-- not read as the other string
CREATE TABLE ls (id int PRIMARY KEY, jb jsonb);
ALTER TABLE ls ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO ls SELECT 1, jsonb_build_object('a', 'a' || r, 'b', 'b' || r, 'c', 'c' || r, 'k', 1)
FROM (SELECT string_agg(encode(sha512(int4send(g)), 'hex'), '') AS r
	  FROM generate_series(1, 24) g) s;
SELECT count(*) AS parts, count(DISTINCT stored_offset) AS units, min(unit_parts) AS unit_parts,
	count(DISTINCT raw_size) AS sizes
FROM uparts('ls');
SELECT try(format('SELECT jt_test_skeleton_set_unit(jb, %s, %s, %s, %s) ->> %L FROM ls',
		b.partno, b.unit_index, b.unit_parts, c.unit_offset, 'b')) AS b_key,
	try(format('SELECT left(jt_test_skeleton_set_unit(jb, %s, %s, %s, %s)::text, 20) FROM ls',
		b.partno, b.unit_index, b.unit_parts, c.unit_offset)) AS whole,
	try(format('SELECT jt_test_skeleton_set_unit(jb, %s, %s, %s, %s) ->> %L FROM ls',
		b.partno, b.unit_index, b.unit_parts, c.unit_offset, 'k')) AS other_key
FROM uparts('ls') b, uparts('ls') c WHERE b.path = '{b}' AND c.path = '{c}';
DROP TABLE ls;

DROP TABLE forge, sm, sm_plain;
DROP FUNCTION try(text), targets(regclass);

-- Parts of one unit replaced in one statement, the last first: the parts
-- written name a unit of their own in the order they were changed, not
-- that of the document, and read back; so do the values after a rewrite
CREATE TABLE ro (id int PRIMARY KEY, jb jsonb);
ALTER TABLE ro ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE ro_plain (id int PRIMARY KEY, jb jsonb);
INSERT INTO ro SELECT 1, udoc(1);
INSERT INTO ro_plain SELECT 1, udoc(1);
CREATE TEMP TABLE ro_before AS SELECT value_id FROM uparts('ro');
UPDATE ro_plain SET jb = jsonb_set(jsonb_set(jsonb_set(jb, '{k070}', to_jsonb(repeat('x', 600))),
	'{k040}', to_jsonb(repeat('y', 600))), '{k005}', to_jsonb(repeat('z', 600)));
SET client_min_messages = debug1;
UPDATE ro SET jb = jsonb_set(jsonb_set(jsonb_set(jb, '{k070}', to_jsonb(repeat('x', 600))),
	'{k040}', to_jsonb(repeat('y', 600))), '{k005}', to_jsonb(repeat('z', 600)));
RESET client_min_messages;
SELECT string_agg(unit_index::text, ',' ORDER BY partno) AS new_parts_unit_indexes
FROM uparts('ro') WHERE value_id NOT IN (SELECT value_id FROM ro_before);
SELECT jt_test_flat_bytes(ro.jb) = jt_test_flat_bytes(p.jb) AS same_bytes,
	ro.jb -> 'k005' = p.jb -> 'k005' AND ro.jb -> 'k040' = p.jb -> 'k040'
		AND ro.jb -> 'k070' = p.jb -> 'k070' AS same_keys
FROM ro JOIN ro_plain p USING (id);
VACUUM FULL ro;
SELECT jt_test_flat_bytes(ro.jb) = jt_test_flat_bytes(p.jb) AS same_after_rewrite, jt_test_toast_ok('ro')
FROM ro JOIN ro_plain p USING (id);
DROP TABLE ro, ro_plain, ro_before;

-- An lz4 unit of several chunks whose first half does not compress and
-- whose second half does: an UPDATE reading one part of it fetches and
-- decodes the unit as far as the part ends, which is past the first chunk
-- for parts of the first half.  Four rows of that document, each setting a
-- key in a part at another place of the unit: the same bytes as jsonb_set
-- on a standard column.
CREATE TABLE lu (id int PRIMARY KEY, jb jsonb COMPRESSION lz4);
ALTER TABLE lu ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE lu_plain (id int PRIMARY KEY, jb jsonb COMPRESSION lz4);
CREATE TABLE lu_keys (id int PRIMARY KEY, k text);
INSERT INTO lu_keys VALUES (1, 'k003'), (2, 'k020'), (3, 'k049'), (4, 'k090');
INSERT INTO lu SELECT id, jsonb_build_object('k', 1, 'o',
	(SELECT jsonb_object_agg('k' || lpad(g::text, 3, '0'),
		CASE WHEN g < 50 THEN encode(sha512(int4send(g)), 'hex') ELSE repeat('ab', 64) END)
	 FROM generate_series(0, 99) g))
FROM lu_keys;
INSERT INTO lu_plain SELECT * FROM lu;
SELECT count(*) AS parts, count(DISTINCT stored_offset) AS units, min(unit_parts) AS unit_parts,
	min(compression) AS compression, max(stored_size) > 4000 AS several_chunks
FROM uparts('lu') WHERE id = 1;
UPDATE lu SET jb = jsonb_set(jb, ARRAY['o', k], '"x"') FROM lu_keys WHERE lu_keys.id = lu.id;
SELECT k, jt_test_flat_bytes(lu.jb) = jt_test_flat_bytes(jsonb_set(p.jb, ARRAY['o', k], '"x"')) AS same
FROM lu JOIN lu_plain p USING (id) JOIN lu_keys USING (id) ORDER BY id;
DROP TABLE lu, lu_plain, lu_keys;

-- the setting's bounds
SET jsonb_toaster.unit_size = -1;
SET jsonb_toaster.unit_size = 65536;
SET jsonb_toaster.unit_size = 65535;
SHOW jsonb_toaster.unit_size;
RESET jsonb_toaster.unit_size;
SHOW jsonb_toaster.unit_size;

-- DELETE takes every value
DELETE FROM u;
DELETE FROM u4;
VACUUM u;
VACUUM u4;
SELECT jt_test_toast_ok('u') AS u_toast, jt_test_toast_ok('u4') AS u4_toast;

DROP TABLE u, u_plain, u4, u4_plain, u_before;
DROP FUNCTION udoc(int, int), uparts(regclass), uvalues(regclass),
	layout(regclass, int, int, int), parts_read(regclass, int, int), reads_differ(regclass),
	kept(regclass, int);
RESET jsonb_toaster.range_size;
