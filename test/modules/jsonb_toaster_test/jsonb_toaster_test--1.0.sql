\echo Use "CREATE EXTENSION jsonb_toaster_test" to load this file. \quit

-- A jsonb TOAST pointer to the chunks of the given TOASTed column value
-- (any varlena type), with the sizes and compression method the caller
-- chooses: lets tests present any stored bytes, and any inconsistency
-- between pointer and chunks, to code that reads jsonb TOAST values.
CREATE FUNCTION jt_test_toast_pointer(chunks_of anyelement, rawsize integer,
	extsize integer, method text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'jt_test_toast_pointer'
LANGUAGE C STRICT VOLATILE;

-- The bytes of a jsonb value once de-TOASTed, without the varlena header:
-- equal bytes here mean a byte-exact flatten.
CREATE FUNCTION jt_test_flat_bytes(value jsonb)
RETURNS bytea
AS 'MODULE_PATHNAME', 'jt_test_flat_bytes'
LANGUAGE C STRICT IMMUTABLE;
