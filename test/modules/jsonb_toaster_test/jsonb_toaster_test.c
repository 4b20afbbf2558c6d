/*-------------------------------------------------------------------------
 *
 * jsonb_toaster_test.c
 *	  Test-only helpers for jsonb_toaster: forge TOAST pointers.
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
#include "fmgr.h"
#include "utils/builtins.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
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
