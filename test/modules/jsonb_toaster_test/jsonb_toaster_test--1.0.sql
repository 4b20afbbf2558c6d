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

-- The raw content of the partno-th part (counting from 0, in the order of
-- jsonb_toaster_parts()) of a value stored by the toaster (patched servers
-- only): the jsonb payload, decompressed, without the varlena header.  For
-- a part kept as a delta, what is stored: its base.
-- The CRC-32C of bytes (what core's crc32c() gives) computed three blocks
-- at a time wherever the CPU can, whichever way the extension's reads take
-- on this machine.
CREATE FUNCTION jt_test_crc32c_three_way(bytes bytea)
RETURNS bigint
AS 'MODULE_PATHNAME', 'jt_test_crc32c_three_way'
LANGUAGE C STRICT IMMUTABLE;

CREATE FUNCTION jt_test_part_bytes(skeleton jsonb, partno integer)
RETURNS bytea
AS 'MODULE_PATHNAME', 'jt_test_part_bytes'
LANGUAGE C STRICT STABLE;

-- A copy of a value stored by the toaster whose partno-th part is read from
-- the chunks of replacement instead (patched servers only): a TOASTed
-- column value of any varlena type in the same TOAST relation, stored
-- uncompressed, whose bytes stand for the part's jsonb payload.  Lets
-- tests present any part content to the code that reads skeletons.
CREATE FUNCTION jt_test_skeleton_replace_part(skeleton jsonb, partno integer,
	replacement anyelement)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'jt_test_skeleton_replace_part'
LANGUAGE C STRICT VOLATILE;

-- A copy of a value stored by the toaster whose partno-th part's directory
-- entry claims the given raw size (with its varlena header), stored size
-- and TOAST value id (patched servers only): lets tests present any
-- disagreement between a directory and the chunks stored.
CREATE FUNCTION jt_test_skeleton_set_part(skeleton jsonb, partno integer,
	rawsize integer, extsize integer, valueid oid)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'jt_test_skeleton_set_part'
LANGUAGE C STRICT VOLATILE;
-- the same, the part then said to start at byte value_offset of its value
-- (format version 5 and later)
CREATE FUNCTION jt_test_skeleton_set_part(skeleton jsonb, partno integer,
	rawsize integer, extsize integer, valueid oid, value_offset integer)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'jt_test_skeleton_set_part'
LANGUAGE C STRICT VOLATILE;
-- the same, the part then said to lie in a compression unit: its index in
-- it, the unit's part count and where it starts in the unit's raw bytes
-- (format version 6 and later), its entry otherwise left as it was
CREATE FUNCTION jt_test_skeleton_set_unit(skeleton jsonb, partno integer,
	unit_index integer, unit_parts integer, unit_offset integer)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'jt_test_skeleton_set_unit'
LANGUAGE C STRICT VOLATILE;

-- Bytes held by one call site of fn(doc, arg) after "calls" calls (its
-- fn_extra and whatever it keeps there): equal for 10 and 1000 calls means
-- the function keeps no more per call site than it needs.
CREATE FUNCTION jt_test_call_site_memory(fn regprocedure, doc jsonb,
	arg anyelement, calls integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'jt_test_call_site_memory'
LANGUAGE C STRICT VOLATILE;

-- A copy of a value stored by the toaster whose first delta record (a
-- part kept as a delta of the part it replaced) claims the given edit: the
-- base entries kept before the literal's, and those it replaces (patched
-- servers only).
CREATE FUNCTION jt_test_skeleton_set_delta(skeleton jsonb, first integer,
	removed integer)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'jt_test_skeleton_set_delta'
LANGUAGE C STRICT VOLATILE;

-- A copy of a value stored by the toaster whose partno-th part's layout
-- byte (format version 3, src/format/format.h) is the given one (patched
-- servers only).
CREATE FUNCTION jt_test_skeleton_set_layout(skeleton jsonb, partno integer,
	layout integer)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'jt_test_skeleton_set_layout'
LANGUAGE C STRICT VOLATILE;

-- The format version of a value stored by the toaster (patched servers
-- only).
CREATE FUNCTION jt_test_format_version(skeleton jsonb)
RETURNS int
AS 'MODULE_PATHNAME', 'jt_test_format_version'
LANGUAGE C STRICT VOLATILE;

-- A value stored by the toaster, without deltas, as format version 3 wrote
-- it: parts' hashes by hash_bytes(), not CRC-32C (patched servers only).
CREATE FUNCTION jt_test_skeleton_legacy_hashes(skeleton jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'jt_test_skeleton_legacy_hashes'
LANGUAGE C STRICT VOLATILE;

-- A value stored by the toaster whose root is a reference, as format
-- versions 1 and 2 wrote it: without layout bytes (patched servers only).
CREATE FUNCTION jt_test_skeleton_without_layouts(skeleton jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'jt_test_skeleton_without_layouts'
LANGUAGE C STRICT VOLATILE;

-- A copy of a value stored by the toaster whose pointer claims another
-- document size (patched servers only).
CREATE FUNCTION jt_test_skeleton_set_rawsize(skeleton jsonb, rawsize integer)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'jt_test_skeleton_set_rawsize'
LANGUAGE C STRICT VOLATILE;

CREATE FUNCTION jt_test_tree_edits(skeleton jsonb)
RETURNS int
AS 'MODULE_PATHNAME', 'jt_test_tree_edits'
LANGUAGE C STRICT STABLE;

CREATE FUNCTION jt_test_skeleton_set_tree_entry(skeleton jsonb, field text, value bigint)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'jt_test_skeleton_set_tree_entry'
LANGUAGE C STRICT VOLATILE;

-- The bytes of a custom TOAST pointer as stored (NULL for other values),
-- and a bytea that is the pointer such bytes give: tests damage pointers
-- of the appendable bytea toaster with them (patched servers only).
CREATE FUNCTION jt_test_custom_pointer_bytes(value bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'jt_test_custom_pointer_bytes'
LANGUAGE C STRICT STABLE;

CREATE FUNCTION jt_test_bytea_from_pointer_bytes(pointer bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'jt_test_bytea_from_pointer_bytes'
LANGUAGE C STRICT VOLATILE;

-- 'ok' when the TOAST relation of rel holds exactly the chunks of the
-- values its column col's documents name, and no value is named by two
-- rows; otherwise what differs.
CREATE FUNCTION jt_test_toast_ok(rel regclass, col name DEFAULT 'jb')
RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
	live bigint;
	stored bigint;
	shared bigint;
BEGIN
	EXECUTE format('SELECT coalesce(sum(chunks), 0) FROM (SELECT DISTINCT v.value_id, v.chunks FROM %s, jsonb_toaster_values(%I) v) v', rel, col)
		INTO live;
	EXECUTE format('SELECT count(*) FROM %s',
				   (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel))
		INTO stored;
	EXECUTE format('SELECT count(*) FROM (SELECT v.value_id FROM %s, jsonb_toaster_values(%I) v GROUP BY 1 HAVING count(*) > 1) s', rel, col)
		INTO shared;
	RETURN CASE WHEN stored = live AND shared = 0 THEN 'ok'
		ELSE format('%s TOAST rows, %s live chunks, %s values in two rows', stored, live, shared) END;
END $$;

-- The TOAST chunks that running q fetches through the index of rel's TOAST
-- relation, in this transaction's statistics: what a read costs in TOAST.
CREATE FUNCTION jt_test_toast_fetches(rel regclass, q text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	idx oid := (SELECT indexrelid FROM pg_index WHERE indrelid =
				(SELECT reltoastrelid FROM pg_class WHERE oid = rel));
	before bigint := pg_stat_get_xact_tuples_fetched(idx);
BEGIN
	EXECUTE q;
	RETURN pg_stat_get_xact_tuples_fetched(idx) - before;
END $$;
