/*-------------------------------------------------------------------------
 *
 * bytea_storage.c
 *	  How a bytea value is stored, for the appendable bytea toaster's users.
 *
 * bytea_appendable_storage(bytea) looks only at the datum it receives, as
 * jsonb_toaster_storage() does: plain, compressed inline, standard TOAST,
 * a value of the appendable bytea toaster (its TOAST value, runs, chunks
 * and tail), or an append still held in memory.  Nothing is fetched.
 * bytea_appendable_standard(bytea) returns the value read whole, so that
 * storing it in a column that no longer opts in gives it standard storage
 * (jsonb_toaster_convert_column() does that for bytea columns).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/admin/bytea_storage.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "support/compat.h"

#ifdef JT_CUSTOM_TOAST
#include "bytea/bytea_pointer.h"
#endif

/* Output columns of bytea_appendable_storage(), in order. */
enum
{
	BSTORAGE_FORM,
	BSTORAGE_RAW_SIZE,
	BSTORAGE_STORED_SIZE,
	BSTORAGE_TOAST_RELID,
	BSTORAGE_VALUE_ID,
	BSTORAGE_RUNS,
	BSTORAGE_CHUNKS,
	BSTORAGE_TAIL_SIZE,
	BSTORAGE_NATTS
};

#ifdef JT_CUSTOM_TOAST
/* A value of the appendable bytea toaster, stored or held in memory. */
static void
describe_ours(struct varlena *attr, Datum *values, bool *nulls)
{
	JtByteaValue stored;
	const struct varlena *base = attr;
	const char *appended = NULL;
	int64		appended_len = 0;
	varatt_custom header;

	VARATT_CUSTOM_GET_HEADER(header, attr);
	if (jt_bytea_is_append(attr))
		jt_bytea_parse_append(attr, &base, &appended, &appended_len);
	jt_bytea_parse(base, &stored);

	values[BSTORAGE_FORM] = CStringGetTextDatum(base == attr ? "appendable" :
												"append");
	values[BSTORAGE_RAW_SIZE] = Int64GetDatum(header.va_rawsize);
	values[BSTORAGE_STORED_SIZE] = Int64GetDatum(header.va_storedsize);
	values[BSTORAGE_TOAST_RELID] = ObjectIdGetDatum(stored.toastrelid);
	values[BSTORAGE_VALUE_ID] = ObjectIdGetDatum(stored.valueid);
	values[BSTORAGE_RUNS] = Int32GetDatum(stored.nruns);
	values[BSTORAGE_CHUNKS] =
		Int64GetDatum(stored.chunk_bytes / JT_BYTEA_CHUNK);
	values[BSTORAGE_TAIL_SIZE] = Int32GetDatum(stored.taillen);
	for (int i = BSTORAGE_FORM; i <= BSTORAGE_TAIL_SIZE; i++)
		nulls[i] = false;
}
#endif

PG_FUNCTION_INFO_V1(bytea_appendable_storage);
Datum
bytea_appendable_storage(PG_FUNCTION_ARGS)
{
	struct varlena *attr = (struct varlena *) PG_GETARG_POINTER(0);
	TupleDesc	tupdesc;
	Datum		values[BSTORAGE_NATTS];
	bool		nulls[BSTORAGE_NATTS];

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	memset(nulls, true, sizeof(nulls));

	while (VARATT_IS_EXTERNAL_INDIRECT(attr))
	{
		struct varatt_indirect redirect;

		VARATT_EXTERNAL_GET_POINTER(redirect, attr);
		attr = (struct varlena *) redirect.pointer;
	}

	/* external first: its first byte also looks like a short header */
	if (VARATT_IS_EXTERNAL_ONDISK(attr))
	{
		struct varatt_external ptr;

		VARATT_EXTERNAL_GET_POINTER(ptr, attr);
		values[BSTORAGE_FORM] = CStringGetTextDatum("external");
		values[BSTORAGE_RAW_SIZE] = Int64GetDatum(ptr.va_rawsize);
		values[BSTORAGE_STORED_SIZE] =
			Int64GetDatum(VARATT_EXTERNAL_GET_EXTSIZE(ptr));
		values[BSTORAGE_TOAST_RELID] = ObjectIdGetDatum(ptr.va_toastrelid);
		values[BSTORAGE_VALUE_ID] = ObjectIdGetDatum(ptr.va_valueid);
		values[BSTORAGE_CHUNKS] =
			Int64GetDatum((VARATT_EXTERNAL_GET_EXTSIZE(ptr) +
						   TOAST_MAX_CHUNK_SIZE - 1) / TOAST_MAX_CHUNK_SIZE);
		nulls[BSTORAGE_FORM] = nulls[BSTORAGE_RAW_SIZE] =
			nulls[BSTORAGE_STORED_SIZE] = nulls[BSTORAGE_TOAST_RELID] =
			nulls[BSTORAGE_VALUE_ID] = nulls[BSTORAGE_CHUNKS] = false;
	}
#ifdef JT_CUSTOM_TOAST
	else if (jt_bytea_is_pointer(attr))
		describe_ours(attr, values, nulls);
#endif
	else if (VARATT_IS_EXTERNAL(attr))
	{
		/* another toaster's pointer, or an expanded object */
		values[BSTORAGE_FORM] = CStringGetTextDatum("other external");
		values[BSTORAGE_RAW_SIZE] =
			Int64GetDatum(toast_raw_datum_size(PointerGetDatum(attr)));
		values[BSTORAGE_STORED_SIZE] =
			Int64GetDatum(toast_datum_size(PointerGetDatum(attr)));
		nulls[BSTORAGE_FORM] = nulls[BSTORAGE_RAW_SIZE] =
			nulls[BSTORAGE_STORED_SIZE] = false;
	}
	else
	{
		values[BSTORAGE_FORM] = CStringGetTextDatum(VARATT_IS_COMPRESSED(attr) ?
													"compressed" : "plain");
		values[BSTORAGE_RAW_SIZE] =
			Int64GetDatum(toast_raw_datum_size(PointerGetDatum(attr)));
		values[BSTORAGE_STORED_SIZE] = Int64GetDatum(VARSIZE_ANY(attr));
		nulls[BSTORAGE_FORM] = nulls[BSTORAGE_RAW_SIZE] =
			nulls[BSTORAGE_STORED_SIZE] = false;
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * bytea_appendable_standard(bytea) returns bytea
 *
 * The value read whole, in memory.
 */
PG_FUNCTION_INFO_V1(bytea_appendable_standard);
Datum
bytea_appendable_standard(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(0)));
}
