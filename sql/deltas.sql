--
-- Parts kept as deltas (patched servers only): an UPDATE that changes one
-- part of a stored document by a small edit keeps the old part, as the
-- base of the new content, and stores only the edit, in the pointer.
-- Every reader gets the content, byte for byte; nothing is leaked.
--
-- The trees of this file's documents stay in the row (format version 6),
-- whose directories it reads and forges; tree_outside.sql has version 7.
SET jsonb_toaster.format_version = 6;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster_test;

-- TOAST rows equal the chunks of the live values, each value counted once

-- a root object of 200 short keys: it leaves the row whole, in ranges
SET jsonb_toaster.range_size = 512;
SET jsonb_toaster.inline_budget = 1080;
CREATE TABLE d (id int PRIMARY KEY, jb jsonb);
ALTER TABLE d ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO d SELECT i, (SELECT jsonb_object_agg(format('k%s', lpad(j::text, 3, '0')),
		CASE j % 3 WHEN 0 THEN to_jsonb(j * i)
			WHEN 1 THEN to_jsonb(repeat('v', j % 17))
			ELSE jsonb_build_array(j, 'x', jsonb_build_object('n', j)) END)
	FROM generate_series(1, 200) j)
FROM generate_series(1, 3) i;
CREATE TABLE plain AS SELECT * FROM d;	-- not opted in: standard jsonb
CREATE TABLE before AS SELECT d.id, p.range, p.value_id, p.value_offset, p.hash FROM d, jsonb_toaster_parts(jb) p;

-- each row: the same bytes as the standard copy; its parts kept from
-- before (value id), and of those, how many changed (a kept value id with
-- another hash: a delta of the part stored under it)
CREATE FUNCTION check_rows() RETURNS TABLE (id int, same boolean, parts bigint,
	kept bigint, deltas bigint) LANGUAGE sql AS $$
	SELECT d.id, jt_test_flat_bytes(d.jb) = jt_test_flat_bytes(p.jb),
		(SELECT count(*) FROM jsonb_toaster_parts(d.jb)),
		(SELECT count(*) FROM jsonb_toaster_parts(d.jb) q
		 WHERE (q.value_id, q.value_offset) IN (SELECT value_id, value_offset FROM before b WHERE b.id = d.id)),
		(SELECT count(*) FROM jsonb_toaster_parts(d.jb) q
		 WHERE EXISTS (SELECT FROM before b WHERE b.id = d.id
					   AND b.value_id = q.value_id AND b.value_offset = q.value_offset AND b.hash <> q.hash))
	FROM d JOIN plain p USING (id) ORDER BY d.id
$$;
-- every key (and one missing) read through each accessor, against the copy
CREATE FUNCTION check_reads() RETURNS TABLE (id int, differing bigint) LANGUAGE sql AS $$
	SELECT d.id, count(*) FILTER (WHERE
		d.jb -> k IS DISTINCT FROM p.jb -> k OR
		d.jb ->> k IS DISTINCT FROM p.jb ->> k OR
		d.jb #> ARRAY[k, '2', 'n'] IS DISTINCT FROM p.jb #> ARRAY[k, '2', 'n'] OR
		d.jb #>> ARRAY[k, '0'] IS DISTINCT FROM p.jb #>> ARRAY[k, '0'] OR
		(d.jb ? k) <> (p.jb ? k))
	FROM d JOIN plain p USING (id),
		(SELECT format('k%s', lpad(j::text, 3, '0')) FROM generate_series(0, 201) j
		 UNION ALL SELECT 'k150x') keys(k)
	GROUP BY d.id ORDER BY d.id
$$;

-- one value set, one key removed, one added: each row keeps every part,
-- one of them now a delta of the part it was
SET client_min_messages = debug1;
UPDATE d SET jb = jsonb_set(jb, '{k150}', '"set"') WHERE id = 1;
UPDATE d SET jb = jb - 'k100' WHERE id = 2;
UPDATE d SET jb = jb || '{"k050x": [true]}' WHERE id = 3;
RESET client_min_messages;
UPDATE plain SET jb = jsonb_set(jb, '{k150}', '"set"') WHERE id = 1;
UPDATE plain SET jb = jb - 'k100' WHERE id = 2;
UPDATE plain SET jb = jb || '{"k050x": [true]}' WHERE id = 3;
SELECT * FROM check_rows();
SELECT * FROM check_reads();
SELECT id, (jsonb_toaster_storage(jb)).form, jb = (SELECT jb FROM plain p WHERE p.id = d.id) AS equal,
	jb::text = (SELECT jb::text FROM plain p WHERE p.id = d.id) AS same_text
FROM d ORDER BY id;

-- more edits of the same part: each is a delta of the same base
UPDATE d SET jb = jsonb_set(jb, '{k151}', '151') WHERE id = 1;
UPDATE d SET jb = jb - 'k152' WHERE id = 1;
UPDATE d SET jb = jsonb_set(jb, '{k150}', '{"again": 1}') WHERE id = 1;
UPDATE plain SET jb = jsonb_set(jb, '{k151}', '151') WHERE id = 1;
UPDATE plain SET jb = jb - 'k152' WHERE id = 1;
UPDATE plain SET jb = jsonb_set(jb, '{k150}', '{"again": 1}') WHERE id = 1;
-- and an edit of another part: two deltas in one pointer
UPDATE d SET jb = jsonb_set(jb, '{k010}', '"ten"') WHERE id = 1;
UPDATE plain SET jb = jsonb_set(jb, '{k010}', '"ten"') WHERE id = 1;
SELECT * FROM check_rows();
SELECT * FROM check_reads();

-- an edit too large for a delta: the part is written anew, and its base
-- deleted
SET client_min_messages = debug1;
UPDATE d SET jb = jsonb_set(jb, '{k100}', to_jsonb(repeat('w', 300))) WHERE id = 3;
RESET client_min_messages;
UPDATE plain SET jb = jsonb_set(jb, '{k100}', to_jsonb(repeat('w', 300))) WHERE id = 3;
SELECT * FROM check_rows();

-- an abort, and savepoints
BEGIN;
UPDATE d SET jb = jsonb_set(jb, '{k020}', '"aborted"');
ROLLBACK;
BEGIN;
UPDATE d SET jb = jsonb_set(jb, '{k021}', '21') WHERE id = 2;
SAVEPOINT s;
UPDATE d SET jb = jsonb_set(jb, '{k022}', '"rolled back"') WHERE id = 2;
ROLLBACK TO SAVEPOINT s;
UPDATE d SET jb = jb - 'k023' WHERE id = 2;
COMMIT;
UPDATE plain SET jb = jsonb_set(jb, '{k021}', '21') WHERE id = 2;
UPDATE plain SET jb = jb - 'k023' WHERE id = 2;
SELECT * FROM check_rows();
VACUUM d;
SELECT jt_test_toast_ok('d');

-- the value of a row with deltas in another table, and the whole
-- document sent back by a client: the general path takes over the parts
-- whose content it finds stored, and keeps an edited one as a delta of the
-- old part in its place: here the parts kept as deltas stay deltas of the
-- same bases
CREATE TABLE e (id int PRIMARY KEY, jb jsonb);
ALTER TABLE e ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO e SELECT * FROM d;
SELECT count(*) FILTER (WHERE jt_test_flat_bytes(e.jb) = jt_test_flat_bytes(p.jb)) AS same
FROM e JOIN plain p USING (id);
UPDATE d SET jb = (SELECT p.jb::text::jsonb FROM plain p WHERE p.id = d.id) WHERE id = 1;
SELECT * FROM check_rows();
VACUUM d;
SELECT jt_test_toast_ok('d');

-- damaged delta records: an ERROR, never another document (row 4, a
-- fresh copy of row 1's document with one value set: one delta)
INSERT INTO d SELECT 4, jb::text::jsonb FROM plain WHERE id = 1;
INSERT INTO plain SELECT 4, jb FROM plain WHERE id = 1;
INSERT INTO before SELECT 4, p.range, p.value_id, p.value_offset, p.hash FROM d, jsonb_toaster_parts(jb) p WHERE d.id = 4;
UPDATE d SET jb = jsonb_set(jb, '{k151}', '"again"') WHERE id = 4;
UPDATE plain SET jb = jsonb_set(jb, '{k151}', '"again"') WHERE id = 4;
SELECT * FROM check_rows() WHERE id = 4;
SELECT q.range AS delta_part, q.raw_size, q.stored_size, q.value_id
FROM d, jsonb_toaster_parts(jb) q
WHERE d.id = 4 AND (q.value_id, q.value_offset, q.hash) NOT IN (SELECT value_id, value_offset, hash FROM before WHERE id = 4)
  AND (q.value_id, q.value_offset) IN (SELECT value_id, value_offset FROM before WHERE id = 4) \gset
SELECT jt_test_skeleton_set_delta(jb, 0, 0) -> 'k151' FROM d WHERE id = 4;
SELECT jt_test_skeleton_set_delta(jb, 9999, 0)::text FROM d WHERE id = 4;
SELECT jt_test_skeleton_set_delta(jb, 1, 9999)::text FROM d WHERE id = 4;
SELECT jsonb_set(jt_test_skeleton_set_delta(jb, 0, 0), '{k151}', '1') IS NULL FROM d WHERE id = 4;
-- edits that fit the base but are not the one made: the content's hash
SELECT jt_test_skeleton_set_delta(jb, 0, 1)::text FROM d WHERE id = 4;
SELECT jt_test_skeleton_set_delta(jb, 2, 1)::text FROM d WHERE id = 4;
-- a part whose entry claims another size than its delta gives
SELECT jt_test_skeleton_set_part(jb, :delta_part, :raw_size + 4, :stored_size, :value_id) -> 'k151'
FROM d WHERE id = 4;
SELECT jt_test_skeleton_set_part(jb, :delta_part, :raw_size - 4, :stored_size, :value_id)::text
FROM d WHERE id = 4;

-- a part changed too much for a delta is carried whole by the pointer
-- jsonb_set() returns (a replacement record): the UPDATE that adopts it
-- writes that part alone, and the old part goes with the old row version;
-- read, or stored elsewhere, that pointer is the document
CREATE TABLE w (id int PRIMARY KEY, jb jsonb);
ALTER TABLE w ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO w SELECT id, jb::text::jsonb FROM plain WHERE id <= 2;
CREATE TABLE wplain AS SELECT id, jb FROM plain WHERE id <= 2;
CREATE TABLE wbefore AS SELECT w.id, p.value_id, p.value_offset FROM w, jsonb_toaster_parts(jb) p;
CREATE FUNCTION check_w() RETURNS TABLE (id int, same boolean, parts bigint,
	kept bigint) LANGUAGE sql AS $$
	SELECT w.id, jt_test_flat_bytes(w.jb) = jt_test_flat_bytes(p.jb),
		(SELECT count(*) FROM jsonb_toaster_parts(w.jb)),
		(SELECT count(*) FROM jsonb_toaster_parts(w.jb) q
		 WHERE (q.value_id, q.value_offset) IN (SELECT value_id, value_offset FROM wbefore b WHERE b.id = w.id))
	FROM w JOIN wplain p USING (id) ORDER BY w.id
$$;
SELECT * FROM check_w();
SET client_min_messages = debug1;
UPDATE w SET jb = jsonb_set(jb, '{k120}', to_jsonb(repeat('x', 300))) WHERE id = 1;
RESET client_min_messages;
UPDATE wplain SET jb = jsonb_set(jb, '{k120}', to_jsonb(repeat('x', 300))) WHERE id = 1;
-- two parts changed in one expression: both carried, both written
SET client_min_messages = debug1;
UPDATE w SET jb = jsonb_set(jsonb_set(jb, '{k020}', to_jsonb(repeat('y', 300))),
							'{k180}', to_jsonb(repeat('z', 300))) WHERE id = 2;
RESET client_min_messages;
UPDATE wplain SET jb = jsonb_set(jsonb_set(jb, '{k020}', to_jsonb(repeat('y', 300))),
								 '{k180}', to_jsonb(repeat('z', 300))) WHERE id = 2;
SELECT * FROM check_w();
-- one part changed twice in one expression: carried once
UPDATE w SET jb = jsonb_set(jsonb_set(jb, '{k090}', to_jsonb(repeat('p', 300))),
							'{k091}', to_jsonb(repeat('q', 300))) WHERE id = 1;
UPDATE wplain SET jb = jsonb_set(jsonb_set(jb, '{k090}', to_jsonb(repeat('p', 300))),
								 '{k091}', to_jsonb(repeat('q', 300))) WHERE id = 1;
SELECT * FROM check_w();
-- the pointer read whole and by key, and stored in another table
SELECT jt_test_flat_bytes(jsonb_set(w.jb, '{k121}', to_jsonb(repeat('v', 300)))) =
	   jt_test_flat_bytes(jsonb_set(p.jb, '{k121}', to_jsonb(repeat('v', 300)))) AS same,
	   jsonb_set(w.jb, '{k121}', to_jsonb(repeat('v', 300))) -> 'k121' =
	   to_jsonb(repeat('v', 300)) AS key_read
FROM w JOIN wplain p USING (id) WHERE id = 1;
INSERT INTO e SELECT 10, jsonb_set(jb, '{k121}', to_jsonb(repeat('v', 300)))
FROM w WHERE id = 1;
SELECT jt_test_flat_bytes(e.jb) =
	   jt_test_flat_bytes(jsonb_set(p.jb, '{k121}', to_jsonb(repeat('v', 300)))) AS same
FROM e, wplain p WHERE e.id = 10 AND p.id = 1;
-- an abort, and a savepoint rolled back: the parts written go with them
BEGIN;
UPDATE w SET jb = jsonb_set(jb, '{k150}', to_jsonb(repeat('a', 300)));
ROLLBACK;
BEGIN;
SAVEPOINT s;
UPDATE w SET jb = jsonb_set(jb, '{k151}', to_jsonb(repeat('b', 300))) WHERE id = 1;
ROLLBACK TO SAVEPOINT s;
UPDATE w SET jb = jsonb_set(jb, '{k152}', to_jsonb(repeat('c', 300))) WHERE id = 2;
COMMIT;
UPDATE wplain SET jb = jsonb_set(jb, '{k152}', to_jsonb(repeat('c', 300))) WHERE id = 2;
SELECT * FROM check_w();
VACUUM w, e;
SELECT jt_test_toast_ok('w'), jt_test_toast_ok('e');
DROP TABLE w, wplain, wbefore;
DROP FUNCTION check_w();

-- rewrites copy every part, bases included, under the same value ids
VACUUM FULL d;
SELECT * FROM check_rows();
SELECT jt_test_toast_ok('d');
CLUSTER d USING d_pkey;
SELECT * FROM check_rows();
SELECT * FROM check_reads();
SELECT jt_test_toast_ok('d');

-- pointers made first and stored after (a materialized CTE): the last
-- one made is adopted at once (the toaster remembers it), the others by
-- listing their parts; either way every part is kept, and VACUUM finds
-- no TOAST row left over
CREATE TEMP TABLE made_before AS
	SELECT d.id, p.value_id, p.value_offset FROM d, jsonb_toaster_parts(jb) p WHERE d.id <= 3;
UPDATE plain SET jb = jsonb_set(jb, '{k040}', to_jsonb(id * 40)) WHERE id <= 3;
SET client_min_messages = debug1;
WITH made AS MATERIALIZED (
	SELECT id, jsonb_set(jb, '{k040}', to_jsonb(id * 40)) AS jb FROM d WHERE id <= 3)
UPDATE d SET jb = made.jb FROM made WHERE d.id = made.id;
RESET client_min_messages;
SELECT c.id, c.same, count(*) FILTER (WHERE (q.value_id, q.value_offset) NOT IN (SELECT value_id, value_offset FROM made_before b WHERE b.id = c.id)) AS new_parts
FROM check_rows() c JOIN d USING (id), jsonb_toaster_parts(d.jb) q
WHERE c.id <= 3 GROUP BY c.id, c.same ORDER BY c.id;
DROP TABLE made_before;
VACUUM d;
SELECT jt_test_toast_ok('d');

-- deletes take the bases with the rest
UPDATE d SET jb = jsonb_set(jb, '{k030}', '30');
UPDATE d SET jb = jsonb_set(jb, '{k031}', '31');
DELETE FROM d;
DELETE FROM e;
VACUUM d, e;
SELECT jt_test_toast_ok('d'), jt_test_toast_ok('e');

-- values written before format version 4 hash their parts by hash_bytes()
-- (version 3), those written now by CRC-32C: a one-part edit of an old
-- value keeps its version, and its delta is checked by the old hash; a
-- client-sent document is matched against an old value by the old hash,
-- shares its parts all the same, and is written in the latest version (with
-- the base of its delta rehashed, so that the next UPDATE shares it too)
CREATE TABLE v3 (id int PRIMARY KEY, jb jsonb);
ALTER TABLE v3 ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
SET jsonb_toaster.format_version = 4;	-- every part a TOAST value of its own
-- room for the directories of both formats, which then cut alike
SET jsonb_toaster.inline_budget = 1380;
INSERT INTO v3 SELECT i, (SELECT jsonb_object_agg(format('k%s', lpad(j::text, 3, '0')),
		md5((i * 1000 + j)::text))
	FROM generate_series(1, 300) j)
FROM generate_series(1, 3) i;
CREATE TABLE v3_plain AS SELECT * FROM v3;	-- standard jsonb
UPDATE v3 SET jb = jt_test_skeleton_legacy_hashes(jb);
SET jsonb_toaster.format_version = 6;
CREATE TABLE v3_before AS SELECT v3.id, p.range, p.value_id, p.value_offset, p.hash FROM v3, jsonb_toaster_parts(jb) p;
SELECT id, jt_test_format_version(jb) AS version FROM v3 ORDER BY id;
UPDATE v3 SET jb = jsonb_set(jb, '{k010}', '"edited"') WHERE id = 1;
UPDATE v3_plain SET jb = jsonb_set(jb, '{k010}', '"edited"') WHERE id = 1;
SET client_min_messages = debug1;
UPDATE v3 SET jb = (SELECT jb::text FROM v3_plain WHERE id = 2)::jsonb || '{"k011": 11}' WHERE id = 2;
RESET client_min_messages;
UPDATE v3_plain SET jb = jb || '{"k011": 11}' WHERE id = 2;
-- each row: its version, the same bytes as the standard copy, and its
-- parts: how many kept from before (value id), and how many stored
-- under a hash of before (kept whole)
CREATE FUNCTION check_v3() RETURNS TABLE (id int, version int, same boolean,
	parts bigint, kept bigint, same_hash bigint) LANGUAGE sql AS $$
	SELECT v3.id, jt_test_format_version(v3.jb),
		jt_test_flat_bytes(v3.jb) = jt_test_flat_bytes(p.jb),
		(SELECT count(*) FROM jsonb_toaster_parts(v3.jb)),
		(SELECT count(*) FROM jsonb_toaster_parts(v3.jb) q
		 WHERE (q.value_id, q.value_offset) IN (SELECT value_id, value_offset FROM v3_before b WHERE b.id = v3.id)),
		(SELECT count(*) FROM jsonb_toaster_parts(v3.jb) q
		 WHERE q.hash IN (SELECT hash FROM v3_before b WHERE b.id = v3.id))
	FROM v3 JOIN v3_plain p USING (id) ORDER BY v3.id
$$;
SELECT * FROM check_v3();
SELECT id, bool_and(v3.jb -> k = p.jb -> k) AS reads_right
FROM v3 JOIN v3_plain p USING (id), jsonb_object_keys(p.jb) k GROUP BY id ORDER BY id;
-- row 2, now of the latest version, sent again with k011 as it first was and
-- another edit: the part of k011 is its delta's base again, found by the
-- base's hash (taken anew when the delta was made) and kept whole, and
-- the other edited part is kept as a delta
DELETE FROM v3_before WHERE id = 2;
INSERT INTO v3_before SELECT 2, p.range, p.value_id, p.value_offset, p.hash FROM v3, jsonb_toaster_parts(jb) p WHERE v3.id = 2;
UPDATE v3_plain SET jb = jb || jsonb_build_object('k011', md5('2011'), 'k150', 150) WHERE id = 2;
SET client_min_messages = debug1;
UPDATE v3 SET jb = (SELECT jb::text FROM v3_plain WHERE id = 2)::jsonb WHERE id = 2;
RESET client_min_messages;
SELECT * FROM check_v3() WHERE id = 2;
VACUUM v3;
SELECT jt_test_toast_ok('v3');
DROP TABLE v3, v3_plain, v3_before;
DROP FUNCTION check_v3();
SET jsonb_toaster.inline_budget = 1080;

-- a part written anew by an UPDATE is compressed only if the part it
-- replaces was: rows 1 and 3's values do not compress (hex digits of
-- hashes), rows 2 and 4's do.  The edit is too large for a delta, and its
-- value would compress in any row; rows 1 and 3's new parts stay
-- uncompressed.  Rows 3 and 4 hold values without layout bytes (format
-- version 2's), so that jsonb_set() flattens the document to learn its
-- size; all four get a pointer that carries the part whole.
CREATE TABLE cz (id int PRIMARY KEY, jb jsonb);
ALTER TABLE cz ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE cz ALTER COLUMN jb SET COMPRESSION pglz;
SET jsonb_toaster.format_version = 4;	-- every part a TOAST value of its own
INSERT INTO cz SELECT i, (SELECT jsonb_object_agg(format('k%s', lpad(j::text, 3, '0')),
		CASE i % 2 WHEN 1 THEN md5(j::text) || md5((-j)::text) ELSE repeat('ab', 32) END)
	FROM generate_series(1, 100) j)
FROM generate_series(1, 4) i;
UPDATE cz SET jb = jt_test_skeleton_without_layouts(jt_test_skeleton_legacy_hashes(jb))
WHERE id > 2;
SET jsonb_toaster.format_version = 6;
CREATE TABLE cz_plain AS SELECT * FROM cz;
CREATE TABLE cz_before AS SELECT cz.id, p.value_id, p.value_offset FROM cz, jsonb_toaster_parts(jb) p;
SELECT id, compression, count(*) FROM cz, jsonb_toaster_parts(jb) GROUP BY 1, 2 ORDER BY 1, 2;
SET client_min_messages = debug1;
UPDATE cz SET jb = jsonb_set(jb, '{k050}', to_jsonb(repeat('w', 301))) WHERE id <= 2;
UPDATE cz SET jb = jsonb_set(jb, '{k050}', to_jsonb(repeat('w', 301))) WHERE id = 3;
UPDATE cz SET jb = jsonb_set(jb, '{k050}', to_jsonb(repeat('w', 301))) WHERE id = 4;
RESET client_min_messages;
UPDATE cz_plain SET jb = jsonb_set(jb, '{k050}', to_jsonb(repeat('w', 301)));
SELECT cz.id, p.compression,
	jt_test_flat_bytes(cz.jb) = jt_test_flat_bytes(c.jb) AS same
FROM cz JOIN cz_plain c USING (id), jsonb_toaster_parts(cz.jb) p
WHERE (p.value_id, p.value_offset) NOT IN (SELECT value_id, value_offset FROM cz_before b WHERE b.id = cz.id)
ORDER BY 1;
VACUUM cz;
SELECT jt_test_toast_ok('cz');
DROP TABLE cz, cz_plain, cz_before;

DROP TABLE d, e, plain, before;
DROP FUNCTION check_rows(), check_reads();
DROP EXTENSION jsonb_toaster_test;
RESET jsonb_toaster.range_size;
RESET jsonb_toaster.inline_budget;
