/*-------------------------------------------------------------------------
 *
 * jsonb_toaster_test.c
 *	  Test-only helpers for jsonb_toaster: forge TOAST pointers, and
 *	  skeletons whose parts are bytes the test chooses.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * test/modules/jsonb_toaster_test/jsonb_toaster_test.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/toast_compression.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

#ifdef JT_CUSTOM_TOAST
/*
 * The toaster's format: types and constants only, no code of it is called
 * but jt_comp_crc32c_three_way() (the extension is preloaded on the servers
 * that have the hooks).
 */
#include "format/delta.h"
#include "format/pointer.h"
#include "format/skeleton.h"
#include "support/crc32c.h"
#endif

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(jt_test_toast_pointer);

/*
 * jt_test_toast_pointer(chunks_of anyelement, rawsize, extsize, method)
 *
 * chunks_of must be a TOASTed column value of a varlena type: its chunks
 * become the stored stream of the returned jsonb pointer.  rawsize
 * is the raw jsonb payload size (without header), extsize the stored size,
 * method 'pglz', 'lz4' or 'none'.
 */
Datum
jt_test_toast_pointer(PG_FUNCTION_ARGS)
{
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	int32		rawsize = PG_GETARG_INT32(1);
	int32		extsize = PG_GETARG_INT32(2);
	char	   *method = text_to_cstring(PG_GETARG_TEXT_PP(3));
	struct varatt_external ptr;
	struct varlena *result;

	if (!VARATT_IS_EXTERNAL_ONDISK(attr))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the first argument must be a TOASTed column value")));
	VARATT_EXTERNAL_GET_POINTER(ptr, attr);

	ptr.va_rawsize = rawsize + VARHDRSZ;
	if (strcmp(method, "pglz") == 0)
		VARATT_EXTERNAL_SET_SIZE_AND_COMPRESS_METHOD(ptr, extsize, TOAST_PGLZ_COMPRESSION_ID);
	else if (strcmp(method, "lz4") == 0)
		VARATT_EXTERNAL_SET_SIZE_AND_COMPRESS_METHOD(ptr, extsize, TOAST_LZ4_COMPRESSION_ID);
	else
		ptr.va_extinfo = extsize;

	result = (struct varlena *) palloc(TOAST_POINTER_SIZE);
	SET_VARTAG_EXTERNAL(result, VARTAG_ONDISK);
	memcpy(VARDATA_EXTERNAL(result), &ptr, sizeof(ptr));
	PG_RETURN_POINTER(result);
}

PG_FUNCTION_INFO_V1(jt_test_flat_bytes);

/*
 * jt_test_flat_bytes(jsonb) returns bytea
 *
 * The bytes of the value once de-TOASTed (its data, without the varlena
 * header): what byte-exactness tests compare.
 */
Datum
jt_test_flat_bytes(PG_FUNCTION_ARGS)
{
	struct varlena *flat = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	Size		len = VARSIZE(flat) - VARHDRSZ;
	bytea	   *result = palloc(len + VARHDRSZ);

	SET_VARSIZE(result, len + VARHDRSZ);
	memcpy(VARDATA(result), VARDATA(flat), len);
	PG_RETURN_BYTEA_P(result);
}

#ifdef JT_CUSTOM_TOAST

/*
 * Looking for the directory entry of the partno-th part of a skeleton, in
 * document order: the order of jsonb_toaster_parts(), and the order in
 * which flattening fetches the parts.  The tree is walked here rather than
 * with the extension's code, so that the forgery does not depend on the
 * code under test; the skeleton is a genuine one, so a malformed tree is
 * only an error of the caller.
 */
typedef struct PartFinder
{
	const char *tree;
	uint32		tree_size;
	uint32		version;		/* the pointer's format version */
	uint32		target;			/* the part sought */
	uint32		seen;			/* parts passed so far */
	int64		found;			/* tree offset of its entry, or -1 */
	int64		layout;			/* and of its layout byte, or -1 */
} PartFinder;

static uint32
tree_word(PartFinder *pf, uint64 offset)
{
	uint32		v;

	if (offset + sizeof(uint32) > pf->tree_size)
		elog(ERROR, "skeleton tree read out of bounds");
	memcpy(&v, pf->tree + offset, sizeof(uint32));
	return v;
}

/* A reference at tree offset offset whose bytes end at offset end. */
static void
find_in_ref(PartFinder *pf, uint64 offset, uint64 end)
{
	uint32		word = tree_word(pf, offset + offsetof(JtRefHeader, nranges));
	uint32		nranges = word & ~JT_REF_HAS_LAYOUTS;

	if (pf->target - pf->seen < nranges)
	{
		pf->found = offset + sizeof(JtRefHeader) +
			(uint64) (pf->target - pf->seen) * jt_entry_size(pf->version);
		if (pf->found + jt_entry_size(pf->version) > pf->tree_size ||
			end > pf->tree_size)
			elog(ERROR, "skeleton tree read out of bounds");
		/* format version 3: the layout bytes end the reference */
		if (word & JT_REF_HAS_LAYOUTS)
			pf->layout = end - nranges + (pf->target - pf->seen);
	}
	pf->seen += nranges;
}

static void
find_in_container(PartFinder *pf, uint64 offset)
{
	uint32		header = tree_word(pf, offset);
	uint32		count = header & JT_CONTAINER_COUNT_MASK;
	uint32		nentries = (header & JT_CONTAINER_OBJECT) ? 2 * count : count;
	uint64		data = offset + sizeof(uint32) + (uint64) nentries * sizeof(uint32);
	uint64		start = 0;

	check_stack_depth();
	for (uint32 i = 0; i < nentries && pf->found < 0; i++)
	{
		uint32		e = tree_word(pf, offset + sizeof(uint32) + (uint64) i * sizeof(uint32));
		uint64		end = (e & JT_JENTRY_HAS_OFF) ? (e & JT_JENTRY_OFFLEN_MASK) :
			start + (e & JT_JENTRY_OFFLEN_MASK);
		uint64		child = data + ((start + 3) & ~(uint64) 3);

		/* object keys are strings: only values can be containers */
		if ((e & JT_JENTRY_TYPE_MASK) == JT_JENTRY_CONTAINER)
			find_in_container(pf, child);
		else if ((e & JT_JENTRY_TYPE_MASK) == JT_JENTRY_REF)
			find_in_ref(pf, child, data + end);
		start = end;
	}
}

/* Refuse an argument that is not a value stored by the toaster. */
static void
check_stored_by_toaster(struct varlena *attr)
{
	if (!VARATT_IS_EXTERNAL_CUSTOM(attr) ||
		custom_toaster_id(attr) != JSONB_TOASTER_ID)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the first argument must be a column value stored by jsonb_toaster")));
}

/*
 * The skeleton of a jsonb argument: its header, and where the directory
 * entry of part partno lies in the datum; and, if layout_pos is not NULL,
 * where its layout byte lies (an error if it has none).  Returns the
 * pointer's format version, which says how entries are laid out.
 */
static uint32
find_part(struct varlena *attr, int32 partno, JtSkeletonHeader *hdr,
		  Size *range_pos, Size *layout_pos)
{
	varatt_custom header;
	const char *payload;
	PartFinder	pf;
	uint32		root_entry;

	check_stored_by_toaster(attr);
	VARATT_CUSTOM_GET_HEADER(header, attr);
	if (header.va_size < VARHDRSZ_CUSTOM + sizeof(JtSkeletonHeader))
		elog(ERROR, "skeleton pointer too short");
	payload = VARDATA_CUSTOM(attr);
	memcpy(hdr, payload, sizeof(JtSkeletonHeader));
	if (hdr->nparts & JT_SKELETON_TREE_FOLDED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the value's tree is folded into a compressed datum")));
	/* a delta area may follow the tree (format version 2) */
	if (hdr->tree_size > header.va_size - VARHDRSZ_CUSTOM - sizeof(JtSkeletonHeader))
		elog(ERROR, "skeleton tree size does not match the pointer");
	if (partno < 0 || (uint32) partno >= hdr->nparts)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("part %d out of range: the skeleton has %u parts",
						partno, hdr->nparts)));

	pf.tree = payload + sizeof(JtSkeletonHeader);
	pf.tree_size = hdr->tree_size;
	pf.version = header.va_version;
	pf.target = (uint32) partno;
	pf.seen = 0;
	pf.found = -1;
	pf.layout = -1;
	/* the root's JEntry, then the root at offset 4 */
	root_entry = tree_word(&pf, 0);
	if ((root_entry & JT_JENTRY_TYPE_MASK) == JT_JENTRY_REF)
		find_in_ref(&pf, sizeof(uint32),
					sizeof(uint32) + (root_entry & JT_JENTRY_OFFLEN_MASK));
	else
		find_in_container(&pf, sizeof(uint32));
	if (pf.found < 0)
		elog(ERROR, "part %d not found in the skeleton's tree", partno);
	*range_pos = (payload - (const char *) attr) + sizeof(JtSkeletonHeader) +
		(Size) pf.found;
	if (layout_pos)
	{
		if (pf.layout < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("part %d has no layout byte", partno)));
		*layout_pos = (payload - (const char *) attr) +
			sizeof(JtSkeletonHeader) + (Size) pf.layout;
	}
	return pf.version;
}

/*
 * The raw content of the part a directory entry names, read by core: the
 * whole TOAST value, or for a part packed with others, its bytes of the
 * value (fetched as a slice of it) decompressed by core; for a part of a
 * compression unit, the unit's bytes, decompressed by core, then the part's
 * raw bytes cut from them.
 */
static struct varlena *
stored_part(const JtPartEntry *range, Oid toastrelid)
{
	struct varatt_external ptr;
	struct varlena *extptr;
	struct varlena *bytes;
	struct varlena *stored;
	uint32		extsize = range->extinfo & VARLENA_EXTSIZE_MASK;

	ptr.va_valueid = range->valueid;
	ptr.va_toastrelid = toastrelid;
	extptr = (struct varlena *) palloc(TOAST_POINTER_SIZE);
	SET_VARTAG_EXTERNAL(extptr, VARTAG_ONDISK);
	if (range->offset == 0 && range->value_size == extsize &&
		!jt_entry_in_unit(range))
	{
		ptr.va_rawsize = range->rawsize;
		ptr.va_extinfo = range->extinfo;
		memcpy(VARDATA_EXTERNAL(extptr), &ptr, sizeof(ptr));
		return detoast_attr(extptr);
	}
	ptr.va_rawsize = (int32) range->value_size + VARHDRSZ;
	ptr.va_extinfo = range->value_size;
	memcpy(VARDATA_EXTERNAL(extptr), &ptr, sizeof(ptr));
	bytes = detoast_attr_slice(extptr, jt_entry_stored_offset(range), extsize);
	if (extsize == (uint32) range->rawsize - VARHDRSZ && !jt_entry_in_unit(range))
		return bytes;
	stored = palloc(extsize + VARHDRSZ);
	SET_VARSIZE_COMPRESSED(stored, extsize + VARHDRSZ);
	memcpy(VARDATA(stored), VARDATA(bytes), extsize);
	if (jt_entry_in_unit(range))
	{
		struct varlena *unit = detoast_attr(stored);
		struct varlena *part = palloc(range->rawsize);
		uint32		len = range->rawsize - VARHDRSZ;

		if ((uint64) jt_entry_unit_raw_offset(range) + len > VARSIZE_ANY_EXHDR(unit))
			elog(ERROR, "the part lies past the end of its unit");
		SET_VARSIZE(part, range->rawsize);
		memcpy(VARDATA(part), VARDATA_ANY(unit) + jt_entry_unit_raw_offset(range),
			   len);
		return part;
	}
	return detoast_attr(stored);
}


#endif							/* JT_CUSTOM_TOAST */

PG_FUNCTION_INFO_V1(jt_test_part_bytes);

/*
 * jt_test_part_bytes(skeleton jsonb, partno int) returns bytea
 *
 * The raw content (a jsonb payload, decompressed, without the varlena
 * header) of the partno-th part of a value stored by the toaster, in
 * document order (as jsonb_toaster_parts() lists them, counting from 0).
 */
Datum
jt_test_part_bytes(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	JtSkeletonHeader hdr;
	JtPartEntry range;
	Size		pos;
	uint32		version;
	struct varlena *raw;
	Size		len;
	bytea	   *result;

	version = find_part(attr, PG_GETARG_INT32(1), &hdr, &pos, NULL);
	jt_entry_read((char *) attr + pos, version, &range);
	raw = stored_part(&range, hdr.toastrelid);
	len = VARSIZE_ANY_EXHDR(raw);
	result = palloc(len + VARHDRSZ);
	SET_VARSIZE(result, len + VARHDRSZ);
	memcpy(VARDATA(result), VARDATA_ANY(raw), len);
	PG_RETURN_BYTEA_P(result);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jt_test_part_bytes needs a server with custom TOAST")));
	PG_RETURN_NULL();
#endif
}

PG_FUNCTION_INFO_V1(jt_test_crc32c_three_way);

/*
 * jt_test_crc32c_three_way(bytes bytea) returns bigint
 *
 * The CRC-32C of bytes (as core's crc32c() gives it) computed three blocks
 * at a time wherever the CPU can, whether the extension's reads use that
 * way or core's on this machine.
 */
Datum
jt_test_crc32c_three_way(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	bytea	   *bytes = PG_GETARG_BYTEA_PP(0);
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	crc = jt_comp_crc32c_three_way(crc, VARDATA_ANY(bytes),
								   VARSIZE_ANY_EXHDR(bytes));
	FIN_CRC32C(crc);
	PG_RETURN_INT64((int64) crc);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jt_test_crc32c_three_way needs a server with custom TOAST")));
	PG_RETURN_NULL();
#endif
}

PG_FUNCTION_INFO_V1(jt_test_skeleton_replace_part);

/*
 * jt_test_skeleton_replace_part(skeleton jsonb, partno int,
 *								 replacement anyelement) returns jsonb
 *
 * A copy of the toaster's pointer skeleton in which the directory entry of
 * part partno (as for jt_test_part_bytes) refers to the stored chunks of
 * replacement instead: its raw size, stored size and method, and value id
 * become replacement's.  replacement must be a TOASTed column value of a
 * varlena type kept in the same TOAST relation as the skeleton's parts
 * (another column of the same table); stored uncompressed, its bytes are
 * what reading the part returns.  The rest of the directory entry (the
 * part's root header, its hash, its first key) is left as it was.
 */
Datum
jt_test_skeleton_replace_part(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	struct varlena *repl = (struct varlena *) PG_GETARG_POINTER(2);
	JtSkeletonHeader hdr;
	JtPartEntry range;
	Size		pos;
	uint32		version;
	struct varatt_external ptr;
	struct varlena *result;

	version = find_part(attr, PG_GETARG_INT32(1), &hdr, &pos, NULL);
	if (!VARATT_IS_EXTERNAL_ONDISK(repl))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the replacement must be a TOASTed column value")));
	VARATT_EXTERNAL_GET_POINTER(ptr, repl);
	if (ptr.va_toastrelid != hdr.toastrelid)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the replacement is not in the skeleton's TOAST relation")));

	result = palloc(VARSIZE_EXTERNAL(attr));
	memcpy(result, attr, VARSIZE_EXTERNAL(attr));
	jt_entry_read((char *) result + pos, version, &range);
	range.rawsize = ptr.va_rawsize;
	range.extinfo = ptr.va_extinfo;
	range.valueid = ptr.va_valueid;
	range.offset = 0;
	range.value_size = VARATT_EXTERNAL_GET_EXTSIZE(ptr);
	range.unit = 0;
	jt_entry_write((char *) result + pos, version, &range);
	PG_RETURN_POINTER(result);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jt_test_skeleton_replace_part needs a server with custom TOAST")));
	PG_RETURN_NULL();
#endif
}

PG_FUNCTION_INFO_V1(jt_test_skeleton_set_part);

/*
 * jt_test_skeleton_set_part(skeleton jsonb, partno int, rawsize int,
 *							 extsize int, valueid oid
 *							 [, value_offset int]) returns jsonb
 *
 * A copy of the toaster's pointer skeleton in which the directory entry of
 * part partno (as for jt_test_part_bytes) claims the given raw size (with
 * its varlena header), stored size and TOAST value id, and if given, the
 * offset of the part in that value (then stored on its own, not in a
 * compression unit); its compression method and the rest of the entry are
 * left as they were.
 */
Datum
jt_test_skeleton_set_part(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	int32		extsize = PG_GETARG_INT32(3);
	JtSkeletonHeader hdr;
	JtPartEntry range;
	Size		pos;
	uint32		version;
	struct varlena *result;

	version = find_part(attr, PG_GETARG_INT32(1), &hdr, &pos, NULL);
	if (extsize < 0 || extsize > VARLENA_EXTSIZE_MASK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("stored size %d is out of range", extsize)));
	result = palloc(VARSIZE_EXTERNAL(attr));
	memcpy(result, attr, VARSIZE_EXTERNAL(attr));
	jt_entry_read((char *) result + pos, version, &range);
	range.rawsize = PG_GETARG_INT32(2);
	range.extinfo = (range.extinfo & ~VARLENA_EXTSIZE_MASK) | (uint32) extsize;
	range.valueid = PG_GETARG_OID(4);
	/*
	 * written as stored: the claim may be one jt_entry_write() refuses; a
	 * part given an offset is one on its own, not in a compression unit
	 */
	if (jt_version_packs(version))
	{
		JtRefRangePacked stored;

		memcpy(&stored, (char *) result + pos, sizeof(stored));
		stored.rawsize = range.rawsize;
		stored.extinfo = range.extinfo;
		stored.valueid = range.valueid;
		if (PG_NARGS() > 5)
		{
			uint32		no_unit = 0;

			stored.offset = (uint32) PG_GETARG_INT32(5);
			if (jt_version_has_units(version))
				memcpy((char *) result + pos + offsetof(JtRefRangeUnits, unit),
					   &no_unit, sizeof(uint32));
		}
		memcpy((char *) result + pos, &stored, sizeof(stored));
	}
	else if (PG_NARGS() > 5)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a value of format version %u has no offsets", version)));
	else
	{
		JtRefRange	stored;

		memcpy(&stored, (char *) result + pos, sizeof(stored));
		stored.rawsize = range.rawsize;
		stored.extinfo = range.extinfo;
		stored.valueid = range.valueid;
		memcpy((char *) result + pos, &stored, sizeof(stored));
	}
	PG_RETURN_POINTER(result);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jt_test_skeleton_set_part needs a server with custom TOAST")));
	PG_RETURN_NULL();
#endif
}

PG_FUNCTION_INFO_V1(jt_test_skeleton_set_unit);

/*
 * jt_test_skeleton_set_unit(skeleton jsonb, partno int, unit_index int,
 *							 unit_parts int, unit_offset int) returns jsonb
 *
 * A copy of the toaster's pointer skeleton in which the directory entry of
 * part partno says it lies in a compression unit: its index in it, the
 * unit's part count and its start in the unit's raw bytes, written as
 * given (each cut to its field's bits); the rest of the entry is left as
 * it was.  Format version 6 and later.
 */
Datum
jt_test_skeleton_set_unit(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	JtSkeletonHeader hdr;
	Size		pos;
	uint32		version;
	struct varlena *result;
	JtRefRangeUnits stored;

	version = find_part(attr, PG_GETARG_INT32(1), &hdr, &pos, NULL);
	if (!jt_version_has_units(version))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a value of format version %u has no compression units",
						version)));
	result = palloc(VARSIZE_EXTERNAL(attr));
	memcpy(result, attr, VARSIZE_EXTERNAL(attr));
	memcpy(&stored, (char *) result + pos, sizeof(stored));
	stored.unit = ((((uint32) PG_GETARG_INT32(2) + 1) & 0xFF) << JT_UNIT_INDEX_SHIFT) |
		(((uint32) PG_GETARG_INT32(3) & JT_UNIT_COUNT_MASK) << JT_UNIT_COUNT_SHIFT) |
		((uint32) PG_GETARG_INT32(4) & JT_UNIT_RAW_MASK);
	memcpy((char *) result + pos, &stored, sizeof(stored));
	PG_RETURN_POINTER(result);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jt_test_skeleton_set_unit needs a server with custom TOAST")));
	PG_RETURN_NULL();
#endif
}

PG_FUNCTION_INFO_V1(jt_test_call_site_memory);

/*
 * Call fn(doc, arg) "calls" times through one call site, as the executor
 * calls a function once per row, and return the bytes then allocated in
 * the call site's memory context (where fn_extra lives).  Each call's own
 * allocations go to a context reset after it, as a per-tuple context is.
 * A function that keeps state per call site must not make this grow with
 * the number of calls.
 */
Datum
jt_test_call_site_memory(PG_FUNCTION_ARGS)
{
	Oid			fn = PG_GETARG_OID(0);
	Datum		doc = PG_GETARG_DATUM(1);
	Datum		arg = PG_GETARG_DATUM(2);
	int32		calls = PG_GETARG_INT32(3);
	MemoryContext site_cxt;
	MemoryContext call_cxt;
	MemoryContext oldcxt;
	FmgrInfo	flinfo;
	LOCAL_FCINFO(callinfo, 2);
	int64		allocated;
	Oid		   *argtypes;
	int			nargs;

	/* a function of another signature would be handed the wrong datums */
	(void) get_func_signature(fn, &argtypes, &nargs);
	if (nargs != 2 || argtypes[0] != JSONBOID ||
		argtypes[1] != get_fn_expr_argtype(fcinfo->flinfo, 2))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("function %u does not take (jsonb, the type of arg)", fn)));

	site_cxt = AllocSetContextCreate(CurrentMemoryContext, "call site",
									 ALLOCSET_DEFAULT_SIZES);
	call_cxt = AllocSetContextCreate(CurrentMemoryContext, "one call",
									 ALLOCSET_DEFAULT_SIZES);
	fmgr_info_cxt(fn, &flinfo, site_cxt);
	for (int32 i = 0; i < calls; i++)
	{
		InitFunctionCallInfoData(*callinfo, &flinfo, 2, PG_GET_COLLATION(),
								 NULL, NULL);
		callinfo->args[0].value = doc;
		callinfo->args[0].isnull = false;
		callinfo->args[1].value = arg;
		callinfo->args[1].isnull = false;
		oldcxt = MemoryContextSwitchTo(call_cxt);
		(void) FunctionCallInvoke(callinfo);
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(call_cxt);
	}
	allocated = MemoryContextMemAllocated(site_cxt, true);
	MemoryContextDelete(call_cxt);
	MemoryContextDelete(site_cxt);
	PG_RETURN_INT64(allocated);
}

PG_FUNCTION_INFO_V1(jt_test_skeleton_set_delta);

/*
 * jt_test_skeleton_set_delta(skeleton jsonb, first int, removed int)
 *		returns jsonb
 *
 * A copy of the toaster's pointer skeleton whose first delta record (see
 * src/format/delta.h) claims the given edit: the base entries kept before the
 * literal's, and those it replaces.
 */
Datum
jt_test_skeleton_set_delta(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	varatt_custom header;
	JtSkeletonHeader hdr;
	Size		pos;
	Size		pos_unused;
	uint32		version;
	Size		header_size;
	struct varlena *result;

	version = find_part(attr, 0, &hdr, &pos_unused, NULL);
	header_size = jt_version_packs(version) ?
		sizeof(JtDeltaHeaderPacked) : sizeof(JtDeltaHeader);
	VARATT_CUSTOM_GET_HEADER(header, attr);
	pos = (VARDATA_CUSTOM(attr) - (const char *) attr) + sizeof(JtSkeletonHeader) +
		hdr.tree_size;
	if (header.va_size - VARHDRSZ_CUSTOM - sizeof(JtSkeletonHeader) - hdr.tree_size <
		header_size)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the value holds no delta")));
	result = palloc(VARSIZE_EXTERNAL(attr));
	memcpy(result, attr, VARSIZE_EXTERNAL(attr));
	if (jt_version_packs(version))
	{
		JtDeltaHeaderPacked delta;

		memcpy(&delta, (char *) result + pos, sizeof(delta));
		delta.first = (uint32) PG_GETARG_INT32(1);
		delta.removed = (uint32) PG_GETARG_INT32(2);
		memcpy((char *) result + pos, &delta, sizeof(delta));
	}
	else
	{
		JtDeltaHeader delta;

		memcpy(&delta, (char *) result + pos, sizeof(delta));
		delta.first = (uint32) PG_GETARG_INT32(1);
		delta.removed = (uint32) PG_GETARG_INT32(2);
		memcpy((char *) result + pos, &delta, sizeof(delta));
	}
	PG_RETURN_POINTER(result);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jt_test_skeleton_set_delta needs a server with custom TOAST")));
	PG_RETURN_NULL();
#endif
}

PG_FUNCTION_INFO_V1(jt_test_skeleton_set_layout);

/*
 * jt_test_skeleton_set_layout(skeleton jsonb, partno int, layout int)
 *		returns jsonb
 *
 * A copy of the toaster's pointer skeleton in which part partno's layout
 * byte (format version 3, see src/format/format.h) is the given one.
 */
Datum
jt_test_skeleton_set_layout(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	int32		layout = PG_GETARG_INT32(2);
	JtSkeletonHeader hdr;
	Size		pos;
	Size		layout_pos;
	struct varlena *result;

	find_part(attr, PG_GETARG_INT32(1), &hdr, &pos, &layout_pos);
	if (layout < 0 || layout > PG_UINT8_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("layout byte %d is out of range", layout)));
	result = palloc(VARSIZE_EXTERNAL(attr));
	memcpy(result, attr, VARSIZE_EXTERNAL(attr));
	((uint8 *) result)[layout_pos] = (uint8) layout;
	PG_RETURN_POINTER(result);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jt_test_skeleton_set_layout needs a server with custom TOAST")));
	PG_RETURN_NULL();
#endif
}

PG_FUNCTION_INFO_V1(jt_test_format_version);

/*
 * jt_test_format_version(skeleton jsonb) returns int
 *
 * The format version (varatt_custom.va_version) of a value stored by the
 * toaster.
 */
Datum
jt_test_format_version(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	varatt_custom header;

	check_stored_by_toaster(attr);
	VARATT_CUSTOM_GET_HEADER(header, attr);
	PG_RETURN_INT32(header.va_version);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jt_test_format_version needs a server with custom TOAST")));
	PG_RETURN_NULL();
#endif
}

PG_FUNCTION_INFO_V1(jt_test_tree_edits);

/*
 * jt_test_tree_edits(skeleton jsonb) returns int
 *
 * For a value stored by the toaster whose tree lies outside the row, the
 * bytes of edits of that tree the row keeps (0 for none); NULL when the
 * tree lies in the row.
 */
Datum
jt_test_tree_edits(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	varatt_custom header;
	JtSkeletonInfo info;
	uint32		len;

	check_stored_by_toaster(attr);
	VARATT_CUSTOM_GET_HEADER(header, attr);
	jt_payload_read_info(VARDATA_CUSTOM(attr), &info);
	if (!info.tree_outside)
		PG_RETURN_NULL();
	if (!info.tree_edited)
		PG_RETURN_INT32(0);
	if (header.va_size < VARHDRSZ_CUSTOM + sizeof(JtSkeletonHeader) +
		sizeof(JtRefRangeUnits) + sizeof(uint32))
		elog(ERROR, "the value is shorter than its edits' length word");
	memcpy(&len, VARDATA_CUSTOM(attr) + sizeof(JtSkeletonHeader) +
		   sizeof(JtRefRangeUnits), sizeof(uint32));
	PG_RETURN_INT32((int32) len);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jt_test_tree_edits needs a server with custom TOAST")));
	PG_RETURN_NULL();
#endif
}

PG_FUNCTION_INFO_V1(jt_test_skeleton_legacy_hashes);

/*
 * jt_test_skeleton_legacy_hashes(skeleton jsonb) returns jsonb
 *
 * The toaster's pointer skeleton as format version 3 wrote it: every
 * part's content hash taken by hash_bytes(), not CRC-32C.  The value must
 * be of format version 4 (jsonb_toaster.format_version = 4 writes it) and
 * hold no deltas.  Lets tests present values
 * written before version 4 to the code that reads, updates and shares
 * them.
 */
Datum
jt_test_skeleton_legacy_hashes(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	varatt_custom header;
	JtSkeletonHeader hdr;
	Size		pos;
	struct varlena *result;

	find_part(attr, 0, &hdr, &pos, NULL);
	VARATT_CUSTOM_GET_HEADER(header, attr);
	if (header.va_version != JT_SKELETON_VERSION_CRC32C ||
		header.va_size != VARHDRSZ_CUSTOM + sizeof(JtSkeletonHeader) +
		hdr.tree_size)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the value must be of format version %d and hold no deltas",
						JT_SKELETON_VERSION_CRC32C)));

	result = palloc(VARSIZE_EXTERNAL(attr));
	memcpy(result, attr, VARSIZE_EXTERNAL(attr));
	for (uint32 p = 0; p < hdr.nparts; p++)
	{
		JtPartEntry range;
		struct varlena *raw;

		find_part(attr, (int32) p, &hdr, &pos, NULL);
		jt_entry_read((char *) result + pos, JT_SKELETON_VERSION_CRC32C, &range);
		raw = stored_part(&range, hdr.toastrelid);
		range.hash = hash_bytes((const unsigned char *) VARDATA_ANY(raw),
								(int) VARSIZE_ANY_EXHDR(raw));
		jt_entry_write((char *) result + pos, JT_SKELETON_VERSION_CRC32C, &range);
	}
	header.va_version = JT_SKELETON_VERSION_LAYOUTS;
	memcpy(VARDATA_EXTERNAL(result), &header, offsetof(varatt_custom, va_data));
	PG_RETURN_POINTER(result);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jt_test_skeleton_legacy_hashes needs a server with custom TOAST")));
	PG_RETURN_NULL();
#endif
}

PG_FUNCTION_INFO_V1(jt_test_skeleton_without_layouts);

/*
 * jt_test_skeleton_without_layouts(skeleton jsonb) returns jsonb
 *
 * The toaster's pointer skeleton as format versions 1 and 2 wrote it: a
 * root reference without layout bytes (src/format/format.h), in a pointer of
 * version 2 if it holds deltas, else 1.  Lets tests present values written
 * before version 3 to the code that reads and updates them.  The value's
 * hashes must be those of these versions (jt_test_skeleton_legacy_hashes).
 */
Datum
jt_test_skeleton_without_layouts(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	varatt_custom header;
	JtSkeletonHeader hdr;
	JtRefHeader rh;
	Size		pos_unused;
	const char *tree;
	char	   *newtree;
	uint32		root_entry;
	uint32		nranges;
	uint32		reflen;
	uint32		after;
	struct varlena *result;

	find_part(attr, 0, &hdr, &pos_unused, NULL);
	VARATT_CUSTOM_GET_HEADER(header, attr);
	if (header.va_version >= JT_SKELETON_VERSION_CRC32C)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the value's parts are hashed as format version %d hashes them",
						header.va_version),
				 errhint("Use jt_test_skeleton_legacy_hashes() first.")));
	tree = VARDATA_CUSTOM(attr) + sizeof(JtSkeletonHeader);
	memcpy(&root_entry, tree, sizeof(uint32));
	if ((root_entry & JT_JENTRY_TYPE_MASK) != JT_JENTRY_REF)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the value's root is not a reference")));
	memcpy(&rh, tree + sizeof(uint32), sizeof(rh));
	if (!(rh.nranges & JT_REF_HAS_LAYOUTS))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the value's root reference has no layout bytes")));
	nranges = rh.nranges & ~JT_REF_HAS_LAYOUTS;
	reflen = root_entry & JT_JENTRY_OFFLEN_MASK;
	/* what follows the tree: the delta area */
	after = header.va_size - VARHDRSZ_CUSTOM - sizeof(JtSkeletonHeader) -
		hdr.tree_size;

	header.va_size -= nranges;
	header.va_storedsize -= nranges;
	header.va_version = after > 0 ? 2 : 1;
	hdr.tree_size -= nranges;
	root_entry = (root_entry & ~JT_JENTRY_OFFLEN_MASK) | (reflen - nranges);
	rh.nranges = nranges;

	result = palloc(header.va_size);
	SET_VARTAG_EXTERNAL(result, VARTAG_CUSTOM);
	memcpy(VARDATA_EXTERNAL(result), &header, offsetof(varatt_custom, va_data));
	memcpy(VARDATA_CUSTOM(result), &hdr, sizeof(hdr));
	newtree = VARDATA_CUSTOM(result) + sizeof(hdr);
	memcpy(newtree, &root_entry, sizeof(uint32));
	memcpy(newtree + sizeof(uint32), &rh, sizeof(rh));
	memcpy(newtree + sizeof(uint32) + sizeof(rh),
		   tree + sizeof(uint32) + sizeof(rh), reflen - nranges - sizeof(rh));
	memcpy(newtree + hdr.tree_size, tree + hdr.tree_size + nranges, after);
	PG_RETURN_POINTER(result);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jt_test_skeleton_without_layouts needs a server with custom TOAST")));
	PG_RETURN_NULL();
#endif
}

PG_FUNCTION_INFO_V1(jt_test_skeleton_set_rawsize);

/*
 * jt_test_skeleton_set_rawsize(skeleton jsonb, rawsize int) returns jsonb
 *
 * A copy of a value stored by the toaster whose pointer claims that the
 * document is rawsize bytes long (its va_rawsize, header included).
 */
Datum
jt_test_skeleton_set_rawsize(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	int32		rawsize = PG_GETARG_INT32(1);
	varatt_custom header;
	struct varlena *result;

	check_stored_by_toaster(attr);
	VARATT_CUSTOM_GET_HEADER(header, attr);
	header.va_rawsize = rawsize;
	result = palloc(VARSIZE_EXTERNAL(attr));
	memcpy(result, attr, VARSIZE_EXTERNAL(attr));
	memcpy(VARDATA_EXTERNAL(result), &header, offsetof(varatt_custom, va_data));
	PG_RETURN_POINTER(result);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jt_test_skeleton_set_rawsize needs a server with custom TOAST")));
	PG_RETURN_NULL();
#endif
}

PG_FUNCTION_INFO_V1(jt_test_skeleton_set_tree_entry);

/*
 * jt_test_skeleton_set_tree_entry(skeleton jsonb, field text, value bigint)
 * returns jsonb
 *
 * A copy of a value stored by the toaster whose tree lies outside the row,
 * with one field of the entry naming the part that holds the tree set to
 * value: "rawsize", "extinfo", "valueid", "offset", "value_size", "header",
 * "hash" or "unit"; or, for field "version", the pointer's format version;
 * for "edited", the flag saying edits of the tree follow the entry (0 or
 * 1); for "edits_len", the length word of those edits; for "edit_offset"
 * and "edit_length", the first edit's header fields.
 */
Datum
jt_test_skeleton_set_tree_entry(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	char	   *field = text_to_cstring(PG_GETARG_TEXT_PP(1));
	int64		value = PG_GETARG_INT64(2);
	varatt_custom header;
	JtSkeletonInfo info;
	JtPartEntry entry;
	struct varlena *result;
	char	   *at;

	check_stored_by_toaster(attr);
	result = palloc(VARSIZE_EXTERNAL(attr));
	memcpy(result, attr, VARSIZE_EXTERNAL(attr));
	VARATT_CUSTOM_GET_HEADER(header, result);
	jt_payload_read_info(VARDATA_CUSTOM(result), &info);
	if (!info.tree_outside)
		elog(ERROR, "the value's tree lies in the row");
	if (strcmp(field, "version") == 0)
	{
		header.va_version = (uint8) value;
		memcpy(VARDATA_EXTERNAL(result), &header, offsetof(varatt_custom, va_data));
		PG_RETURN_POINTER(result);
	}
	if (strcmp(field, "edited") == 0)
	{
		info.tree_edited = value != 0;
		jt_payload_write_info(VARDATA_CUSTOM(result), &info);
		PG_RETURN_POINTER(result);
	}
	at = VARDATA_CUSTOM(result) + sizeof(JtSkeletonHeader);
	if (strncmp(field, "edit", 4) == 0)
	{
		uint32		v = (uint32) value;
		uint32		word = strcmp(field, "edits_len") == 0 ? 0 :
			strcmp(field, "edit_offset") == 0 ? 1 :
			strcmp(field, "edit_length") == 0 ? 2 : 3;

		if (word == 3)
			elog(ERROR, "unknown field \"%s\"", field);
		if (!info.tree_edited ||
			header.va_size < VARHDRSZ_CUSTOM + sizeof(JtSkeletonHeader) +
			sizeof(JtRefRangeUnits) + 3 * sizeof(uint32))
			elog(ERROR, "the value keeps no edits of its tree");
		memcpy(at + sizeof(JtRefRangeUnits) + word * sizeof(uint32), &v,
			   sizeof(uint32));
		PG_RETURN_POINTER(result);
	}
	jt_entry_read(at, header.va_version, &entry);
	if (strcmp(field, "rawsize") == 0)
		entry.rawsize = (int32) value;
	else if (strcmp(field, "extinfo") == 0)
		entry.extinfo = (uint32) value;
	else if (strcmp(field, "valueid") == 0)
		entry.valueid = (Oid) value;
	else if (strcmp(field, "offset") == 0)
		entry.offset = (uint32) value;
	else if (strcmp(field, "value_size") == 0)
		entry.value_size = (uint32) value;
	else if (strcmp(field, "header") == 0)
		entry.header = (uint32) value;
	else if (strcmp(field, "hash") == 0)
		entry.hash = (uint32) value;
	else if (strcmp(field, "unit") == 0)
		entry.unit = (uint32) value;
	else
		elog(ERROR, "unknown field \"%s\"", field);
	/* written as stored, whatever it says */
	memcpy(at, &entry.rawsize, sizeof(uint32));
	memcpy(at + 4, &entry.extinfo, sizeof(uint32));
	memcpy(at + 8, &entry.valueid, sizeof(uint32));
	memcpy(at + 12, &entry.offset, sizeof(uint32));
	memcpy(at + 16, &entry.value_size, sizeof(uint32));
	memcpy(at + 20, &entry.header, sizeof(uint32));
	memcpy(at + 24, &entry.hash, sizeof(uint32));
	memcpy(at + 36, &entry.unit, sizeof(uint32));
	PG_RETURN_POINTER(result);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jt_test_skeleton_set_tree_entry needs a server with custom TOAST")));
	PG_RETURN_NULL();
#endif
}

PG_FUNCTION_INFO_V1(jt_test_custom_pointer_bytes);

/*
 * jt_test_custom_pointer_bytes(value bytea) returns bytea
 *
 * The bytes of a custom TOAST pointer as the row holds it (external
 * header included), or NULL for any other datum.  The value is not
 * de-TOASTed: the argument is taken as the column gives it.
 */
Datum
jt_test_custom_pointer_bytes(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	Size		len;
	bytea	   *result;

	if (!VARATT_IS_EXTERNAL_CUSTOM(attr))
		PG_RETURN_NULL();
	len = VARSIZE_EXTERNAL(attr);
	result = palloc(len + VARHDRSZ);
	SET_VARSIZE(result, len + VARHDRSZ);
	memcpy(VARDATA(result), attr, len);
	PG_RETURN_BYTEA_P(result);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jt_test_custom_pointer_bytes needs a server with custom TOAST")));
	PG_RETURN_NULL();
#endif
}

PG_FUNCTION_INFO_V1(jt_test_bytea_from_pointer_bytes);

/*
 * jt_test_bytea_from_pointer_bytes(pointer bytea) returns bytea
 *
 * A bytea datum that is the custom TOAST pointer given by its bytes (as
 * jt_test_custom_pointer_bytes() returns them, perhaps damaged): lets
 * tests present any pointer to the appendable bytea toaster.  Only the
 * size the pointer declares is checked against the bytes given.
 */
Datum
jt_test_bytea_from_pointer_bytes(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	bytea	   *bytes = PG_GETARG_BYTEA_PP(0);
	Size		len = VARSIZE_ANY_EXHDR(bytes);
	struct varlena *result;

	if (len < VARHDRSZ_CUSTOM)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a custom TOAST pointer takes at least %d bytes",
						(int) VARHDRSZ_CUSTOM)));
	result = palloc(len);
	memcpy(result, VARDATA_ANY(bytes), len);
	if (!VARATT_IS_EXTERNAL_CUSTOM(result) ||
		VARSIZE_EXTERNAL(result) != len)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the bytes are not a custom TOAST pointer of their size")));
	PG_RETURN_POINTER(result);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jt_test_bytea_from_pointer_bytes needs a server with custom TOAST")));
	PG_RETURN_NULL();
#endif
}
