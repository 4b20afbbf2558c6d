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
 * src/introspect.c
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
#include "utils/builtins.h"

#include "compat.h"

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
	STORAGE_NATTS
};

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
	 * The external tests must come first: an external datum's first byte
	 * also looks like a short (1-byte) header.
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

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
