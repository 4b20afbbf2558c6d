--
-- Every released version updates to the current one, and the result is
-- the same extension as a fresh install (as pg_stat_statements'
-- oldextversions test does).  In a database of its own, so that the
-- other tests' columns do not hold the extension.
--
\set regress_db :DBNAME
CREATE DATABASE regress_jt_versions;
\c regress_jt_versions

-- what a version of the extension consists of
CREATE VIEW ext_objects AS
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS object,
	   CASE WHEN d.classid = 'pg_proc'::regclass THEN
			(SELECT format('%s -> %s, %s%s%s, public %s, comment %s', p.oid::regprocedure,
						   pg_get_function_result(p.oid), p.provolatile, p.proparallel,
						   CASE WHEN p.proisstrict THEN ' strict' ELSE '' END,
						   has_function_privilege('public', p.oid, 'EXECUTE'),
						   md5(coalesce(obj_description(p.oid, 'pg_proc'), '')))
			 FROM pg_proc p WHERE p.oid = d.objid)
	   WHEN d.classid = 'pg_event_trigger'::regclass THEN
			(SELECT format('%s %s %s', e.evtevent, e.evtenabled, e.evttags)
			 FROM pg_event_trigger e WHERE e.oid = d.objid)
	   END AS detail
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'jsonb_toaster')
  AND d.deptype = 'e';

-- 0.1, and the library of today under it
CREATE EXTENSION jsonb_toaster VERSION '0.1';
SELECT extversion FROM pg_extension WHERE extname = 'jsonb_toaster';
SELECT count(*) FROM ext_objects;
SELECT count(*) FROM jsonb_toaster_parts('{"a": 1}');
SELECT form FROM jsonb_toaster_storage('{"a": 1}');

ALTER EXTENSION jsonb_toaster UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'jsonb_toaster';
CREATE TABLE updated AS SELECT * FROM ext_objects;

DROP EXTENSION jsonb_toaster;
CREATE EXTENSION jsonb_toaster;
SELECT extversion FROM pg_extension WHERE extname = 'jsonb_toaster';
-- no difference either way
(SELECT * FROM ext_objects EXCEPT SELECT * FROM updated)
UNION ALL
(SELECT * FROM updated EXCEPT SELECT * FROM ext_objects);
SELECT count(*) FROM ext_objects;
SELECT object FROM ext_objects WHERE object NOT LIKE 'function %' ORDER BY 1;

-- 0.2, updated to the current version: the appendable bytea toaster's
-- functions come with it
DROP EXTENSION jsonb_toaster;
CREATE EXTENSION jsonb_toaster VERSION '0.2';
SELECT extversion FROM pg_extension WHERE extname = 'jsonb_toaster';
SELECT count(*) FROM ext_objects;
ALTER EXTENSION jsonb_toaster UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'jsonb_toaster';
(SELECT * FROM ext_objects EXCEPT SELECT * FROM updated)
UNION ALL
(SELECT * FROM updated EXCEPT SELECT * FROM ext_objects);
SELECT form, raw_size, runs FROM bytea_appendable_storage('\x0102'::bytea);
SELECT bytea_appendable_standard('\x0102'::bytea);

\c :regress_db
DROP DATABASE regress_jt_versions;
