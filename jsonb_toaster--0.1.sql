/* jsonb_toaster--0.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION jsonb_toaster" to load this file. \quit

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
	OUT hash bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jsonb_toaster_parts'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION jsonb_toaster_parts(jsonb) IS
'list the parts of a value stored by the jsonb toaster (path in the document, range, kind, count, sizes, compression, TOAST value id, chunks, content hash), reading only its pointer';

CREATE FUNCTION jsonb_toaster_convert_column(rel regclass, col name)
RETURNS bigint
AS 'MODULE_PATHNAME', 'jsonb_toaster_convert_column'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION jsonb_toaster_convert_column(regclass, name) IS
'take a jsonb column out of the toaster: reset its toaster option and store every value kept as a skeleton with standard TOAST again; returns the number of rows rewritten';

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
