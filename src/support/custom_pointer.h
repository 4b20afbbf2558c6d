/*-------------------------------------------------------------------------
 *
 * custom_pointer.h
 *	  What both toasters do with core's custom TOAST pointers: read the
 *	  toaster id, and make one (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/support/custom_pointer.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_CUSTOM_POINTER_H
#define JSONB_TOASTER_CUSTOM_POINTER_H

#include "access/detoast.h"
#include "access/toast_custom.h"

/* The toaster id of a custom TOAST pointer. */
static inline int
custom_toaster_id(const struct varlena *attr)
{
	varatt_custom header;

	VARATT_CUSTOM_GET_HEADER(header, attr);
	return header.va_toasterid;
}

/*
 * A palloc'd custom TOAST pointer of size bytes, its header filled in; the
 * caller writes the payload at VARDATA_CUSTOM().
 */
static inline struct varlena *
jt_custom_pointer_new(Size size, int32 rawsize, uint32 storedsize,
					  uint8 toasterid, uint8 version)
{
	varatt_custom header = {0};
	struct varlena *result = palloc(size);

	Assert(size >= VARHDRSZ_CUSTOM);
	header.va_size = size;
	header.va_rawsize = rawsize;
	header.va_storedsize = storedsize;
	header.va_toasterid = toasterid;
	header.va_version = version;
	SET_VARTAG_EXTERNAL(result, VARTAG_CUSTOM);
	memcpy(VARDATA_EXTERNAL(result), &header, offsetof(varatt_custom, va_data));
	return result;
}

#endif							/* JSONB_TOASTER_CUSTOM_POINTER_H */
