/*-------------------------------------------------------------------------
 *
 * shared_stream.h
 *	  The parts a new value shares, as one compressed stream for logical
 *	  decoding (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/shared_stream.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_SHARED_STREAM_H
#define JSONB_TOASTER_SHARED_STREAM_H

#include "format/format.h"
#include "varatt.h"

/* A TOAST value a stream is laid over, and how many bytes it stores. */
typedef struct JtStreamValue
{
	Oid			valueid;
	uint32		extsize;		/* the value's stored bytes */
} JtStreamValue;

/* the shared parts of a pointer being decoded, from their stream */
typedef struct JtSharedStream JtSharedStream;

extern char *jt_shared_stream_build(struct varlena *pointer,
									const varatt_external *all_values,
									uint32 nall, bool *streamed,
									JtStreamValue **order, uint32 *norder,
									uint32 *len);
extern JtSharedStream *jt_shared_stream_find(const JtPartEntry *values,
											 struct varlena **contents,
											 uint32 nvalues, Oid toastrelid,
											 bool ask_core);
extern bool jt_shared_stream_holds(const JtSharedStream *st, Oid valueid);
extern const char *jt_shared_stream_compression(const char *stream,
												uint32 len);
extern struct varlena *jt_shared_stream_part(const JtSharedStream *st,
											 const JtPartEntry *range,
											 Oid toastrelid);

#endif							/* JSONB_TOASTER_SHARED_STREAM_H */
