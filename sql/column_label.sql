--
-- A column's toaster options mirrored in a security label of provider
-- jsonb_toaster (patched servers only): setting or resetting the options
-- sets or removes the label, and a label sets the options, so that tools
-- which copy a table's definition with its labels but not its attribute
-- options (Citus's shards) keep the column opted in.
--
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;

CREATE TABLE cl (id int, a jsonb, b jsonb, n int);
CREATE VIEW cl_state AS
SELECT a.attname, a.attoptions, l.label
FROM pg_attribute a
LEFT JOIN pg_seclabel l ON l.classoid = 'pg_class'::regclass
	AND l.objoid = a.attrelid AND l.objsubid = a.attnum
	AND l.provider = 'jsonb_toaster'
WHERE a.attrelid = 'cl'::regclass AND a.attnum > 0
ORDER BY a.attnum;

-- options to label
ALTER TABLE cl ALTER COLUMN a SET (toaster = 'jsonb_toaster');
SELECT * FROM cl_state;
ALTER TABLE cl ALTER COLUMN a SET (toaster_options = 'inline_budget=200');
SELECT * FROM cl_state;
ALTER TABLE cl ALTER COLUMN a RESET (toaster_options);
SELECT * FROM cl_state;
-- other options leave the label alone
ALTER TABLE cl ALTER COLUMN a SET (n_distinct = 5);
SELECT * FROM cl_state;
ALTER TABLE cl ALTER COLUMN a RESET (toaster);
SELECT * FROM cl_state;
ALTER TABLE cl ALTER COLUMN a RESET (n_distinct);
-- a rolled back ALTER takes its label with it
BEGIN;
ALTER TABLE cl ALTER COLUMN a SET (toaster = 'jsonb_toaster');
ROLLBACK;
SELECT * FROM cl_state;

-- label to options
SECURITY LABEL FOR jsonb_toaster ON COLUMN cl.b IS 'jsonb_toaster';
SELECT * FROM cl_state;
SECURITY LABEL FOR jsonb_toaster ON COLUMN cl.b IS 'jsonb_toaster (inline_budget=300)';
SELECT * FROM cl_state;
-- a label without options resets them
SECURITY LABEL FOR jsonb_toaster ON COLUMN cl.b IS 'jsonb_toaster';
SELECT * FROM cl_state;
-- the same label again changes nothing
SECURITY LABEL FOR jsonb_toaster ON COLUMN cl.b IS 'jsonb_toaster';
SELECT * FROM cl_state;
-- documents written after the label are the toaster's
INSERT INTO cl SELECT g, NULL, (SELECT jsonb_object_agg('k' || i, repeat(md5((g * i)::text), 20))
	FROM generate_series(1, 60) i), g FROM generate_series(1, 3) g;
SELECT id, (jsonb_toaster_storage(b)).form FROM cl ORDER BY id;
SECURITY LABEL FOR jsonb_toaster ON COLUMN cl.b IS NULL;
SELECT * FROM cl_state;
-- the documents stay readable and new ones are standard
INSERT INTO cl SELECT 4, NULL, b, 4 FROM cl WHERE id = 1;
SELECT id, (jsonb_toaster_storage(b)).form,
	b -> 'k7' = to_jsonb(repeat(md5((CASE id WHEN 4 THEN 1 ELSE id END * 7)::text), 20))
FROM cl ORDER BY id;

-- refused, nothing changed
SECURITY LABEL FOR jsonb_toaster ON TABLE cl IS 'jsonb_toaster';
SECURITY LABEL FOR jsonb_toaster ON COLUMN cl.b IS 'no_such_toaster';
SECURITY LABEL FOR jsonb_toaster ON COLUMN cl.b IS 'jsonb_toaster (inline_budget=300';
SECURITY LABEL FOR jsonb_toaster ON COLUMN cl.b IS 'jsonb_toaster (inline_budgets=1)';
SECURITY LABEL FOR jsonb_toaster ON COLUMN cl.n IS 'jsonb_toaster';
SELECT * FROM cl_state;
-- ownership is needed, as for ALTER TABLE
CREATE ROLE regress_jt_labeller;
GRANT ALL ON cl TO regress_jt_labeller;
SET ROLE regress_jt_labeller;
SECURITY LABEL FOR jsonb_toaster ON COLUMN cl.b IS 'jsonb_toaster';
RESET ROLE;
SELECT * FROM cl_state;

-- under an event trigger that collects DDL commands, the command is the
-- SECURITY LABEL
CREATE FUNCTION cl_ddl_end() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
	FOR r IN SELECT * FROM pg_event_trigger_ddl_commands() LOOP
		RAISE NOTICE 'ddl_command_end: % %', r.command_tag, r.object_identity;
	END LOOP;
END $$;
CREATE EVENT TRIGGER cl_ddl_end ON ddl_command_end EXECUTE FUNCTION cl_ddl_end();
SECURITY LABEL FOR jsonb_toaster ON COLUMN cl.b IS 'jsonb_toaster';
ALTER TABLE cl ALTER COLUMN a SET (toaster = 'jsonb_toaster');
DROP EVENT TRIGGER cl_ddl_end;
DROP FUNCTION cl_ddl_end();
SELECT * FROM cl_state;

-- partitions: each relation's label follows its own options (SET options
-- does not recurse)
CREATE TABLE clp (id int, d jsonb) PARTITION BY RANGE (id);
CREATE TABLE clp1 PARTITION OF clp FOR VALUES FROM (0) TO (10);
CREATE TABLE clp2 PARTITION OF clp FOR VALUES FROM (10) TO (20);
ALTER TABLE clp ALTER COLUMN d SET (toaster = 'jsonb_toaster');
SELECT c.relname, a.attoptions, l.label FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
LEFT JOIN pg_seclabel l ON l.objoid = a.attrelid AND l.objsubid = a.attnum
WHERE c.relname LIKE 'clp%' AND a.attname = 'd' ORDER BY 1;
ALTER TABLE ONLY clp ALTER COLUMN d RESET (toaster);
SELECT c.relname, a.attoptions, l.label FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
LEFT JOIN pg_seclabel l ON l.objoid = a.attrelid AND l.objsubid = a.attnum
WHERE c.relname LIKE 'clp%' AND a.attname = 'd' ORDER BY 1;

-- a column dropped takes its label
ALTER TABLE cl DROP COLUMN b;
SELECT objsubid FROM pg_seclabel WHERE objoid = 'cl'::regclass AND provider = 'jsonb_toaster';

SELECT jsonb_toaster_convert_column('cl', 'a');
SELECT * FROM cl_state;
DROP TABLE clp;
DROP VIEW cl_state;
DROP TABLE cl;
DROP ROLE regress_jt_labeller;
