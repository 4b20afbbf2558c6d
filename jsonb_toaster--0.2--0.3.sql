/* jsonb_toaster--0.2--0.3.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION jsonb_toaster UPDATE TO '0.3'" to load this file. \quit

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
