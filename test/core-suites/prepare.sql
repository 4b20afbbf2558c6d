-- test/core-suites/prepare.sql -- make every jsonb column of this database
-- opt in to jsonb_toaster, for PostgreSQL's own jsonb suites
-- (tools/core-jsonb-suites.sh runs it in a fresh database, then the suites).
--
-- Everything here is silent: the suites' outputs must be exactly stock's.

CREATE EXTENSION jsonb_toaster;

-- At the end of every CREATE TABLE (also PARTITION OF, CREATE TABLE AS and
-- SELECT INTO) and ALTER TABLE, every column of type jsonb of the tables
-- the command touched gets toaster = 'jsonb_toaster', and the table the
-- smallest TOAST target, so that TOAST leaves as few bytes as it can in
-- the row.  Domains over jsonb, arrays of jsonb and composite types holding
-- jsonb are other types: their columns are left alone (the toaster only
-- takes values of type jsonb).  Rows a CREATE TABLE AS or SELECT INTO
-- writes are stored before the command ends, so before the option exists;
-- rows written afterwards use it.  A table whose target a command sets to
-- another value gets 128 again (the suites set none).  The commands this
-- function runs fire it again; it then finds nothing left to do.
CREATE FUNCTION jt_core_suites_opt_in() RETURNS event_trigger
LANGUAGE plpgsql AS $$
DECLARE
	rel oid;
	col name;
BEGIN
	FOR rel IN
		SELECT DISTINCT c.oid
		FROM pg_event_trigger_ddl_commands() d
			JOIN pg_class c ON c.oid = d.objid
		WHERE d.classid = 'pg_class'::regclass AND c.relkind IN ('r', 'p')
	LOOP
		FOR col IN
			SELECT a.attname FROM pg_attribute a
			WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped
				AND a.atttypid = 'jsonb'::regtype
				AND NOT coalesce('toaster=jsonb_toaster' = ANY (a.attoptions), false)
			ORDER BY a.attnum
		LOOP
			EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET (toaster = jsonb_toaster)',
						   rel::regclass, col);
		END LOOP;
		-- partitioned tables take no storage parameters; their partitions do
		IF EXISTS (SELECT FROM pg_class c
				   WHERE c.oid = rel AND c.relkind = 'r'
					   AND NOT coalesce('toast_tuple_target=128' = ANY (c.reloptions), false))
			AND EXISTS (SELECT FROM pg_attribute a
						WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped
							AND a.atttypid = 'jsonb'::regtype)
		THEN
			EXECUTE format('ALTER TABLE %s SET (toast_tuple_target = 128)', rel::regclass);
		END IF;
	END LOOP;
END
$$;

CREATE EVENT TRIGGER jt_core_suites_opt_in ON ddl_command_end
	WHEN TAG IN ('CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO', 'ALTER TABLE')
	EXECUTE FUNCTION jt_core_suites_opt_in();

-- Proof that the run was not vacuous: how many stored values of opted-in
-- columns had each storage form (jsonb_toaster_storage), per column, and
-- how many external parts they had.  The suites drop their tables, and
-- their temporary tables vanish with their sessions, so the census is taken
-- before every DROP of a table, type, domain or view (of every table the
-- session can see, temporary ones included) and once more after the
-- suites; for each column and form the largest counts seen are kept.  The
-- totals are lower bounds: tables that live and die between two censuses
-- are not seen.
CREATE TABLE jt_core_suites_census (
	relid oid,
	relname text,
	attname name,
	form text,
	n bigint,
	parts bigint,
	PRIMARY KEY (relid, attname, form)
);

CREATE FUNCTION jt_core_suites_take_census() RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	c record;
BEGIN
	FOR c IN
		SELECT r.oid AS relid, r.oid::regclass::text AS relname, a.attname
		FROM pg_class r JOIN pg_attribute a ON a.attrelid = r.oid
		WHERE r.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
			AND a.atttypid = 'jsonb'::regtype
			AND 'toaster=jsonb_toaster' = ANY (a.attoptions)
			AND (r.relpersistence <> 't' OR r.relnamespace = pg_my_temp_schema())
	LOOP
		EXECUTE format($q$
			INSERT INTO public.jt_core_suites_census
			SELECT %s, %L, %L, (s).form, count(*), sum(coalesce((s).parts, 0))
			FROM (SELECT public.jsonb_toaster_storage(%I) AS s
				  FROM %s WHERE %I IS NOT NULL) v
			GROUP BY 4
			ON CONFLICT (relid, attname, form)
				DO UPDATE SET n = greatest(jt_core_suites_census.n, excluded.n),
					parts = greatest(jt_core_suites_census.parts, excluded.parts)
			$q$, c.relid, c.relname, c.attname, c.attname, c.relid::regclass, c.attname);
	END LOOP;
END
$$;

CREATE FUNCTION jt_core_suites_census_trigger() RETURNS event_trigger
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM public.jt_core_suites_take_census();
END
$$;

CREATE EVENT TRIGGER jt_core_suites_census ON ddl_command_start
	WHEN TAG IN ('DROP TABLE', 'DROP TYPE', 'DROP DOMAIN', 'DROP VIEW')
	EXECUTE FUNCTION jt_core_suites_census_trigger();
