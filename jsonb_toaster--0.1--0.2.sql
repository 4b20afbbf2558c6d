/* jsonb_toaster--0.1--0.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION jsonb_toaster UPDATE TO '0.2'" to load this file. \quit

-- jsonb_toaster_parts() also says where each part lies in its TOAST value
-- and compression unit: new OUT parameters, so the function is replaced
-- (a view over it must be dropped before the update and created again)
DROP FUNCTION jsonb_toaster_parts(jsonb);
CREATE FUNCTION jsonb_toaster_parts(value jsonb,
	OUT path text[],
	OUT range integer,
	OUT kind text,
	OUT count integer,
	OUT raw_size integer,
	OUT stored_size integer,
	OUT compression text,
	OUT value_id oid,
	OUT chunks integer,
	OUT hash bigint,
	OUT value_offset integer,
	OUT stored_offset integer,
	OUT unit_offset integer,
	OUT unit_parts integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jsonb_toaster_parts'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION jsonb_toaster_parts(jsonb) IS
'list the parts of a value stored by the jsonb toaster (path in the document, range, kind, count, sizes, compression, TOAST value id, chunks, content hash, offset in the TOAST value, where its stored bytes start, its place in a compression unit), reading only its pointer';

CREATE FUNCTION jsonb_toaster_values(value jsonb,
	OUT value_id oid,
	OUT size integer,
	OUT chunks integer,
	OUT parts integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jsonb_toaster_values'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION jsonb_toaster_values(jsonb) IS
'list the TOAST values a value stored by the jsonb toaster keeps its parts in (value id, stored size, chunks, parts), reading only its pointer';

-- the conversion is not for PUBLIC: see the top of jsonb_toaster--0.2.sql
REVOKE EXECUTE ON FUNCTION jsonb_toaster_convert_column(regclass, name) FROM PUBLIC;

-- The guard against dropping the extension while columns use the toaster
-- lives in the library; in a session that has not loaded it (no
-- shared_preload_libraries), this event trigger loads it before the drop,
-- by calling one of its functions.  If the library cannot be loaded at all
-- (removed before the extension was dropped), the drop goes on with a
-- warning: a missing library must not block every DROP SCHEMA of the
-- database, and skeletons are unreadable then anyway.  It fires in replica
-- sessions too (session_replication_role), which would otherwise skip it.
CREATE FUNCTION jsonb_toaster_drop_guard()
RETURNS event_trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM @extschema@.jsonb_toaster_custom_toast();
EXCEPTION WHEN undefined_file THEN
	RAISE WARNING 'the jsonb_toaster library cannot be loaded: columns that use its toaster are not checked'
		USING DETAIL = SQLERRM;
END
$$;

CREATE EVENT TRIGGER jsonb_toaster_drop_guard ON ddl_command_start
	WHEN TAG IN ('DROP EXTENSION', 'DROP SCHEMA', 'DROP OWNED')
	EXECUTE FUNCTION jsonb_toaster_drop_guard();
ALTER EVENT TRIGGER jsonb_toaster_drop_guard ENABLE ALWAYS;
