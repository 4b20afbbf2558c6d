--
-- What an accessor's call site (one function in one query) holds must not
-- grow with the number of calls.  The buffers reads decompress and fetch
-- into belong to the backend, not to call sites (accessor_memory checks
-- those).
--
CREATE SCHEMA jt;
CREATE EXTENSION jsonb_toaster SCHEMA jt;
CREATE EXTENSION jsonb_toaster_test SCHEMA jt;

-- One document of each standard storage form, about 60 kB raw.
CREATE TABLE site_docs (form text, jb jsonb);
ALTER TABLE site_docs ALTER COLUMN jb SET STORAGE MAIN;
INSERT INTO site_docs
SELECT 'compressed', jsonb_build_object('a', 1, 'big', repeat('x', 60000));
CREATE TABLE site_ext (form text, jb jsonb) WITH (toast_tuple_target = 128);
INSERT INTO site_ext
SELECT 'external compressed', jsonb_build_object('a', 1, 'big',
	(SELECT string_agg(md5(i::text), '') FROM generate_series(1, 2000) i));
ALTER TABLE site_ext ALTER COLUMN jb SET STORAGE EXTERNAL;
INSERT INTO site_ext
SELECT 'external', jsonb_build_object('a', 1, 'big', repeat('y', 60000));
SELECT d.form, s.form AS stored
FROM (SELECT * FROM site_docs UNION ALL SELECT * FROM site_ext) d,
	jt.jsonb_toaster_storage(d.jb) s ORDER BY 1;

-- The call site's memory after 10 and after 500 calls: the same.
SELECT d.form, f.fn,
	jt.jt_test_call_site_memory(f.fn, d.jb, f.arg, 10) =
	jt.jt_test_call_site_memory(f.fn, d.jb, f.arg, 500) AS steady
FROM (SELECT * FROM site_docs UNION ALL SELECT * FROM site_ext) d,
	(VALUES ('jt.jt_object_field(jsonb,text)'::regprocedure, 'big'::text),
			('jt.jt_object_field_text(jsonb,text)', 'a')) f(fn, arg)
ORDER BY 1, 2;

-- and it keeps no document's buffers of its own
SELECT max(jt.jt_test_call_site_memory('jt.jt_object_field(jsonb,text)',
	jb, 'a'::text, 1)) < 60000 AS keeps_no_document
FROM site_docs;

DROP TABLE site_docs, site_ext;
DROP SCHEMA jt CASCADE;
