--
-- jsonb_set(), jsonb_insert(), #-, jsonb - text, jsonb - text[] and
-- jsonb || jsonb on a stored document (patched servers only): run on the
-- parts they change, or on the skeleton's tree, with the builtins' results
-- byte for byte, and the UPDATE stores those parts (or the tree) alone.
--
-- The trees of this file's documents stay in the row (format version 6),
-- whose directories it reads and forges; tree_outside.sql has version 7.
SET jsonb_toaster.format_version = 6;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster_test;

-- TOAST rows equal the chunks of the live values, each value counted once
-- 300 keys k001..k300 with values of every kind
CREATE FUNCTION doc(id int) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_object_agg(format('k%s', lpad(i::text, 3, '0')),
		CASE i % 6
			WHEN 0 THEN to_jsonb(repeat(chr(97 + i % 26), 10 + i % 13))
			WHEN 1 THEN to_jsonb(i * 1000003 + id)
			WHEN 2 THEN to_jsonb((i + id) / 7.0)
			WHEN 3 THEN jsonb_build_object('n', i, 'tags', jsonb_build_array('x', i, NULL))
			WHEN 4 THEN to_jsonb(i % 4 = 0)
			ELSE 'null'::jsonb
		END)
	FROM generate_series(1, 300) i
$$;

-- the root's values are all short: the whole root leaves the row, split in
-- ranges whose directory fits the inline budget
SET jsonb_toaster.range_size = 512;
SET jsonb_toaster.inline_budget = 1080;
CREATE TABLE t (id int PRIMARY KEY, jb jsonb);
ALTER TABLE t ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO t SELECT i, doc(i) FROM generate_series(1, 3) i;
CREATE TABLE plain AS SELECT * FROM t;	-- not opted in: standard jsonb
SELECT (jsonb_toaster_storage(jb)).form, count(*) > 5 AS split,
	bool_and(p.path = '{}') AS root_parts
FROM t, jsonb_toaster_parts(jb) p GROUP BY t.id, 1 ORDER BY t.id;

-- each expression, on the stored value and with the builtins on the
-- standard copy: the same bytes, and whether one part was changed
CREATE TABLE cases (n serial, expr text);
INSERT INTO cases (expr) VALUES
	($$jsonb_set(jb, '{k150}', '"replaced"')$$),
	($$jsonb_set(jb, '{k150}', '{"a": [1, 2.5, "x"]}')$$),
	($$jsonb_set(jb, '{k151}', '12345678901234567890.5')$$),
	($$jsonb_set(jb, '{k152}', 'null')$$),
	($$jsonb_set(jb, '{k150a}', 'true')$$),
	($$jsonb_set(jb, '{k150a}', 'true', false)$$),
	($$jsonb_set(jb, '{a}', '1')$$),
	($$jsonb_set(jb, '{zzz}', '"last"')$$),
	($$jsonb_set(jb, '{k153,n}', '0')$$),
	($$jsonb_set(jb, '{k153,tags,-1}', '"y"')$$),
	($$jsonb_set(jb, '{k153,tags,x}', '"y"')$$),
	($$jsonb_set(jb, '{}', '1')$$),
	($$jsonb_set(jb, ARRAY['k150', NULL], '1')$$),
	($$jsonb_set(jb, '{{k150}}', '1')$$),
	($$jb #- '{k150}'$$),
	($$jb #- '{k153,tags,0}'$$),
	($$jb #- '{k153,tags,x}'$$),
	($$jb #- '{nope,x}'$$),
	($$jb #- '{}'$$),
	($$jb #- ARRAY[NULL]$$),
	($$jsonb_insert(jb, '{k150a}', '"inserted"')$$),
	($$jsonb_insert(jb, '{k150}', '"exists"')$$),
	($$jsonb_insert(jb, '{a}', '1')$$),
	($$jsonb_insert(jb, '{k153,tags,0}', '"y"', true)$$),
	($$jsonb_insert(jb, '{k153,tags,x}', '"y"')$$),
	($$jsonb_insert(jb, '{}', '1')$$),
	($$jb - 'k150'$$),
	($$jb - 'k001'$$),
	($$jb - 'nope'$$),
	($$jb - '{k150,k151}'::text[]$$),
	($$jb - '{k300,k001,k150,nope,NULL}'::text[]$$),
	($$jb - ARRAY['k002', 'k002', 'k299']$$),
	($$jb - '{}'::text[]$$),
	($$jb - '{{k150}}'::text[]$$),
	($$jb - '{"",k150}'::text[]$$),
	($$jsonb_delete(jb, VARIADIC ARRAY['k001', 'k300'])$$),
	($$jb || '{"k150": "merged"}'$$),
	($$jb || '{"k150b": [1], "k150c": {}}'$$),
	($$jb || '{"k001": 1, "k300": 2}'$$),
	($$jb || '{"k001": "a", "k150": "b", "k300": "c"}'$$),
	($$jb || '{"k001": 1, "k002": [2], "k299": {"x": 1}, "k300x": null}'$$),
	($$jb || '{"a": 1, "k150": 2}'$$),
	($$jb || jsonb_build_object('k150', 1, 'k300', repeat('z', 3000))$$),
	($$jb || jsonb_build_object('k001', 0, 'k150', repeat('z', 3000), 'k300', 1)$$),
	($$jb || jsonb_build_object('k002', repeat('x', 400), 'k299', 1)$$),
	($$jb || '{}'$$),
	($$jb || '[1]'$$),
	($$jb || '"s"'$$),
	($$jb || jb$$);
CREATE FUNCTION compare(expr text, tab text = 't', copy text = 'plain', row_id int = 2)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE ours bytea; theirs bytea; err text; builtin_err text;
BEGIN
	BEGIN
		EXECUTE format('SELECT jt_test_flat_bytes(%s) FROM %I WHERE id = %s', expr, tab, row_id) INTO ours;
	EXCEPTION WHEN OTHERS THEN err := SQLERRM;
	END;
	BEGIN
		EXECUTE format('SELECT jt_test_flat_bytes(%s) FROM %I WHERE id = %s', expr, copy, row_id) INTO theirs;
	EXCEPTION WHEN OTHERS THEN builtin_err := SQLERRM;
	END;
	RETURN ours IS NOT DISTINCT FROM theirs AND err IS NOT DISTINCT FROM builtin_err;
END $$;
-- DEBUG1 says when a part was changed in place
SET client_min_messages = debug1;
SELECT n, expr, compare(expr) AS same FROM cases ORDER BY n;
-- a later range's first key removed: that step cannot be done in place,
-- and the builtin finishes from the pointer the steps before returned
SELECT compare(format('jb - ARRAY[%L, %L]', 'k002',
	(SELECT format('k%s', lpad((1 + sum(f.count))::text, 3, '0'))
	 FROM (SELECT p.count FROM t, jsonb_toaster_parts(jb) p
		   WHERE t.id = 2 ORDER BY p.range LIMIT 4) f))) AS same;
RESET client_min_messages;

-- an UPDATE stores the changed part, and keeps the others' value ids
CREATE TABLE parts_before AS SELECT t.id, p.value_id, p.value_offset FROM t, jsonb_toaster_parts(jb) p;
SET client_min_messages = debug1;
UPDATE t SET jb = jsonb_set(jb, '{k150}', '"updated"') WHERE id = 1;
UPDATE t SET jb = jb - 'k200' WHERE id = 2;
UPDATE t SET jb = jb || '{"k100x": [true]}' WHERE id = 3;
RESET client_min_messages;
SELECT t.id, count(*) FILTER (WHERE (p.value_id, p.value_offset) IN (SELECT value_id, value_offset FROM parts_before b WHERE b.id = t.id)) AS kept,
	count(*) FILTER (WHERE (p.value_id, p.value_offset) NOT IN (SELECT value_id, value_offset FROM parts_before b WHERE b.id = t.id)) AS new
FROM t, jsonb_toaster_parts(jb) p GROUP BY t.id ORDER BY t.id;
-- one that changes nothing keeps every part
DELETE FROM parts_before;
INSERT INTO parts_before SELECT t.id, p.value_id, p.value_offset FROM t, jsonb_toaster_parts(jb) p WHERE t.id = 1;
SET client_min_messages = debug1;
UPDATE t SET jb = jb - 'k150x' WHERE id = 1;
RESET client_min_messages;
SELECT count(*) AS parts, count(*) FILTER (WHERE (p.value_id, p.value_offset) IN (SELECT value_id, value_offset FROM parts_before)) AS kept
FROM t, jsonb_toaster_parts(jb) p WHERE t.id = 1;
UPDATE plain SET jb = jsonb_set(jb, '{k150}', '"updated"') WHERE id = 1;
UPDATE plain SET jb = jb - 'k200' WHERE id = 2;
UPDATE plain SET jb = jb || '{"k100x": [true]}' WHERE id = 3;
SELECT t.id, jt_test_flat_bytes(t.jb) = jt_test_flat_bytes(p.jb) AS same
FROM t JOIN plain p USING (id) ORDER BY id;
-- keys in several ranges (|| and - text[]): one change per range, each on
-- the pointer the one before returned, and the UPDATE stores that pointer
DELETE FROM parts_before;
INSERT INTO parts_before SELECT t.id, p.value_id, p.value_offset FROM t, jsonb_toaster_parts(jb) p WHERE t.id = 2;
SET client_min_messages = debug1;
UPDATE t SET jb = jb || '{"k001": "first", "k002": "second", "k150": [1], "k300": {"last": true}}' WHERE id = 2;
UPDATE t SET jb = jb - '{k010,k290,k291}'::text[] WHERE id = 2;
RESET client_min_messages;
SELECT count(*) AS parts, count(*) FILTER (WHERE (p.value_id, p.value_offset) IN (SELECT value_id, value_offset FROM parts_before)) AS kept
FROM t, jsonb_toaster_parts(jb) p WHERE t.id = 2;
UPDATE plain SET jb = jb || '{"k001": "first", "k002": "second", "k150": [1], "k300": {"last": true}}' WHERE id = 2;
UPDATE plain SET jb = jb - '{k010,k290,k291}'::text[] WHERE id = 2;
-- a part carried whole, then a delta; once rolled back to a savepoint
BEGIN;
SAVEPOINT s;
UPDATE t SET jb = jb || jsonb_build_object('k003', repeat('x', 400), 'k150', 1) WHERE id = 2;
ROLLBACK TO SAVEPOINT s;
SET client_min_messages = debug1;
UPDATE t SET jb = jb || jsonb_build_object('k003', repeat('x', 400), 'k150', 1) WHERE id = 2;
RESET client_min_messages;
COMMIT;
UPDATE plain SET jb = jb || jsonb_build_object('k003', repeat('x', 400), 'k150', 1) WHERE id = 2;
SELECT jt_test_flat_bytes(t.jb) = jt_test_flat_bytes(p.jb) AS same
FROM t JOIN plain p USING (id) WHERE id = 2;

-- many updates of one row, in one transaction and in several, with
-- savepoints and an abort: the stored value follows the standard copy
BEGIN;
UPDATE t SET jb = jsonb_set(jb, '{k010}', to_jsonb(id * 10)) WHERE id < 3;
UPDATE t SET jb = jsonb_set(jb, '{k010}', to_jsonb(id * 11)) WHERE id < 3;
SAVEPOINT s;
UPDATE t SET jb = jb - 'k011';
ROLLBACK TO SAVEPOINT s;
UPDATE t SET jb = jb || '{"k012": "twelve"}';
UPDATE t SET jb = jb #- '{k153,tags}';
COMMIT;
BEGIN;
UPDATE t SET jb = jb - 'k013';
ROLLBACK;
UPDATE plain SET jb = jsonb_set(jb, '{k010}', to_jsonb(id * 11)) WHERE id < 3;
UPDATE plain SET jb = jb || '{"k012": "twelve"}';
UPDATE plain SET jb = jb #- '{k153,tags}';
SELECT t.id, jt_test_flat_bytes(t.jb) = jt_test_flat_bytes(p.jb) AS same
FROM t JOIN plain p USING (id) ORDER BY id;

-- the general path takes a part that would grow past the largest range,
-- a value made from another row's (the toaster does not use those
-- patches), and a part that would lose its first key, which the skeleton's
-- directory names (no patch)
SELECT format('k%s', lpad((sum(count) + 1)::text, 3, '0')) AS first_key
FROM t, jsonb_toaster_parts(jb) p WHERE t.id = 3 AND p.range < 5 \gset
SELECT :'first_key' AS first_key_of_part_6;
SET client_min_messages = debug1;
UPDATE t SET jb = jsonb_set(jb, '{k150}', to_jsonb(repeat('x', 3000))) WHERE id = 1;
UPDATE t SET jb = (SELECT jsonb_set(o.jb, '{k020}', '0') FROM t o WHERE o.id = 1) WHERE id = 2;
UPDATE t SET jb = jb - :'first_key' WHERE id = 3;
RESET client_min_messages;
UPDATE plain SET jb = jsonb_set(jb, '{k150}', to_jsonb(repeat('x', 3000))) WHERE id = 1;
UPDATE plain SET jb = (SELECT jsonb_set(o.jb, '{k020}', '0') FROM plain o WHERE o.id = 1) WHERE id = 2;
UPDATE plain SET jb = jb - :'first_key' WHERE id = 3;
SELECT t.id, jt_test_flat_bytes(t.jb) = jt_test_flat_bytes(p.jb) AS same
FROM t JOIN plain p USING (id) ORDER BY id;

-- a value replaced by one that leaves the padding of the values after it
-- as it was (here a 9-digit number by another): jsonb_set() returns a
-- pointer to the patched skeleton, with the change as a delta, which the
-- UPDATE of the row it was made from stores as it is; anywhere else it
-- is read back, as a stored value is
CREATE TABLE returned AS
	SELECT p.value_id, p.value_offset FROM t, jsonb_toaster_parts(jb) p WHERE t.id = 1;
SET client_min_messages = debug1;
SELECT (jsonb_toaster_storage(jsonb_set(jb, '{k151}', '123456789'))).form,
	jsonb_set(jb, '{k151}', '123456789') -> 'k151' AS k151
FROM t WHERE id = 1;
UPDATE t SET jb = jsonb_set(jb, '{k151}', '123456789') WHERE id = 1
RETURNING jb -> 'k151' AS k151;
RESET client_min_messages;
SELECT count(*) AS parts,
	count(*) FILTER (WHERE (p.value_id, p.value_offset) IN (SELECT value_id, value_offset FROM returned)) AS kept
FROM t, jsonb_toaster_parts(jb) p WHERE t.id = 1;
SET client_min_messages = debug1;
-- another row's
UPDATE t SET jb = (SELECT jsonb_set(o.jb, '{k151}', '987654321')
				   FROM t o WHERE o.id = 1) WHERE id = 2;
-- one of several changes, and one made from another
UPDATE t SET jb = jsonb_set(jsonb_set(jb, '{k157}', '333333333'), '{k151}',
	'444444444') WHERE id = 1;
RESET client_min_messages;
-- a new row, a plain table, an aborted change
INSERT INTO t SELECT 4, jsonb_set(jb, '{k151}', '111111111') FROM t WHERE id = 1;
CREATE TABLE plain_copy AS
	SELECT id, jsonb_set(jb, '{k151}', '222222222') AS jb FROM t WHERE id = 1;
SELECT (jsonb_toaster_storage(jb)).form FROM plain_copy;
BEGIN;
SAVEPOINT s;
UPDATE t SET jb = jsonb_set(jb, '{k151}', '555555555') WHERE id = 1;
ROLLBACK TO SAVEPOINT s;
COMMIT;
UPDATE plain SET jb = jsonb_set(jb, '{k151}', '123456789') WHERE id = 1;
UPDATE plain SET jb = (SELECT jsonb_set(o.jb, '{k151}', '987654321')
					   FROM plain o WHERE o.id = 1) WHERE id = 2;
UPDATE plain SET jb = jsonb_set(jsonb_set(jb, '{k157}', '333333333'), '{k151}',
	'444444444') WHERE id = 1;
INSERT INTO plain SELECT 4, jsonb_set(jb, '{k151}', '111111111') FROM plain
WHERE id = 1;
CREATE TABLE copy_expected AS
	SELECT jt_test_flat_bytes(jsonb_set(jb, '{k151}', '222222222')) AS bytes
	FROM plain WHERE id = 1;
-- the rows that took copies keep them when the row they came from goes
DELETE FROM t WHERE id = 1;
DELETE FROM plain WHERE id = 1;
VACUUM t;
SELECT t.id, jt_test_flat_bytes(t.jb) = jt_test_flat_bytes(p.jb) AS same
FROM t JOIN plain p USING (id) ORDER BY id;
SELECT jt_test_flat_bytes(jb) = bytes AS same FROM plain_copy, copy_expected;
DROP TABLE returned, plain_copy, copy_expected;

-- nothing leaked, nothing lost
VACUUM t;
SELECT jt_test_toast_ok('t');
DELETE FROM t;
VACUUM t;
SELECT jt_test_toast_ok('t');

-- a sweep: edits at keys all along the document, so that a change falls
-- at every position modulo 4, before values of every kind (short strings
-- move the next aligned value), with keys of three lengths; each UPDATE
-- keeps what the function returns (a pointer when the new size is known:
-- assert-enabled builds check that size against the flattened document),
-- and must leave the bytes the builtins give the standard copy
CREATE FUNCTION sweep_doc(id int) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_object_agg(format('k%s', i),
		CASE (i * 3) % 5
			WHEN 0 THEN to_jsonb(repeat('s', i % 4))
			WHEN 1 THEN to_jsonb(i * 7 + id)
			WHEN 2 THEN jsonb_build_array(i, repeat('t', i % 3))
			WHEN 3 THEN to_jsonb(i % 2 = 0)
			ELSE to_jsonb((i + id) / 3.0)
		END)
	FROM generate_series(1, 300) i
$$;
-- sweep(tab, copy): every edit on every row of tab and of its standard
-- copy, which must give the same bytes after each
CREATE FUNCTION sweep(tab text, copy text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	k text;
	e text;
BEGIN
	FOR i IN 1..300 BY 7 LOOP
		k := format('k%s', i);
		FOREACH e IN ARRAY ARRAY[
			format('jsonb_set(jb, %L, %L)', ARRAY[k], '7'),
			format('jsonb_set(jb, %L, %L)', ARRAY[k], '123456.789'),
			format('jsonb_set(jb, %L, %L)', ARRAY[k], '"a"'),
			format('jsonb_set(jb, %L, %L)', ARRAY[k], '"abcde"'),
			format('jsonb_set(jb, %L, %L)', ARRAY[k], '{"x": [1]}'),
			format('jsonb_set(jb, %L, %L)', ARRAY[k], 'false'),
			format('jsonb_set(jb, %L, %L)', ARRAY[k || repeat('q', i % 4)], '1'),
			format('jb - %L', k),
			format('jb #- %L', ARRAY[format('k%s', i + 1), '0']),
			format('jb || %L', jsonb_build_object(format('k%s', i + 2), 'yz'))]
		LOOP
			EXECUTE format('UPDATE %I SET jb = %s', tab, e);
			EXECUTE format('UPDATE %I SET jb = %s', copy, e);
			EXECUTE format('SELECT EXISTS (SELECT FROM %I s JOIN %I p USING (id)
							WHERE jt_test_flat_bytes(s.jb) <> jt_test_flat_bytes(p.jb))',
						   tab, copy) INTO STRICT found;
			IF found THEN
				RAISE EXCEPTION 'the documents differ after %', e;
			END IF;
		END LOOP;
	END LOOP;
END $$;
CREATE TABLE sweep (id int PRIMARY KEY, jb jsonb);
ALTER TABLE sweep ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO sweep SELECT i, sweep_doc(i) FROM generate_series(1, 2) i;
CREATE TABLE sweep_plain AS SELECT * FROM sweep;
SELECT id, (jsonb_toaster_storage(jb)).form, count(*) > 5 AS split
FROM sweep, jsonb_toaster_parts(jb) GROUP BY id, 2 ORDER BY id;
SELECT sweep('sweep', 'sweep_plain');
SELECT s.id, jt_test_flat_bytes(s.jb) = jt_test_flat_bytes(p.jb) AS same,
	(jsonb_toaster_storage(s.jb)).form
FROM sweep s JOIN sweep_plain p USING (id) ORDER BY id;
VACUUM sweep;
SELECT jt_test_toast_ok('sweep');

-- values written before format version 3 have no layout bytes: an edit
-- that moves the values after it by other than a multiple of 4 then
-- flattens the document, since the other parts' padding is not known
-- (the UPDATE still stores the changed part alone); the same sweep,
-- on such values
TRUNCATE sweep, sweep_plain;
SET jsonb_toaster.format_version = 4;	-- every part a TOAST value of its own
INSERT INTO sweep SELECT i, sweep_doc(i) FROM generate_series(1, 2) i;
INSERT INTO sweep_plain SELECT * FROM sweep;
SET client_min_messages = debug1;
UPDATE sweep SET jb = jt_test_skeleton_without_layouts(jt_test_skeleton_legacy_hashes(jb));
SET jsonb_toaster.format_version = 6;
UPDATE sweep SET jb = jsonb_set(jb, '{k1}', '"ab"') WHERE id = 1;
UPDATE sweep SET jb = jsonb_set(jb, '{k2}', '1') WHERE id = 2;
RESET client_min_messages;
UPDATE sweep_plain SET jb = jsonb_set(jb, '{k1}', '"ab"') WHERE id = 1;
UPDATE sweep_plain SET jb = jsonb_set(jb, '{k2}', '1') WHERE id = 2;
SELECT sweep('sweep', 'sweep_plain');
SELECT s.id, jt_test_flat_bytes(s.jb) = jt_test_flat_bytes(p.jb) AS same
FROM sweep s JOIN sweep_plain p USING (id) ORDER BY id;
VACUUM sweep;
SELECT jt_test_toast_ok('sweep');

-- layout bytes that are invalid, or do not agree with the parts' content
-- or with the value's raw size: an ERROR, never a wrong size
TRUNCATE sweep;
INSERT INTO sweep SELECT i, sweep_doc(i) FROM generate_series(1, 2) i;
SELECT jt_test_skeleton_set_layout(jb, 0, 224) -> 'k1' FROM sweep WHERE id = 1;
-- every value of part 0's byte and of part 1's, with an edit in part 0
-- that moves the values after it: one value of each (the right one) gives
-- the builtin's bytes, the others an error
CREATE FUNCTION layout_outcomes(tab text, rowid int, partno int, edit text)
RETURNS TABLE (outcome text) LANGUAGE plpgsql AS $$
DECLARE
	ok bytea;
	r bytea;
BEGIN
	EXECUTE format('SELECT jt_test_flat_bytes(%s) FROM (SELECT jb::text::jsonb AS jb FROM %I WHERE id = $1) s',
				   edit, tab) USING rowid INTO ok;
	FOR layout IN 0..255 LOOP
		BEGIN
			EXECUTE format('SELECT jt_test_flat_bytes(%s) FROM (SELECT jt_test_skeleton_set_layout(jb, $1, $2) AS jb FROM %I WHERE id = $3) s',
						   edit, tab) USING partno, layout, rowid INTO r;
			outcome := CASE WHEN r = ok THEN 'the builtin''s bytes' ELSE 'other bytes' END;
		EXCEPTION WHEN data_corrupted THEN
			GET STACKED DIAGNOSTICS outcome = PG_EXCEPTION_DETAIL;
		END;
		RETURN NEXT;
	END LOOP;
END $$;
SELECT p AS partno, o.outcome, count(*)
FROM generate_series(0, 1) p,
	layout_outcomes('sweep', 1, p, $$jsonb_set(jb, '{k1}', '"ab"')$$) o
GROUP BY p, o.outcome ORDER BY p, o.outcome;
DROP FUNCTION layout_outcomes(text, int, int, text);
DROP TABLE sweep, sweep_plain;
DROP FUNCTION sweep_doc(int);
DROP FUNCTION sweep(text, text);

-- a root kept in the skeleton's tree (short fields in the row, long values
-- in parts): setting, adding or removing a short field changes the tree
-- alone, and the UPDATE keeps every part
RESET jsonb_toaster.range_size;
RESET jsonb_toaster.inline_budget;
-- units of 2 kB, so that containers of a few kB are cut into ranges (one
-- no longer than a unit is one range)
SET jsonb_toaster.unit_size = 2048;
CREATE TABLE r (id int PRIMARY KEY, jb jsonb);
ALTER TABLE r ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO r SELECT i, jsonb_build_object('id', i, 'status', 'new', 'n', i * 1.5,
	'big', (SELECT jsonb_agg(md5((i * 1000 + j)::text)) FROM generate_series(1, 200) j),
	'meta', jsonb_build_object('a', 1))
FROM generate_series(1, 2) i;
CREATE TABLE rplain AS SELECT * FROM r;
SELECT (jsonb_toaster_storage(jb)).form, array_agg(p.path) AS parts
FROM r, jsonb_toaster_parts(jb) p GROUP BY r.id, 1 ORDER BY r.id;
CREATE TABLE rcases (n serial, expr text);
INSERT INTO rcases (expr) VALUES
	($$jsonb_set(jb, '{status}', '"done"')$$),
	($$jsonb_set(jb, '{added}', '[1, {"x": null}]')$$),
	($$jsonb_set(jb, '{added}', '1', false)$$),
	($$jsonb_set(jb, '{n}', '12345678901234567890.123')$$),
	($$jsonb_set(jb, '{big}', '0')$$),
	($$jsonb_set(jb, '{meta}', '0')$$),
	($$jsonb_set(jb, '{meta,a}', '2')$$),
	($$jb - 'status'$$),
	($$jb - 'big'$$),
	($$jb #- '{status}'$$),
	($$jb #- '{meta,a}'$$),
	($$jb || '{"status": "merged"}'$$),
	($$jb || '{"status": 1, "id": 2}'$$),
	($$jb || '{"n": 1, "status": "s", "zz": null}'$$),
	($$jb || '{"added": {"x": 1}, "status": 1}'$$),
	($$jb || '{"status": 1, "zz": {"x": 1}}'$$),
	($$jb || '{"meta": 1, "status": 2}'$$),
	($$jb - '{status,n,zz}'::text[]$$),
	($$jb - '{status,big}'::text[]$$),
	($$jb - '{zz,"",NULL,zz}'::text[]$$),
	($$jb - '{n,n,NULL,status}'::text[]$$),
	($$jsonb_delete(jb, 'n', 'status')$$),
	($$jb || '{"n": 1, "big": 2}'$$),
	($$jsonb_insert(jb, '{added}', '{"x": [1, 2]}')$$),
	($$jsonb_insert(jb, '{added}', '"after"', true)$$),
	($$jsonb_insert(jb, '{status}', '"exists"')$$),
	($$jsonb_insert(jb, '{big}', '1')$$),
	-- paths into a value kept in the tree, or into a missing key: the
	-- builtin on that value alone, the tree changed
	($$jsonb_set(jb, '{meta,b}', '[1, {"c": 2}]')$$),
	($$jsonb_set(jb, '{meta,b}', '1', false)$$),
	($$jsonb_set(jb, '{meta,a}', '"x"', false)$$),
	($$jsonb_set(jb, '{meta,b,c}', '1')$$),
	($$jsonb_set(jb, '{meta,a,c}', '1')$$),
	($$jsonb_set(jb, '{meta,1}', '1')$$),
	($$jsonb_set(jb, '{zz,y}', '1')$$),
	($$jsonb_set(jb, '{status,0}', '1')$$),
	($$jsonb_set(jb, '{n,x}', '1')$$),
	($$jsonb_insert(jb, '{meta,b}', '1')$$),
	($$jsonb_insert(jb, '{meta,a}', '1')$$),
	($$jsonb_insert(jb, '{zz,y}', '1')$$),
	($$jb #- '{meta,zz}'$$),
	($$jb #- '{zz,y}'$$),
	($$jb #- '{id,0}'$$),
	($$jb #- '{meta,a,b}'$$);
SET client_min_messages = debug1;
SELECT n, expr, compare(expr, 'r', 'rplain') AS same FROM rcases ORDER BY n;
RESET client_min_messages;
CREATE TABLE rparts_before AS SELECT r.id, p.value_id, p.value_offset FROM r, jsonb_toaster_parts(jb) p;
SET client_min_messages = debug1;
UPDATE r SET jb = jsonb_set(jb, '{status}', '"done"') WHERE id = 1;
UPDATE r SET jb = jb || '{"added": {"x": [1, 2]}}' WHERE id = 2;
UPDATE r SET jb = jb || '{"n": 7, "id": 1, "zz": "s"}' WHERE id = 1;
UPDATE r SET jb = jb - '{n,zz}'::text[] WHERE id = 1;
UPDATE r SET jb = jsonb_insert(jb, '{inserted}', '[true]') WHERE id = 2;
UPDATE r SET jb['meta']['a'] = '5' WHERE id = 1;
UPDATE r SET jb['meta']['l'][2] = '"padded"' WHERE id = 2;
UPDATE r SET jb['new']['x'] = '{"y": 1}' WHERE id = 1;
UPDATE r SET jb = jsonb_set(jb, '{meta,b}', '[1]') WHERE id = 2;
UPDATE r SET jb = jb #- '{meta,a}' WHERE id = 2;
RESET client_min_messages;
SELECT r.id, count(*) FILTER (WHERE (p.value_id, p.value_offset) IN (SELECT value_id, value_offset FROM rparts_before b WHERE b.id = r.id)) AS kept,
	count(*) FILTER (WHERE (p.value_id, p.value_offset) NOT IN (SELECT value_id, value_offset FROM rparts_before b WHERE b.id = r.id)) AS new
FROM r, jsonb_toaster_parts(jb) p GROUP BY r.id ORDER BY r.id;
-- a field too long for the row: the general path moves it out
SET client_min_messages = debug1;
UPDATE r SET jb = jsonb_set(jb, '{status}', to_jsonb(repeat('y', 5000))) WHERE id = 2;
RESET client_min_messages;
UPDATE rplain SET jb = jsonb_set(jb, '{status}', '"done"') WHERE id = 1;
UPDATE rplain SET jb = jb || '{"added": {"x": [1, 2]}}' WHERE id = 2;
UPDATE rplain SET jb = jb || '{"n": 7, "id": 1, "zz": "s"}' WHERE id = 1;
UPDATE rplain SET jb = jb - '{n,zz}'::text[] WHERE id = 1;
UPDATE rplain SET jb = jsonb_insert(jb, '{inserted}', '[true]') WHERE id = 2;
UPDATE rplain SET jb['meta']['a'] = '5' WHERE id = 1;
UPDATE rplain SET jb['meta']['l'][2] = '"padded"' WHERE id = 2;
UPDATE rplain SET jb['new']['x'] = '{"y": 1}' WHERE id = 1;
UPDATE rplain SET jb = jsonb_set(jb, '{meta,b}', '[1]') WHERE id = 2;
UPDATE rplain SET jb = jb #- '{meta,a}' WHERE id = 2;
UPDATE rplain SET jb = jsonb_set(jb, '{status}', to_jsonb(repeat('y', 5000))) WHERE id = 2;
SELECT r.id, jt_test_flat_bytes(r.jb) = jt_test_flat_bytes(p.jb) AS same,
	(SELECT count(*) FROM jsonb_toaster_parts(r.jb)) AS parts
FROM r JOIN rplain p USING (id) ORDER BY id;
VACUUM r;
SELECT jt_test_toast_ok('r');
DROP TABLE r, rplain, rcases, rparts_before;
-- long scalars out of the row: a string's or a numeric's reference tells
-- its size flattened (its part's raw size), and its layout byte whether it
-- is padded as a numeric; a change of the tree returns a pointer.  Short
-- strings of odd lengths before them move the padding about.
-- (Text and digits that do not compress: a document that compresses into
-- the row keeps its parts in the pointer, and is rebuilt by an UPDATE.)
CREATE FUNCTION noise(len int, seed int) RETURNS text LANGUAGE sql AS $$
	SELECT left(string_agg(md5(seed || '/' || i), ''), len)
	FROM generate_series(1, len / 32 + 1) i
$$;
CREATE FUNCTION digits(len int, seed int) RETURNS text LANGUAGE sql AS $$
	SELECT '9' || translate(noise(len - 1, seed), 'abcdef', '012345')
$$;
CREATE TABLE rs (id int PRIMARY KEY, jb jsonb);
ALTER TABLE rs ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO rs VALUES (2, jsonb_build_object('status', 'new', 'text', noise(6000, 2))),
	(3, jsonb_build_object('a', 'x', 'b', 'yy', 'c', 'zzz', 's', noise(2999, 3),
		'z', 1, 'in', jsonb_build_object('b', 'yy', 'n', 2.5),
		'big', (digits(3001, 31) || '.5')::numeric,
		'num', ('-' || digits(2999, 32))::numeric)),
	(4, jsonb_build_object('a', 'x', 'big', (digits(5001, 4) || '.5')::numeric)),
	(5, jsonb_build_object('a', 'x', 'text', noise(6000, 5))),
	(6, jsonb_build_object('a', 'x', 'obj', (SELECT jsonb_object_agg('k' || i, noise(20, i) || i)
		FROM generate_series(1, 300) i))),
	(7, jsonb_build_object('a', 'x', 'meta', jsonb_build_object('k', 1, 'l', 'm'),
		'body', noise(5000, 7)));
CREATE TABLE rsplain AS SELECT * FROM rs;
SELECT id, array_agg(p.path ORDER BY p.path) AS parts
FROM rs, jsonb_toaster_parts(jb) p GROUP BY id ORDER BY id;
SET client_min_messages = debug1;
SELECT compare($$jb || '{"status": "done", "n": 1}'$$, 'rs', 'rsplain') AS same;
UPDATE rs SET jb = jb || '{"status": "done", "n": 1}' WHERE id = 2;
UPDATE rs SET jb = jsonb_set(jb, '{a}', '"xyzzy"') WHERE id = 3;
UPDATE rs SET jb = jb || '{"aa": 1.5, "ab": "q"}' WHERE id = 3;
UPDATE rs SET jb = jb - 'z' WHERE id = 3;
-- values removed with their parts: the new pointer keeps the others
SELECT compare($$jb - 'obj'$$, 'rs', 'rsplain', 6) AS same;
SELECT compare($$jsonb_set(jb, '{obj}', '[1, "x"]')$$, 'rs', 'rsplain', 6) AS same;
SELECT compare($$jb || '{"obj": {"k": 1}, "a": "y"}'$$, 'rs', 'rsplain', 6) AS same;
SELECT compare($$jb - '{a, obj}'::text[]$$, 'rs', 'rsplain', 6) AS same;
-- (here the value removed held most of the bytes of the TOAST value it
-- shared with the others: the pointer is turned down, and the general
-- path writes the rest anew, giving that value up)
UPDATE rs SET jb = jsonb_set(jb, '{s}', '"short"') WHERE id = 3;
UPDATE rs SET jb = jb - 'big' WHERE id = 4;
UPDATE rs SET jb = jb || '{"text": "t"}' WHERE id = 5;
UPDATE rs SET jb = jsonb_set(jb, '{obj,k150}', '"changed"') WHERE id = 6;
BEGIN;
SAVEPOINT s;
UPDATE rs SET jb = jb - 'obj' WHERE id = 6;
ROLLBACK TO s;
COMMIT;
UPDATE rs SET jb = jsonb_set(jb, '{meta}', '[1, 2]') WHERE id = 7;
UPDATE rs SET jb = jsonb_set(jb, '{a}', '"xy"') WHERE id IN (4, 5);
RESET client_min_messages;
UPDATE rsplain SET jb = jb || '{"status": "done", "n": 1}' WHERE id = 2;
UPDATE rsplain SET jb = jsonb_set(jb, '{a}', '"xyzzy"') WHERE id = 3;
UPDATE rsplain SET jb = jb || '{"aa": 1.5, "ab": "q"}' WHERE id = 3;
UPDATE rsplain SET jb = jb - 'z' WHERE id = 3;
UPDATE rsplain SET jb = jsonb_set(jb, '{s}', '"short"') WHERE id = 3;
UPDATE rsplain SET jb = jb - 'big' WHERE id = 4;
UPDATE rsplain SET jb = jsonb_set(jb, '{obj,k150}', '"changed"') WHERE id = 6;
UPDATE rsplain SET jb = jb || '{"text": "t"}' WHERE id = 5;
UPDATE rsplain SET jb = jsonb_set(jb, '{meta}', '[1, 2]') WHERE id = 7;
UPDATE rsplain SET jb = jsonb_set(jb, '{a}', '"xy"') WHERE id IN (4, 5);
SELECT id, jt_test_flat_bytes(rs.jb) = jt_test_flat_bytes(p.jb) AS same,
	(SELECT count(*) FROM jsonb_toaster_parts(rs.jb)) AS parts,
	(jsonb_toaster_storage(rs.jb)).stored_size =
		(jsonb_toaster_storage(rs.jb)).inline_size +
		(SELECT coalesce(sum(stored_size), 0) FROM jsonb_toaster_parts(rs.jb)) AS sizes_add_up
FROM rs JOIN rsplain p USING (id) ORDER BY id;
VACUUM rs;
SELECT jt_test_toast_ok('rs');
-- the removal rolled back above, done: no part left, a plain document
SET client_min_messages = debug1;
UPDATE rs SET jb = jb - 'obj' WHERE id = 6;
RESET client_min_messages;
UPDATE rsplain SET jb = jb - 'obj' WHERE id = 6;
SELECT id, jt_test_flat_bytes(rs.jb) = jt_test_flat_bytes(p.jb) AS same,
	(jsonb_toaster_storage(rs.jb)).form
FROM rs JOIN rsplain p USING (id) WHERE id IN (4, 5, 6) ORDER BY id;
VACUUM rs;
SELECT jt_test_toast_ok('rs');
-- a container of the tree holding a reference, removed or replaced with
-- it; changes of changes; a result stored over another row
INSERT INTO rs VALUES (8, jsonb_build_object('a', 'x', 's1', noise(3000, 81),
	'in', jsonb_build_object('deep', noise(3000, 82), 'k', 1), 's2', noise(3000, 83)));
INSERT INTO rsplain SELECT * FROM rs WHERE id = 8;
SELECT array_agg(p.path ORDER BY p.path) AS parts FROM rs, jsonb_toaster_parts(jb) p WHERE id = 8;
SET client_min_messages = debug1;
SELECT compare($$jb - 'in'$$, 'rs', 'rsplain', 8) AS same;
SELECT compare($$jsonb_set(jb, '{in}', '{"deep": 0}')$$, 'rs', 'rsplain', 8) AS same;
SELECT compare($$(jb - 's1') - 'in'$$, 'rs', 'rsplain', 8) AS same;
SELECT compare($$jsonb_set(jb - 's1', '{s2}', '"short"')$$, 'rs', 'rsplain', 8) AS same;
SELECT compare($$(jb - 's1') || '{"a": 2}'$$, 'rs', 'rsplain', 8) AS same;
UPDATE rs SET jb = (SELECT jb - 's1' FROM rs WHERE id = 8) WHERE id = 7;
RESET client_min_messages;
UPDATE rsplain SET jb = (SELECT jb - 's1' FROM rsplain WHERE id = 8) WHERE id = 7;
UPDATE rs SET jb = (jb - 'in') - 's1' WHERE id = 8;
UPDATE rsplain SET jb = (jb - 'in') - 's1' WHERE id = 8;
SELECT id, jt_test_flat_bytes(rs.jb) = jt_test_flat_bytes(p.jb) AS same,
	(SELECT count(*) FROM jsonb_toaster_parts(rs.jb)) AS parts
FROM rs JOIN rsplain p USING (id) WHERE id IN (7, 8) ORDER BY id;
VACUUM rs;
SELECT jt_test_toast_ok('rs');
DROP TABLE rs, rsplain;
DROP FUNCTION noise(int, int), digits(int, int);
-- a pointer larger than the old one stays in the row only within the
-- table's toast_tuple_target
CREATE TABLE tt (id int PRIMARY KEY, jb jsonb) WITH (toast_tuple_target = 256);
ALTER TABLE tt ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO tt VALUES (2, jsonb_build_object('a', 'x', 's', repeat('s', 3000)));
UPDATE tt SET jb = jsonb_set(jb, '{s}', to_jsonb(repeat('w', 1700)));
SELECT (jsonb_toaster_storage(jb)).inline_size < 256 AS small_row,
	(SELECT count(*) FROM jsonb_toaster_parts(jb)) AS parts,
	jb = jsonb_build_object('a', 'x', 's', repeat('w', 1700)) AS same
FROM tt;
VACUUM tt;
SELECT jt_test_toast_ok('tt');
DROP TABLE tt;

-- a path into a container kept in parts, below a root kept in the tree:
-- the builtin on the part that holds the path's second step
CREATE TABLE rn (id int PRIMARY KEY, jb jsonb);
ALTER TABLE rn ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO rn VALUES (2, jsonb_build_object('a', 'x', 'n', 1,
	'items', (SELECT jsonb_agg(jsonb_build_object('i', i, 't', repeat('t', i % 7), 'tags', jsonb_build_array(i, 'q')))
		FROM generate_series(0, 1499) i),
	'obj', (SELECT jsonb_object_agg('k' || i, repeat('v', 20) || i) FROM generate_series(1, 300) i)));
CREATE TABLE rnplain AS SELECT * FROM rn;
SELECT p.path, count(*) AS parts FROM rn, jsonb_toaster_parts(jb) p GROUP BY 1 ORDER BY 1;
CREATE TABLE rncases (n serial, expr text);
INSERT INTO rncases (expr) VALUES
	($$jsonb_set(jb, '{items,0}', '"z"')$$),
	($$jsonb_set(jb, '{items,1499}', '"z"')$$),
	($$jsonb_set(jb, '{items,700,t}', '"longer text here"')$$),
	($$jsonb_set(jb, '{items,-1}', '{"new": 1}')$$),
	($$jsonb_set(jb, '{items,-1500}', '0')$$),
	($$jsonb_set(jb, '{items,-1501}', '0')$$),
	($$jsonb_set(jb, '{items,1500}', '0')$$),
	($$jsonb_set(jb, '{items,99999}', '0', false)$$),
	($$jsonb_set(jb, '{items,2000,x}', '1')$$),
	($$jsonb_set(jb, '{items,-9999,x}', '1')$$),
	($$jsonb_set(jb, '{items,05}', '0')$$),
	($$jsonb_set(jb, '{items,x}', '0')$$),
	($$jsonb_set(jb, '{items,3,tags,1}', '"r"')$$),
	($$jsonb_set(jb, '{items,3,tags,9}', '"r"')$$),
	($$jsonb_set(jb, '{items,3,tags,9}', '"r"', false)$$),
	($$jsonb_set(jb, '{items,3,i,x}', '1')$$),
	($$jsonb_set(jb, '{items,3,zz}', '1', false)$$),
	($$jsonb_set(jb, '{obj,k150}', '"changed"')$$),
	($$jsonb_set(jb, '{obj,k150,x}', '1')$$),
	($$jsonb_set(jb, '{obj,k000}', '"new key"')$$),
	($$jsonb_set(jb, '{obj,zzzz}', '[1, 2]')$$),
	($$jsonb_set(jb, '{obj,nokey}', '1', false)$$),
	($$jsonb_set(jb, '{a,b}', '1')$$),
	($$jsonb_set(jb, '{nothere,b}', '1')$$),
	($$jb #- '{items,5}'$$),
	($$jb #- '{items,-1}'$$),
	($$jb #- '{items,1500}'$$),
	($$jb #- '{items,3,tags}'$$),
	($$jb #- '{obj,k7}'$$),
	($$jb #- '{obj,nokey}'$$),
	($$jb #- '{obj,k7,deeper}'$$),
	($$jsonb_insert(jb, '{items,-1}', '1', true)$$),
	($$jsonb_insert(jb, '{items,-1}', '1')$$),
	($$jsonb_insert(jb, '{items,0}', '1')$$),
	($$jsonb_insert(jb, '{items,700}', '[1]', true)$$),
	($$jsonb_insert(jb, '{items,1500}', '1')$$),
	($$jsonb_insert(jb, '{items,-1501}', '1')$$),
	($$jsonb_insert(jb, '{items,3,tags,0}', '"first"')$$),
	($$jsonb_insert(jb, '{items,3,new}', '2')$$),
	($$jsonb_insert(jb, '{items,3,i}', '2')$$),
	($$jsonb_insert(jb, '{obj,k150a}', '"between"')$$),
	($$jsonb_insert(jb, '{obj,k150}', '"exists"')$$),
	($$jsonb_insert(jb, '{a}', '1')$$),
	($$jsonb_insert(jb, '{newkey}', '1')$$);
SET client_min_messages = debug1;
SELECT n, expr, compare(expr, 'rn', 'rnplain') AS same FROM rncases ORDER BY n;
UPDATE rn SET jb = jsonb_set(jb, '{items,700,t}', '"longer text here"');
UPDATE rn SET jb = jsonb_set(jb, '{obj,k150}', '"changed"');
UPDATE rn SET jb = jb #- '{items,5}';
UPDATE rn SET jb = jsonb_insert(jb, '{items,-1}', '{"appended": true}', true);
UPDATE rn SET jb = jsonb_set(jb, '{items,99999}', '"end"');
RESET client_min_messages;
UPDATE rnplain SET jb = jsonb_set(jb, '{items,700,t}', '"longer text here"');
UPDATE rnplain SET jb = jsonb_set(jb, '{obj,k150}', '"changed"');
UPDATE rnplain SET jb = jb #- '{items,5}';
UPDATE rnplain SET jb = jsonb_insert(jb, '{items,-1}', '{"appended": true}', true);
UPDATE rnplain SET jb = jsonb_set(jb, '{items,99999}', '"end"');
SELECT jt_test_flat_bytes(rn.jb) = jt_test_flat_bytes(p.jb) AS same,
	(SELECT count(*) FROM jsonb_toaster_parts(rn.jb)) AS parts
FROM rn JOIN rnplain p USING (id);
VACUUM rn;
SELECT jt_test_toast_ok('rn');
DROP TABLE rn, rnplain, rncases;
RESET jsonb_toaster.unit_size;

-- ranges enlarged so that the directory fits the row: the last part,
-- smaller than the others, may grow up to the largest by appends
SET jsonb_toaster.range_size = 64;
SET jsonb_toaster.inline_budget = 600;
CREATE TABLE rg (id int PRIMARY KEY, jb jsonb);
ALTER TABLE rg ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO rg VALUES (2, jsonb_build_object('a', 'x',
	'items', (SELECT jsonb_agg(i) FROM generate_series(1, 3000) i)));
CREATE TABLE rgplain AS SELECT * FROM rg;
SELECT count(*) AS parts, max(raw_size) > 2 * (64 * 4 + 4) AS enlarged,
	(array_agg(raw_size ORDER BY range DESC))[1] < max(raw_size) AS last_smaller
FROM rg, jsonb_toaster_parts(jb) p;
SET client_min_messages = debug1;
UPDATE rg SET jb = jsonb_insert(jb, '{items,-1}', '0', true);
UPDATE rg SET jb = jsonb_insert(jb, '{items,-1}', '[1, 2]', true);
RESET client_min_messages;
UPDATE rgplain SET jb = jsonb_insert(jb, '{items,-1}', '0', true);
UPDATE rgplain SET jb = jsonb_insert(jb, '{items,-1}', '[1, 2]', true);
SELECT jt_test_flat_bytes(rg.jb) = jt_test_flat_bytes(p.jb) AS same
FROM rg JOIN rgplain p USING (id);
VACUUM rg;
SELECT jt_test_toast_ok('rg');
DROP TABLE rg, rgplain;
RESET jsonb_toaster.range_size;
RESET jsonb_toaster.inline_budget;

-- with the builtins not overridden, nothing is changed in place
SET jsonb_toaster.override_builtins = off;
INSERT INTO t SELECT * FROM plain;
SET client_min_messages = debug1;
UPDATE t SET jb = jsonb_set(jb, '{k150}', '"off"') WHERE id = 2;
RESET client_min_messages;
RESET jsonb_toaster.override_builtins;

DROP TABLE t, plain, cases, parts_before;
DROP FUNCTION doc(int), compare(text, text, text, int);
DROP EXTENSION jsonb_toaster_test;
RESET jsonb_toaster.range_size;
RESET jsonb_toaster.inline_budget;
