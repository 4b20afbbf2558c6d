/*-------------------------------------------------------------------------
 *
 * introspect.c
 *	  Report how a jsonb value is stored, without de-TOASTing it.
 *
 * jsonb_toaster_storage(jsonb) looks only at the varlena header the
 * function receives.  A column value arrives in the form it has in the heap
 * tuple: plain (1- or 4-byte header), compressed inline, or an on-disk TOAST
 * pointer, whose fields name the TOAST relation, the value id and the raw
 * and stored sizes.  Nothing is fetched from the TOAST relation and nothing
 * is decompressed, so the function costs the same on a 10 MB document as
 * on a 10 byte one.
 *
 * Sizes follow pg_column_size(): stored_size is what the value occupies
 * where it lives (the datum for inline forms, the stored bytes in TOAST for
 * external ones) and raw_size is the size of the uncompressed datum with a
 * 4-byte header.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/admin/introspect.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/toast_compression.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "format/delta.h"
#include "format/skeleton.h"
#include "support/compat.h"

#ifdef JT_CUSTOM_TOAST
#include "format/pointer.h"
#include "toast/pointer_open.h"
#endif

PG_FUNCTION_INFO_V1(jsonb_toaster_storage);

/* Output columns of jsonb_toaster_storage(), in order. */
enum
{
	STORAGE_FORM,
	STORAGE_COMPRESSED,
	STORAGE_COMPRESSION,
	STORAGE_RAW_SIZE,
	STORAGE_STORED_SIZE,
	STORAGE_TOAST_RELID,
	STORAGE_VALUE_ID,
	STORAGE_CHUNKS,
	STORAGE_INLINE_SIZE,
	STORAGE_PARTS,
	STORAGE_NATTS
};

#ifdef JT_CUSTOM_TOAST
static int32 value_chunks(uint32 value_size);
#endif

static text *
compression_method_name(uint32 method)
{
	switch (method)
	{
		case TOAST_PGLZ_COMPRESSION_ID:
			return cstring_to_text("pglz");
		case TOAST_LZ4_COMPRESSION_ID:
			return cstring_to_text("lz4");
		default:
			/* A newer server's method: name it rather than fail. */
			return cstring_to_text(psprintf("method %u", method));
	}
}

Datum
jsonb_toaster_storage(PG_FUNCTION_ARGS)
{
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	TupleDesc	tupdesc;
	Datum		values[STORAGE_NATTS];
	bool		nulls[STORAGE_NATTS];

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	memset(nulls, true, sizeof(nulls));

	/*
	 * An indirect pointer refers to a value held in memory elsewhere (trigger
	 * and logical decoding code make them); describe the value it points to.
	 */
	while (VARATT_IS_EXTERNAL_INDIRECT(attr))
	{
		struct varatt_indirect redirect;

		VARATT_EXTERNAL_GET_POINTER(redirect, attr);
		attr = (struct varlena *) redirect.pointer;
	}

	/*
	 * The external tests must come first: an external datum's first byte also
	 * looks like a short (1-byte) header.
	 */
	if (VARATT_IS_EXTERNAL_ONDISK(attr))
	{
		struct varatt_external toast_pointer;
		int32		extsize;

		VARATT_EXTERNAL_GET_POINTER(toast_pointer, attr);
		extsize = VARATT_EXTERNAL_GET_EXTSIZE(toast_pointer);

		values[STORAGE_FORM] = CStringGetTextDatum("external");
		values[STORAGE_COMPRESSED] =
			BoolGetDatum(VARATT_EXTERNAL_IS_COMPRESSED(toast_pointer));
		if (VARATT_EXTERNAL_IS_COMPRESSED(toast_pointer))
			values[STORAGE_COMPRESSION] = PointerGetDatum(
														  compression_method_name(VARATT_EXTERNAL_GET_COMPRESS_METHOD(toast_pointer)));
		values[STORAGE_RAW_SIZE] = Int64GetDatum(toast_pointer.va_rawsize);
		values[STORAGE_STORED_SIZE] = Int64GetDatum(extsize);
		values[STORAGE_TOAST_RELID] = ObjectIdGetDatum(toast_pointer.va_toastrelid);
		values[STORAGE_VALUE_ID] = ObjectIdGetDatum(toast_pointer.va_valueid);

		/*
		 * Heap TOAST cuts the stored bytes into TOAST_MAX_CHUNK_SIZE pieces;
		 * the count follows from the stored size without reading the index.
		 */
		values[STORAGE_CHUNKS] =
			Int32GetDatum((extsize + TOAST_MAX_CHUNK_SIZE - 1) / TOAST_MAX_CHUNK_SIZE);
		nulls[STORAGE_COMPRESSION] = !VARATT_EXTERNAL_IS_COMPRESSED(toast_pointer);
		nulls[STORAGE_FORM] = nulls[STORAGE_COMPRESSED] =
			nulls[STORAGE_RAW_SIZE] = nulls[STORAGE_STORED_SIZE] =
			nulls[STORAGE_TOAST_RELID] = nulls[STORAGE_VALUE_ID] =
			nulls[STORAGE_CHUNKS] = false;
	}
#ifdef JT_CUSTOM_TOAST
	else if (VARATT_IS_EXTERNAL_CUSTOM(attr) &&
			 custom_toaster_id(attr) == JSONB_TOASTER_ID)
	{
		JtSkeleton	skel;
		JtPartEntry *ranges;
		uint32		nvalues;
		int32		chunks = 0;
		varatt_custom header;

		VARATT_CUSTOM_GET_HEADER(header, attr);
		jt_open_pointer(attr, &skel);
		/* the chunks of the TOAST values its parts lie in */
		nvalues = jt_skeleton_list_parts(&skel, &ranges);
		nvalues = jt_distinct_values(ranges, nvalues);
		for (uint32 i = 0; i < nvalues; i++)
			chunks += value_chunks(ranges[i].value_size);
		values[STORAGE_FORM] = CStringGetTextDatum("skeleton");
		values[STORAGE_RAW_SIZE] = Int64GetDatum(header.va_rawsize);
		values[STORAGE_STORED_SIZE] = Int64GetDatum(header.va_storedsize);
		values[STORAGE_TOAST_RELID] = ObjectIdGetDatum(skel.hdr.toastrelid);
		values[STORAGE_CHUNKS] = Int32GetDatum(chunks);
		values[STORAGE_PARTS] = Int32GetDatum(skel.hdr.nparts);
		nulls[STORAGE_FORM] = nulls[STORAGE_RAW_SIZE] =
			nulls[STORAGE_STORED_SIZE] = nulls[STORAGE_TOAST_RELID] =
			nulls[STORAGE_CHUNKS] = nulls[STORAGE_PARTS] = false;
	}
#endif
	else if (VARATT_IS_EXTERNAL(attr))
	{
		/*
		 * Expanded objects are not used for jsonb; anything else is a pointer
		 * kind this version does not know, so refuse rather than guess.
		 */
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot describe a jsonb value held in TOAST pointer form %u",
						(unsigned int) VARTAG_EXTERNAL(attr)),
				 errhint("This pointer form may belong to a newer version of jsonb_toaster.")));
	}
	else if (VARATT_IS_COMPRESSED(attr))
	{
		values[STORAGE_FORM] = CStringGetTextDatum("compressed");
		values[STORAGE_COMPRESSED] = BoolGetDatum(true);
		values[STORAGE_COMPRESSION] = PointerGetDatum(
													  compression_method_name(VARDATA_COMPRESSED_GET_COMPRESS_METHOD(attr)));
		values[STORAGE_RAW_SIZE] =
			Int64GetDatum((int64) VARDATA_COMPRESSED_GET_EXTSIZE(attr) + VARHDRSZ);
		values[STORAGE_STORED_SIZE] = Int64GetDatum(VARSIZE(attr));
		nulls[STORAGE_FORM] = nulls[STORAGE_COMPRESSED] =
			nulls[STORAGE_COMPRESSION] = nulls[STORAGE_RAW_SIZE] =
			nulls[STORAGE_STORED_SIZE] = false;
	}
	else
	{
		/* Plain inline value, with a 1-byte or a 4-byte header. */
		values[STORAGE_FORM] = CStringGetTextDatum("plain");
		values[STORAGE_COMPRESSED] = BoolGetDatum(false);
		values[STORAGE_RAW_SIZE] =
			Int64GetDatum((int64) VARSIZE_ANY_EXHDR(attr) + VARHDRSZ);
		values[STORAGE_STORED_SIZE] = Int64GetDatum(VARSIZE_ANY(attr));
		nulls[STORAGE_FORM] = nulls[STORAGE_COMPRESSED] =
			nulls[STORAGE_RAW_SIZE] = nulls[STORAGE_STORED_SIZE] = false;
	}

	/* what the value takes in the heap row */
	values[STORAGE_INLINE_SIZE] = Int64GetDatum(VARSIZE_ANY(attr));
	nulls[STORAGE_INLINE_SIZE] = false;

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* Output columns of jsonb_toaster_parts(), in order. */
enum
{
	PARTS_PATH,
	PARTS_RANGE,
	PARTS_KIND,
	PARTS_COUNT,
	PARTS_RAW_SIZE,
	PARTS_STORED_SIZE,
	PARTS_COMPRESSION,
	PARTS_VALUE_ID,
	PARTS_CHUNKS,
	PARTS_HASH,
	PARTS_VALUE_OFFSET,
	PARTS_STORED_OFFSET,
	PARTS_UNIT_OFFSET,
	PARTS_UNIT_PARTS,
	PARTS_NATTS
};

#ifdef JT_CUSTOM_TOAST
/* The chunks a part is read from: its own, or its compression unit's. */
static int32
part_chunks(const JtPartEntry *range)
{
	uint32		extsize = jt_entry_extsize(range);
	uint32		start = jt_entry_stored_offset(range);

	if (extsize == 0)
		return 0;
	return (start + extsize - 1) / TOAST_MAX_CHUNK_SIZE -
		start / TOAST_MAX_CHUNK_SIZE + 1;
}

/* The chunks of a TOAST value of value_size bytes. */
static int32
value_chunks(uint32 value_size)
{
	return (int32) ((value_size + TOAST_MAX_CHUNK_SIZE - 1) /
					TOAST_MAX_CHUNK_SIZE);
}

typedef struct EmitParts
{
	ReturnSetInfo *rsinfo;
	JtSkeleton *skel;
} EmitParts;

/*
 * One row of jsonb_toaster_parts(): the part range names (stored where
 * stored says: for a part kept as a delta, its base), at path (NULL: the
 * part holding an outside tree), range r (-1: none) of a value of kind.
 */
static void
emit_part(ReturnSetInfo *rsinfo, const JtPartEntry *range, JtPartEntry stored,
		  Datum pathdatum, int32 r, const char *kind)
{
	uint32		extsize = stored.extinfo & VARLENA_EXTSIZE_MASK;
	bool		compressed = jt_stored_compressed(&stored);
	Datum		values[PARTS_NATTS];
	bool		nulls[PARTS_NATTS] = {0};

	values[PARTS_PATH] = pathdatum;
	nulls[PARTS_PATH] = pathdatum == (Datum) 0;
	values[PARTS_RANGE] = Int32GetDatum(r);
	nulls[PARTS_RANGE] = r < 0;
	values[PARTS_KIND] = CStringGetTextDatum(kind);
	values[PARTS_COUNT] = Int32GetDatum(range->header & JT_CONTAINER_COUNT_MASK);
	nulls[PARTS_COUNT] = range->header == 0;
	values[PARTS_RAW_SIZE] = Int32GetDatum(range->rawsize);
	values[PARTS_STORED_SIZE] = Int32GetDatum(extsize);
	if (compressed)
		values[PARTS_COMPRESSION] =
			PointerGetDatum(compression_method_name(range->extinfo >> VARLENA_EXTSIZE_BITS));
	nulls[PARTS_COMPRESSION] = !compressed;
	values[PARTS_VALUE_ID] = ObjectIdGetDatum(range->valueid);
	values[PARTS_CHUNKS] = Int32GetDatum(part_chunks(range));
	values[PARTS_HASH] = Int64GetDatum((int64) range->hash);
	values[PARTS_VALUE_OFFSET] = Int32GetDatum((int32) range->offset);
	values[PARTS_STORED_OFFSET] =
		Int32GetDatum((int32) jt_entry_stored_offset(&stored));
	values[PARTS_UNIT_OFFSET] =
		Int32GetDatum((int32) jt_entry_unit_raw_offset(&stored));
	values[PARTS_UNIT_PARTS] =
		Int32GetDatum((int32) jt_entry_unit_count(&stored));
	nulls[PARTS_UNIT_OFFSET] = nulls[PARTS_UNIT_PARTS] =
		!jt_entry_in_unit(&stored);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * One row per part of a reference: what the part holds (entry count, raw
 * size, hash) and where it is stored (stored size, compression, value id,
 * chunks), which for a part kept as a delta is its base.
 */
static void
emit_parts(void *arg, const JtRef *ref, List *path)
{
	ReturnSetInfo *rsinfo = ((EmitParts *) arg)->rsinfo;
	JtSkeleton *skel = ((EmitParts *) arg)->skel;
	Datum	   *steps = palloc(Max(list_length(path), 1) * sizeof(Datum));
	ListCell   *lc;
	int			nsteps = 0;
	Datum		pathdatum;

	foreach(lc, path)
		steps[nsteps++] = CStringGetTextDatum((char *) lfirst(lc));
	pathdatum = PointerGetDatum(construct_array_builtin(steps, nsteps, TEXTOID));

	for (uint32 r = 0; r < ref->nranges; r++)
	{
		const JtPartEntry *range = &ref->ranges[r];

		emit_part(rsinfo, range, jt_stored_range(skel, range), pathdatum, r,
				  (ref->header & JT_CONTAINER_SCALAR) ? "scalar" :
				  (ref->header & JT_CONTAINER_OBJECT) ? "object" : "array");
	}
}
#endif							/* JT_CUSTOM_TOAST */

/*
 * jsonb_toaster_parts(jsonb) returns setof record
 *
 * The parts of a value the toaster stored, one row each: the path of the
 * value in the document, its range number if the value is split, its kind,
 * entry count, sizes, compression, TOAST value id, chunk count, content
 * hash, where in the TOAST value the part lies (its offset, which names it,
 * and where the stored bytes it is read from start) and, for a part
 * compressed with others in a unit, where it starts in the unit's raw
 * bytes and the unit's part count.  Such a part shows the unit's stored
 * size and chunks, and as its offset the unit's plus its index in it.  Any
 * other value has no parts.  Reads only the pointer.
 */
PG_FUNCTION_INFO_V1(jsonb_toaster_parts);
Datum
jsonb_toaster_parts(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
#endif

	InitMaterializedSRF(fcinfo, 0);
#ifdef JT_CUSTOM_TOAST
	if (VARATT_IS_EXTERNAL_CUSTOM(attr) &&
		custom_toaster_id(attr) == JSONB_TOASTER_ID)
	{
		JtSkeleton	skel;
		EmitParts	emit;

		jt_open_pointer(attr, &skel);
		emit.rsinfo = rsinfo;
		emit.skel = &skel;
		jt_skeleton_walk(&skel, emit_parts, &emit);
		if (skel.has_tree_entry)
			emit_part(rsinfo, &skel.tree_entry, skel.tree_entry, (Datum) 0, -1,
					  "tree");
	}
#endif
	return (Datum) 0;
}

/* Output columns of jsonb_toaster_values(), in order. */
enum
{
	VALUES_VALUE_ID,
	VALUES_SIZE,
	VALUES_CHUNKS,
	VALUES_PARTS,
	VALUES_NATTS
};

/*
 * jsonb_toaster_values(jsonb) returns setof record
 *
 * The TOAST values a value the toaster stored keeps its parts in, one row
 * each: value id, stored size, chunks, and how many of its parts lie there.
 * These are what the row version owns in the TOAST relation (its parts are
 * byte ranges of them).  Any other value has none.  Reads only the pointer.
 */
PG_FUNCTION_INFO_V1(jsonb_toaster_values);
Datum
jsonb_toaster_values(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
#endif

	InitMaterializedSRF(fcinfo, 0);
#ifdef JT_CUSTOM_TOAST
	if (VARATT_IS_EXTERNAL_CUSTOM(attr) &&
		custom_toaster_id(attr) == JSONB_TOASTER_ID)
	{
		JtSkeleton	skel;
		JtPartEntry *ranges;
		uint32		n;
		uint32		i = 0;

		jt_open_pointer(attr, &skel);
		n = jt_skeleton_list_parts(&skel, &ranges);
		qsort(ranges, n, sizeof(JtPartEntry), jt_entry_location_cmp);
		while (i < n)
		{
			uint32		j = i;
			Datum		values[VALUES_NATTS];
			bool		nulls[VALUES_NATTS] = {0};

			while (j < n && ranges[j].valueid == ranges[i].valueid)
				j++;
			/* the parts of an inline skeleton: in the pointer */
			if (!OidIsValid(ranges[i].valueid))
			{
				i = j;
				continue;
			}
			values[VALUES_VALUE_ID] = ObjectIdGetDatum(ranges[i].valueid);
			values[VALUES_SIZE] = Int32GetDatum((int32) ranges[i].value_size);
			values[VALUES_CHUNKS] = Int32GetDatum(value_chunks(ranges[i].value_size));
			values[VALUES_PARTS] = Int32GetDatum((int32) (j - i));
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values,
								 nulls);
			i = j;
		}
	}
#endif
	return (Datum) 0;
}
