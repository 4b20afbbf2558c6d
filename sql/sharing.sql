--
-- Parts shared between row versions (patched servers only): an UPDATE
-- keeps the TOAST values of the parts whose content did not change.
--
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster_test;

CREATE FUNCTION toast_rows(rel regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM %s',
				   (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel))
		INTO n;
	RETURN n;
END $$;
-- TOAST rows equal the chunks of the live values, each value counted once
-- a document of n entries in each of three arrays and an object
CREATE FUNCTION doc(id int, n int) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_build_object('id', id, 'name', 'doc ' || id,
		'a', (SELECT jsonb_agg(md5((id * 100000 + i)::text) ORDER BY i) FROM generate_series(1, n) i),
		'b', (SELECT jsonb_agg(i) FROM generate_series(1, n) i),
		'c', (SELECT jsonb_object_agg('k' || i, repeat(chr(97 + i % 26), 20 + i % 17)) FROM generate_series(1, n) i))
$$;
CREATE TABLE parts_of (label text, value_id oid, value_offset int);

SET jsonb_toaster.range_size = 1024;
CREATE TABLE t (id int PRIMARY KEY, other int DEFAULT 0, jb jsonb);
ALTER TABLE t ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO t (id, jb) SELECT i, doc(i, 400) FROM generate_series(1, 4) i;
SELECT id, (jsonb_toaster_storage(jb)).form, count(*) > 10 AS many_parts
FROM t, jsonb_toaster_parts(jb) GROUP BY id, 2 ORDER BY id;

-- value ids of a row's parts before and after an UPDATE: how many kept
CREATE FUNCTION remember(label text, row_id int) RETURNS void LANGUAGE sql AS $$
	DELETE FROM parts_of WHERE parts_of.label = remember.label;
	INSERT INTO parts_of SELECT remember.label, p.value_id, p.value_offset FROM t, jsonb_toaster_parts(t.jb) p WHERE t.id = row_id;
$$;
CREATE FUNCTION kept(label text, row_id int, OUT kept bigint, OUT new bigint) LANGUAGE sql AS $$
	SELECT count(*) FILTER (WHERE (p.value_id, p.value_offset) IN (SELECT value_id, value_offset FROM parts_of WHERE parts_of.label = kept.label)),
		count(*) FILTER (WHERE (p.value_id, p.value_offset) NOT IN (SELECT value_id, value_offset FROM parts_of WHERE parts_of.label = kept.label))
	FROM t, jsonb_toaster_parts(t.jb) p WHERE t.id = row_id
$$;

-- every way of producing the new value: one part changes, the rest is
-- kept; the changed one is kept too, as the base of a delta (delta.h)
SELECT remember('1', 1);
UPDATE t SET jb = jsonb_set(jb, '{a,200}', '"changed"') WHERE id = 1;
SELECT * FROM kept('1', 1);
SELECT remember('1', 1);
UPDATE t SET jb = jb || '{"name": "renamed"}' WHERE id = 1;
SELECT * FROM kept('1', 1);
SELECT remember('1', 1);
UPDATE t SET jb = jb #- '{c,k100}' WHERE id = 1;
SELECT * FROM kept('1', 1);
SELECT remember('1', 1);
UPDATE t SET jb['b'][399] = '0' WHERE id = 1;
SELECT * FROM kept('1', 1);
SELECT remember('1', 1);
UPDATE t SET jb = jsonb_set(jb, '{a}', (jb -> 'a') || '"appended"') WHERE id = 1;
SELECT * FROM kept('1', 1);
-- a client sending the whole document again, as text
SELECT remember('1', 1);
UPDATE t SET jb = (SELECT jb::text FROM t WHERE id = 1)::jsonb WHERE id = 1;
SELECT * FROM kept('1', 1);
-- an UPDATE compares with the copies of the parts kept when the same
-- stored value was flattened in the same transaction (DEBUG1 says when);
-- copies of another value, or from an earlier transaction, are not used
CREATE FUNCTION small_doc(row_id int, edit int) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_build_object('row', row_id,
		'a', jsonb_set(doc(1, 300) -> 'a', ARRAY[edit::text], '"edited"'))
$$;
CREATE FUNCTION read_then_update(row_id int, edit int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM octet_length(jb::text) FROM small WHERE id = row_id;
	UPDATE small SET jb = small_doc(row_id, edit) WHERE id = row_id;
END
$$;
CREATE TABLE small (id int PRIMARY KEY, jb jsonb);
ALTER TABLE small ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO small SELECT i, small_doc(i, 0) FROM generate_series(1, 2) i;
SELECT id, count(*) AS parts FROM small, jsonb_toaster_parts(jb) GROUP BY id ORDER BY id;
CREATE TEMP TABLE small_before AS SELECT s.id, p.value_id, p.value_offset FROM small s, jsonb_toaster_parts(jb) p;
SET client_min_messages = debug1;
UPDATE small SET jb = jsonb_set(jb, '{a,1}', '"cached"') WHERE id = 1;
-- row 1 read in the transaction before: not used
SELECT octet_length(jb::text) > 0 AS read FROM small WHERE id = 1;
UPDATE small SET jb = small_doc(1, 2) WHERE id = 1;
BEGIN;
-- row 1 read, row 2 updated: not used
SELECT octet_length(jb::text) > 0 AS read FROM small WHERE id = 1;
UPDATE small SET jb = small_doc(2, 1) WHERE id = 2;
-- row 2 read, then updated by a later statement: used
SELECT octet_length(jb::text) > 0 AS read FROM small WHERE id = 2;
UPDATE small SET jb = small_doc(2, 2) WHERE id = 2;
-- a subtransaction that aborts forgets the copies
SELECT octet_length(jb::text) > 0 AS read FROM small WHERE id = 2;
SAVEPOINT s;
SELECT 1 / 0;
ROLLBACK TO s;
UPDATE small SET jb = small_doc(2, 3) WHERE id = 2;
COMMIT;
-- outside a transaction block, only a statement that may write keeps
-- copies: a function called by a SELECT that reads a value and then
-- updates it reads the parts again, the same read within the UPDATE does not
SELECT read_then_update(2, 4);
UPDATE small SET jb = small_doc(2, 3) WHERE id = 2 AND octet_length(jb::text) > 0;
RESET client_min_messages;
-- every update kept every part it did not change, with or without copies
SELECT s.id, count(*) FILTER (WHERE (p.value_id, p.value_offset) IN (SELECT value_id, value_offset FROM small_before b WHERE b.id = s.id)) AS kept,
	count(*) AS parts
FROM small s, jsonb_toaster_parts(jb) p GROUP BY s.id ORDER BY s.id;
SELECT id, jb = small_doc(id, id + 1) AS same FROM small ORDER BY id;
DROP TABLE small, small_before;
DROP FUNCTION small_doc, read_then_update;

VACUUM t;
SELECT jt_test_toast_ok('t');
SELECT jb = jsonb_set(jsonb_set(jsonb_set(doc(1, 400), '{a,200}', '"changed"') || '{"name": "renamed"}' #- '{c,k100}',
		'{b,399}', '0'), '{a}', (doc(1, 400) -> 'a') || '"appended"') IS NOT NULL AS readable,
	jb -> 'a' ->> 200 AS a200, jb ->> 'name' AS name, jb -> 'c' ? 'k100' AS has_k100,
	jb -> 'b' -> 399 AS b399, jb -> 'a' ->> -1 AS last
FROM t WHERE id = 1;

-- WAL: changing one entry writes a fraction of what a new document writes
-- (the first edit may log full pages after a checkpoint: not measured)
UPDATE t SET jb = jsonb_set(jb, '{a,99}', '"warm"') WHERE id = 2;
SELECT pg_current_wal_insert_lsn() AS lsn \gset
UPDATE t SET jb = jsonb_set(jb, '{a,100}', '"again"') WHERE id = 2;
SELECT pg_current_wal_insert_lsn() - :'lsn'::pg_lsn AS small_edit_wal \gset
SELECT pg_current_wal_insert_lsn() AS lsn \gset
UPDATE t SET jb = doc(102, 400) WHERE id = 3;
SELECT pg_current_wal_insert_lsn() - :'lsn'::pg_lsn AS new_doc_wal \gset
SELECT :small_edit_wal * 5 < :new_doc_wal AS one_fifth_or_less;

-- an aborted UPDATE, and savepoints: the old version owns everything again
SELECT remember('2', 2);
BEGIN;
UPDATE t SET jb = jsonb_set(jb, '{a,1}', '"aborted"') WHERE id = 2;
ROLLBACK;
SELECT * FROM kept('2', 2);
BEGIN;
UPDATE t SET jb = jsonb_set(jb, '{a,1}', '"first"') WHERE id = 2;
SAVEPOINT s1;
UPDATE t SET jb = jsonb_set(jb, '{a,2}', '"second"') WHERE id = 2;
ROLLBACK TO s1;
SAVEPOINT s2;
UPDATE t SET jb = jsonb_set(jb, '{b,2}', '"third"') WHERE id = 2;
RELEASE s2;
COMMIT;
SELECT jb -> 'a' ->> 1 AS a1, jb -> 'a' ->> 2 = md5('200003') AS a2_unchanged, jb -> 'b' ->> 2 AS b2
FROM t WHERE id = 2;
VACUUM t;
SELECT jt_test_toast_ok('t');

-- a shared part changed in a later version, then the row deleted
SELECT remember('4', 4);
UPDATE t SET jb = jsonb_set(jb, '{b,10}', '"v2"') WHERE id = 4;
UPDATE t SET jb = jsonb_set(jb, '{b,11}', '"v3"') WHERE id = 4;
UPDATE t SET other = 1 WHERE id = 4;
UPDATE t SET jb = jsonb_set(jb, '{c,k5}', '"v4"') WHERE id = 4;
SELECT (kept('4', 4)).kept > 10 AS most_parts_from_v1;
VACUUM t;
SELECT jt_test_toast_ok('t');
DELETE FROM t WHERE id = 4;
VACUUM t;
SELECT jt_test_toast_ok('t');

-- rewrites keep shared parts once, and the values
CREATE TEMP TABLE before AS SELECT id, jb::text AS txt FROM t;
CLUSTER t USING t_pkey;
SELECT jt_test_toast_ok('t');
VACUUM FULL t;
SELECT jt_test_toast_ok('t');
SELECT count(*) AS differ FROM t JOIN before USING (id) WHERE t.jb::text <> before.txt;
UPDATE t SET jb = jsonb_set(jb, '{a,5}', '"after rewrite"');
VACUUM t;
SELECT jt_test_toast_ok('t');

DELETE FROM t;
VACUUM t;
SELECT toast_rows('t');

-- a document near the budget that grows a little: more values leave the
-- row, rather than every range growing (which would share nothing)
CREATE TABLE near (n int, jb jsonb);
ALTER TABLE near ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO near SELECT n, jsonb_build_object('a', (SELECT jsonb_agg(md5(i::text)) FROM generate_series(1, 1000) i),
	'small', repeat('x', 660)) FROM generate_series(0, 300, 30) n;
CREATE TEMP TABLE near_before AS SELECT n, p.value_id, p.value_offset FROM near, jsonb_toaster_parts(jb) p;
UPDATE near SET jb = jb || jsonb_build_object('k', repeat('y', n));
SELECT count(*) AS rows, count(*) FILTER (WHERE kept = was) AS kept_every_part
FROM (SELECT n, count(*) FILTER (WHERE (p.value_id, p.value_offset) IN (SELECT value_id, value_offset FROM near_before b WHERE b.n = near.n)) AS kept,
		(SELECT count(*) FROM near_before b WHERE b.n = near.n) AS was
	  FROM near, jsonb_toaster_parts(jb) p GROUP BY n) k;
DROP TABLE near;

-- a part's hash is core's CRC-32C of its bytes, whatever their length
-- (the extension computes it three blocks at a time from 384 bytes on,
-- unless core's own computation is faster on the machine, AVX-512; the
-- three blocks are checked on every machine that can run them):
-- strings of 2,000 to 7,000 bytes in steps of 37, and arrays cut into
-- ranges of 64 bytes to 1 kB
SET jsonb_toaster.range_size = 64;
CREATE TABLE lengths (n int, jb jsonb);
ALTER TABLE lengths ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO lengths SELECT n, jsonb_build_object('id', n, 's',
	left((SELECT string_agg(md5((n * 1000 + i)::text), '') FROM generate_series(1, 250) i), n),
	'a', (SELECT jsonb_agg(md5(i::text)) FROM generate_series(1, 10 + n % 300) i))
FROM generate_series(2000, 7000, 37) n;
SELECT count(DISTINCT raw_size % 8) AS remainders,
	count(*) FILTER (WHERE raw_size < 384) > 10 AS short,
	count(*) FILTER (WHERE raw_size BETWEEN 384 AND 1536) > 10 AS between,
	count(*) FILTER (WHERE raw_size > 1536) > 10 AS long,
	count(*) FILTER (WHERE crc32c(b) <> hash) AS wrong_hashes,
	count(*) FILTER (WHERE crc32c(b) <> jt_test_crc32c_three_way(b)) AS wrong_three_way
FROM (SELECT p.raw_size, p.hash, jt_test_part_bytes(l.jb, (p.ordinality - 1)::int) AS b
	  FROM lengths l, LATERAL (SELECT * FROM jsonb_toaster_parts(l.jb) WITH ORDINALITY) p) s;
DROP TABLE lengths;
SET jsonb_toaster.range_size = 1024;

DROP TABLE t, parts_of;
DROP FUNCTION toast_rows, doc, remember, kept;
RESET jsonb_toaster.range_size;
