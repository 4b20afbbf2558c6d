--
-- Who may call jsonb_toaster_convert_column() (patched servers only): not
-- PUBLIC; a role it is granted to, only on tables it owns, with each
-- partition or child; never a catalog.  Every other function of the
-- extension stays executable by PUBLIC.  That a refused call takes no
-- lock first is checked by the isolation spec convert_column_lock.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
RESET client_min_messages;
CREATE ROLE regress_jt_conv_owner;
CREATE ROLE regress_jt_conv_other;

-- EXECUTE for a role granted nothing, on every function of the extension
SELECT p.oid::regprocedure AS function,
	has_function_privilege('regress_jt_conv_other', p.oid, 'EXECUTE') AS can_execute
FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
	AND d.refclassid = 'pg_extension'::regclass
	AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'jsonb_toaster')
ORDER BY p.oid::regprocedure::text;

-- Tables of regress_jt_conv_owner: one holding skeletons, a partitioned
-- table and an inheritance parent each with a child it does not own.
CREATE TABLE conv_t (id int, jb jsonb);
ALTER TABLE conv_t ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO conv_t SELECT g, jsonb_build_object('id', g, 'items',
	(SELECT jsonb_agg(jsonb_build_object('n', i, 'v', md5((g * 1000 + i)::text)))
	 FROM generate_series(1, 400) i))
FROM generate_series(1, 4) g;
CREATE TABLE conv_parted (id int, jb jsonb) PARTITION BY RANGE (id);
CREATE TABLE conv_parted_1 PARTITION OF conv_parted FOR VALUES FROM (0) TO (100);
CREATE TABLE conv_parted_2 PARTITION OF conv_parted FOR VALUES FROM (100) TO (200);
CREATE TABLE conv_parent (id int, jb jsonb);
CREATE TABLE conv_child () INHERITS (conv_parent);
ALTER TABLE conv_parted ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE conv_parted_1 ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE conv_parted_2 ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE conv_parent ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE conv_child ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE conv_t OWNER TO regress_jt_conv_owner;
ALTER TABLE conv_parted OWNER TO regress_jt_conv_owner;
ALTER TABLE conv_parted_1 OWNER TO regress_jt_conv_owner;
ALTER TABLE conv_parted_2 OWNER TO regress_jt_conv_other;
ALTER TABLE conv_parent OWNER TO regress_jt_conv_owner;
ALTER TABLE conv_child OWNER TO regress_jt_conv_other;
SELECT count(*) AS skeletons FROM conv_t
WHERE (jsonb_toaster_storage(jb)).form = 'skeleton' \gset
SELECT :skeletons > 0 AS has_skeletons;

-- not granted: even the owner may not call it
SET ROLE regress_jt_conv_owner;
SELECT jsonb_toaster_convert_column('conv_t', 'jb');
RESET ROLE;
GRANT EXECUTE ON FUNCTION jsonb_toaster_convert_column(regclass, name)
	TO regress_jt_conv_owner, regress_jt_conv_other;

-- granted, but not the owner: of the table, of a catalog
SET ROLE regress_jt_conv_other;
SELECT jsonb_toaster_convert_column('conv_t', 'jb');
SELECT jsonb_toaster_convert_column('pg_class', 'relname');
SELECT jsonb_toaster_convert_column('pg_catalog.pg_statistic', 'stanullfrac');
RESET ROLE;

-- the owner of a parent, not of all its children: nothing is converted
SET ROLE regress_jt_conv_owner;
SELECT jsonb_toaster_convert_column('conv_parted', 'jb');
SELECT jsonb_toaster_convert_column('conv_parent', 'jb');
RESET ROLE;
SELECT c.relname, a.attoptions FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.relname LIKE 'conv\_%' AND a.attname = 'jb' ORDER BY 1;

-- a superuser may not convert a catalog either
SELECT jsonb_toaster_convert_column('pg_class', 'relname');

-- the owner, granted: every skeleton rewritten (the conversion calls the
-- extension's public functions as the owner)
SET ROLE regress_jt_conv_owner;
SELECT jsonb_toaster_convert_column('conv_t', 'jb') = :skeletons AS all_rows;
RESET ROLE;
SELECT (jsonb_toaster_storage(jb)).form, count(*) FROM conv_t GROUP BY 1 ORDER BY 1;
SELECT attoptions FROM pg_attribute WHERE attrelid = 'conv_t'::regclass AND attname = 'jb';

-- a member of the owning role counts as the owner
GRANT regress_jt_conv_owner TO regress_jt_conv_other;
SET ROLE regress_jt_conv_other;
SELECT jsonb_toaster_convert_column('conv_t', 'jb');
RESET ROLE;
REVOKE regress_jt_conv_owner FROM regress_jt_conv_other;

DROP TABLE conv_t, conv_parted, conv_parent, conv_child;
REVOKE EXECUTE ON FUNCTION jsonb_toaster_convert_column(regclass, name)
	FROM regress_jt_conv_owner, regress_jt_conv_other;
DROP ROLE regress_jt_conv_owner, regress_jt_conv_other;
