/*-------------------------------------------------------------------------
 *
 * datum_source.h
 *	  Byte sources over a jsonb datum in any storage form.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/datum_source.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_DATUM_SOURCE_H
#define JSONB_TOASTER_DATUM_SOURCE_H

#include "fmgr.h"

#include "decode.h"
#include "navigator.h"
#include "toast_iterator.h"

typedef enum JtDatumForm
{
	JT_FORM_PLAIN,				/* uncompressed, in memory */
	JT_FORM_COMPRESSED,			/* compressed inline */
	JT_FORM_EXTERNAL,			/* in TOAST, uncompressed */
	JT_FORM_EXTERNAL_COMPRESSED,	/* in TOAST, compressed */
} JtDatumForm;

/*
 * Buffers kept from one call to the next by a call site (in fn_extra), so
 * that repeated calls reuse memory already mapped instead of allocating
 * and faulting in a document-sized buffer each time.
 */
typedef struct JtScratch
{
	MemoryContext mcxt;
	char	   *buffer;
	uint32		buffer_cap;
	char	   *stored;
	uint32		stored_cap;
} JtScratch;

typedef struct JtDatumSource
{
	JtSource	pub;			/* the navigator's view; must be first */
	JtDatumForm form;
	char	   *buffer;			/* the raw payload, filled on demand */
	uint32		buffer_cap;		/* allocated size of buffer */
	JtDecoder	decoder;

	/* external values */
	Oid			toastrelid;
	Oid			valueid;
	int32		stored_size;
	char	   *stored;			/* compressed: the stored stream read so far */
	uint32		stored_len;
	uint32		stored_cap;
	bool		iterating;
	JtToastIterator iter;

	JtScratch  *scratch;		/* where buffers come from and go back to */
} JtDatumSource;

extern bool jt_datum_is_plain(Datum value);
extern JtScratch *jt_scratch(FunctionCallInfo fcinfo);
extern void jt_datum_source_open(JtDatumSource *src, Datum value,
								 JtScratch *scratch);
extern void jt_datum_source_close(JtDatumSource *src);

#endif							/* JSONB_TOASTER_DATUM_SOURCE_H */
