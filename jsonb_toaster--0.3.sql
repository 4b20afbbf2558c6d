/* jsonb_toaster--0.3.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION jsonb_toaster" to load this file. \quit

--
-- Privileges: every function is executable by PUBLIC except
-- jsonb_toaster_convert_column().  The accessors and the introspection
-- functions read only values the caller can already read, and
-- jsonb_toaster_standard() and jsonb_toaster_storage() are called by the
-- conversion as the table's owner.  The conversion locks a table hierarchy
-- against writes and rewrites its rows: an administrator grants it to the
-- roles that may convert their own tables (it still checks ownership).
--

CREATE FUNCTION jsonb_toaster_storage(value jsonb,
	OUT form text,
	OUT compressed boolean,
	OUT compression text,
	OUT raw_size bigint,
	OUT stored_size bigint,
	OUT toast_relid regclass,
	OUT value_id oid,
	OUT chunks integer,
	OUT inline_size bigint,
	OUT parts integer)
RETURNS record
AS 'MODULE_PATHNAME', 'jsonb_toaster_storage'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION jsonb_toaster_storage(jsonb) IS
'describe how a jsonb value is stored (plain, compressed inline or external TOAST), without de-TOASTing it';

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

CREATE FUNCTION jsonb_toaster_convert_column(rel regclass, col name)
RETURNS bigint
AS 'MODULE_PATHNAME', 'jsonb_toaster_convert_column'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION jsonb_toaster_convert_column(regclass, name) IS
'take a jsonb column out of the toaster: reset its toaster option and store every value kept as a skeleton with standard TOAST again; returns the number of rows rewritten';

-- not for PUBLIC: see the top of this file
REVOKE EXECUTE ON FUNCTION jsonb_toaster_convert_column(regclass, name) FROM PUBLIC;

CREATE FUNCTION jsonb_toaster_standard(value jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'jsonb_toaster_standard'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION jsonb_toaster_standard(jsonb) IS
'the value as an ordinary in-memory jsonb, however it is stored (storing it in a column that does not use the toaster gives it standard storage)';

CREATE FUNCTION jsonb_toaster_custom_toast()
RETURNS boolean
AS 'MODULE_PATHNAME', 'jsonb_toaster_custom_toast'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION jsonb_toaster_custom_toast() IS
'whether this build of the extension was compiled against a server with the custom TOAST hooks (patches/postgresql-18), which the toaster needs';

--
-- Partial-access accessors: the semantics of the builtins of the same
-- name without the jt_ prefix, reading only the part of a compressed or
-- TOASTed document they need.  The operators below shadow the builtin ones
-- for sessions that put this extension's schema before pg_catalog in
-- search_path; nobody else sees them.
--
CREATE FUNCTION jt_object_field(from_json jsonb, field_name text)
RETURNS jsonb AS 'MODULE_PATHNAME', 'jt_object_field'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION jt_object_field_text(from_json jsonb, field_name text)
RETURNS text AS 'MODULE_PATHNAME', 'jt_object_field_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION jt_array_element(from_json jsonb, element_index integer)
RETURNS jsonb AS 'MODULE_PATHNAME', 'jt_array_element'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION jt_array_element_text(from_json jsonb, element_index integer)
RETURNS text AS 'MODULE_PATHNAME', 'jt_array_element_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION jt_extract_path(from_json jsonb, VARIADIC path_elems text[])
RETURNS jsonb AS 'MODULE_PATHNAME', 'jt_extract_path'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION jt_extract_path_text(from_json jsonb, VARIADIC path_elems text[])
RETURNS text AS 'MODULE_PATHNAME', 'jt_extract_path_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION jt_exists(jsonb, text)
RETURNS boolean AS 'MODULE_PATHNAME', 'jt_exists'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION jt_exists_any(jsonb, text[])
RETURNS boolean AS 'MODULE_PATHNAME', 'jt_exists_any'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION jt_exists_all(jsonb, text[])
RETURNS boolean AS 'MODULE_PATHNAME', 'jt_exists_all'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR -> (LEFTARG = jsonb, RIGHTARG = text, FUNCTION = jt_object_field);
CREATE OPERATOR ->> (LEFTARG = jsonb, RIGHTARG = text, FUNCTION = jt_object_field_text);
CREATE OPERATOR -> (LEFTARG = jsonb, RIGHTARG = integer, FUNCTION = jt_array_element);
CREATE OPERATOR ->> (LEFTARG = jsonb, RIGHTARG = integer, FUNCTION = jt_array_element_text);
CREATE OPERATOR #> (LEFTARG = jsonb, RIGHTARG = text[], FUNCTION = jt_extract_path);
CREATE OPERATOR #>> (LEFTARG = jsonb, RIGHTARG = text[], FUNCTION = jt_extract_path_text);
CREATE OPERATOR ? (LEFTARG = jsonb, RIGHTARG = text, FUNCTION = jt_exists,
	RESTRICT = matchingsel, JOIN = matchingjoinsel);
CREATE OPERATOR ?| (LEFTARG = jsonb, RIGHTARG = text[], FUNCTION = jt_exists_any,
	RESTRICT = matchingsel, JOIN = matchingjoinsel);
CREATE OPERATOR ?& (LEFTARG = jsonb, RIGHTARG = text[], FUNCTION = jt_exists_all,
	RESTRICT = matchingsel, JOIN = matchingjoinsel);

-- The appendable bytea toaster's values: how one is stored, without
-- reading it, and the value read whole (jsonb_toaster_convert_column()
-- stores bytea columns' values again with it).
CREATE FUNCTION bytea_appendable_storage(value bytea,
	OUT form text,
	OUT raw_size bigint,
	OUT stored_size bigint,
	OUT toast_relid regclass,
	OUT value_id oid,
	OUT runs integer,
	OUT chunks bigint,
	OUT tail_size integer)
RETURNS record
AS 'MODULE_PATHNAME', 'bytea_appendable_storage'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION bytea_appendable_storage(bytea) IS
'describe how a bytea value is stored (plain, compressed, external, or by the appendable bytea toaster: its runs, chunks and tail), without reading it';

CREATE FUNCTION bytea_appendable_standard(value bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'bytea_appendable_standard'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION bytea_appendable_standard(bytea) IS
'the value read whole, in memory: stored in a column that does not use the toaster, it takes standard storage';

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
