/*-------------------------------------------------------------------------
 *
 * bytea_append.c
 *	  bytea || bytea on a value of the appendable bytea toaster.
 *
 * Serves the builtin byteacat() (the || operator).  When the left operand
 * is a stored value of the toaster, or an append already made from one,
 * the result is an append held in memory: the stored pointer and the
 * bytes after it, nothing read.  The toaster's adopt() stores it by
 * writing only the new bytes; anything else that meets it reads it back
 * whole, which gives the builtin's result.  Every other call goes to the
 * builtin.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/bytea/bytea_append.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/fmgrprotos.h"
#include "utils/memutils.h"

#include "bytea/bytea_append.h"
#include "bytea/bytea_pointer.h"

Datum
jt_bytea_cat(PG_FUNCTION_ARGS)
{
	struct varlena *left = (struct varlena *) PG_GETARG_POINTER(0);
	bytea	   *right;
	const struct varlena *base = left;
	const char *appended = NULL;
	int64		appended_len = 0;
	int64		right_len;
	varatt_custom header;

	if (!jt_bytea_is_pointer(left))
		return byteacat(fcinfo);
	right = PG_GETARG_BYTEA_PP(1);
	right_len = VARSIZE_ANY_EXHDR(right);
	if (right_len == 0)
		PG_RETURN_POINTER(left);
	if (jt_bytea_is_append(left))
		jt_bytea_parse_append(left, &base, &appended, &appended_len);
	else
	{
		JtByteaValue checked;

		jt_bytea_parse(left, &checked);
	}

	/* beyond a bytea's size, the builtin raises its error */
	VARATT_CUSTOM_GET_HEADER(header, left);
	if ((int64) header.va_rawsize + right_len > MaxAllocSize ||
		(int64) VARSIZE_EXTERNAL(left) + right_len + sizeof(uint32) >
		MaxAllocSize)
		return byteacat(fcinfo);

	PG_RETURN_POINTER(jt_bytea_make_append(base, appended, appended_len,
										   VARDATA_ANY(right), right_len));
}
