--
-- An accessor keeps, per call site (one function in one query), the
-- buffers it decompresses into and fetches TOAST chunks into, and reuses
-- them for every row: what a call site holds must not grow with the number
-- of calls.
--
CREATE SCHEMA jt;
CREATE EXTENSION jsonb_toaster SCHEMA jt;
CREATE EXTENSION jsonb_toaster_test SCHEMA jt;

-- One document of each standard storage form, about 60 kB raw.
CREATE TABLE scratch_docs (form text, jb jsonb);
ALTER TABLE scratch_docs ALTER COLUMN jb SET STORAGE MAIN;
INSERT INTO scratch_docs
SELECT 'compressed', jsonb_build_object('a', 1, 'big', repeat('x', 60000));
CREATE TABLE scratch_ext (form text, jb jsonb) WITH (toast_tuple_target = 128);
INSERT INTO scratch_ext
SELECT 'external compressed', jsonb_build_object('a', 1, 'big',
	(SELECT string_agg(md5(i::text), '') FROM generate_series(1, 2000) i));
ALTER TABLE scratch_ext ALTER COLUMN jb SET STORAGE EXTERNAL;
INSERT INTO scratch_ext
SELECT 'external', jsonb_build_object('a', 1, 'big', repeat('y', 60000));
SELECT d.form, s.form AS stored
FROM (SELECT * FROM scratch_docs UNION ALL SELECT * FROM scratch_ext) d,
	jt.jsonb_toaster_storage(d.jb) s ORDER BY 1;

-- The call site's memory after 10 and after 500 calls: the same.
SELECT d.form, f.fn,
	jt.jt_test_call_site_memory(f.fn, d.jb, f.arg, 10) =
	jt.jt_test_call_site_memory(f.fn, d.jb, f.arg, 500) AS steady
FROM (SELECT * FROM scratch_docs UNION ALL SELECT * FROM scratch_ext) d,
	(VALUES ('jt.jt_object_field(jsonb,text)'::regprocedure, 'big'::text),
			('jt.jt_object_field_text(jsonb,text)', 'a')) f(fn, arg)
ORDER BY 1, 2;

-- and the call site really keeps a buffer (so the comparison above is
-- not between two empty contexts)
SELECT jt.jt_test_call_site_memory('jt.jt_object_field(jsonb,text)',
	jb, 'a'::text, 1) > 8192 AS keeps_a_buffer
FROM scratch_docs;

DROP TABLE scratch_docs, scratch_ext;
DROP SCHEMA jt CASCADE;
