/*-------------------------------------------------------------------------
 *
 * datum_source.h
 *	  Byte sources over a jsonb datum in any storage form.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/datum_source.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_DATUM_SOURCE_H
#define JSONB_TOASTER_DATUM_SOURCE_H

#include "fmgr.h"

#include "decode/decode.h"
#include "format/skeleton.h"
#include "jsonb/navigator.h"
#include "toast/toast_iterator.h"

typedef enum JtDatumForm
{
	JT_FORM_PLAIN,				/* uncompressed, in memory */
	JT_FORM_COMPRESSED,			/* compressed inline */
	JT_FORM_EXTERNAL,			/* in TOAST, uncompressed */
	JT_FORM_EXTERNAL_COMPRESSED,	/* in TOAST, compressed */
	JT_FORM_SKELETON,			/* stored by the jsonb toaster */
} JtDatumForm;

/*
 * The buffers a backend keeps from one call of an accessor to the next
 * (datum_source.c), so that repeated calls reuse memory already mapped
 * instead of allocating and faulting in a document-sized buffer each time.
 */
typedef struct JtScratch JtScratch;

typedef struct JtDatumSource
{
	JtSource	pub;			/* the navigator's view; must be first */
	JtDatumForm form;
	JtScratch  *scratch;		/* where buffers come from and go back to */
	struct JtScratchSlot *buffer_slot;	/* set when buffer is the scratch's */
	struct JtScratchSlot *stored_slot;	/* set when stored is the scratch's */
	char	   *buffer;			/* the raw payload, filled on demand */
	uint32		buffer_cap;		/* allocated size of buffer */
	char	   *stored;			/* compressed: the stored stream read so far */
	uint32		stored_len;
	uint32		stored_cap;
	bool		iterating;		/* iter is in use */
	struct JtDatumSource *part; /* skeletons: the part being read */

	/*
	 * jt_datum_source_open() sets everything above.  What follows is set only
	 * for the forms that use it: a source is opened for every call of an
	 * accessor, and clearing the lot would cost as much as reading a short
	 * field of a skeleton.
	 */

	/* skeletons: the parsed pointer */
	JtSkeleton	skel;

	/* external values, or parts: bytes of a TOAST value */
	Oid			toastrelid;
	Oid			valueid;
	int32		stored_size;	/* of the value, or of the part */
	int32		value_offset;	/* where in the value they start */
	int32		value_size;		/* bytes of the whole value */
	uint32		view;			/* a part of a compression unit: where it
								 * starts in the unit's raw bytes, which the
								 * buffer holds from the first; else 0 */
	bool		in_unit;		/* a part of a compression unit */
	bool		unit_checked;	/* its bytes hash as its entry says */
	uint32		unit_hash;		/* what its entry says */

	JtDecoder	decoder;
	JtToastIterator iter;
} JtDatumSource;

extern bool jt_datum_is_plain(Datum value);
extern JtScratch *jt_scratch(void);
extern void jt_datum_source_open(JtDatumSource *src, Datum value,
								 JtScratch *scratch);
extern void jt_datum_source_open_part(JtDatumSource *src,
									  const JtPartEntry *range,
									  Oid toastrelid, JtScratch *scratch);
extern void jt_datum_source_close(JtDatumSource *src);
extern void jt_datum_source_root(JtDatumSource *src, JtNode *root);
extern const char *jt_datum_source_root_key(JtDatumSource *src,
											const JtNode *root, uint32 i,
											uint32 *len);

#endif							/* JSONB_TOASTER_DATUM_SOURCE_H */
