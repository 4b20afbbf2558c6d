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

typedef struct JtDatumSource
{
	JtSource	pub;			/* the navigator's view; must be first */
	JtDatumForm form;
	char	   *buffer;			/* the raw payload, filled on demand */
	JtDecoder	decoder;

	/* external values */
	Oid			toastrelid;
	Oid			valueid;
	int32		stored_size;
	char	   *stored;			/* compressed: the stored stream read so far */
	uint32		stored_len;
	bool		iterating;
	JtToastIterator iter;
} JtDatumSource;

extern bool jt_datum_is_plain(Datum value);
extern void jt_datum_source_open(JtDatumSource *src, Datum value);
extern void jt_datum_source_close(JtDatumSource *src);

#endif							/* JSONB_TOASTER_DATUM_SOURCE_H */
