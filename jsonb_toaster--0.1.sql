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
	OUT chunks integer)
RETURNS record
AS 'MODULE_PATHNAME', 'jsonb_toaster_storage'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION jsonb_toaster_storage(jsonb) IS
'describe how a jsonb value is stored (plain, compressed inline or external TOAST), without de-TOASTing it';
