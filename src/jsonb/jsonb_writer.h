/*-------------------------------------------------------------------------
 *
 * jsonb_writer.h
 *	  Write jsonb containers exactly as PostgreSQL's own writer lays them
 *	  out.
 *
 * The toaster cuts documents into pieces and glues them back together.
 * For the glued result to be byte for byte what PostgreSQL stored, every
 * container it rebuilds must follow the rules of jsonb_util.c's
 * convertJsonbArray()/convertJsonbObject(): the container starts at a
 * 4-byte boundary; its header, then one JEntry per element (per key, then
 * per value, for objects), then the data; numerics and nested containers
 * are preceded by padding to a 4-byte boundary, counted in their entry's
 * length; every JB_OFFSET_STRIDE'th entry (the first, the 33rd, ...)
 * stores the end offset of its data instead of its length.
 *
 * Alignment is relative to the start of the StringInfo, which must itself
 * correspond to a 4-byte boundary of the value (the start of the varlena,
 * or of the skeleton's tree).
 *
 * Usage: jt_writer_begin(), then for each entry in order
 * jt_writer_entry_begin(), append the entry's bytes to the buffer (a
 * nested container is written with a nested writer), jt_writer_entry_end();
 * finally jt_writer_end().
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/jsonb/jsonb_writer.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_JSONB_WRITER_H
#define JSONB_TOASTER_JSONB_WRITER_H

#include "lib/stringinfo.h"

#include "jsonb/jsonb_format.h"
#include "support/compat.h"

typedef struct JtWriter
{
	StringInfo	buf;
	int			start;			/* where the container header is */
	int			jentries;		/* where the next JEntry goes */
	uint32		nentries;		/* JEntries in the container */
	uint32		next;			/* index of the next entry */
	uint32		totallen;		/* data bytes written so far */
	uint32		entry_type;		/* of the entry being written */
	int			entry_start;	/* where its bytes (padding included) start */
} JtWriter;

/* Do values of this JEntry type start at a 4-byte boundary? */
static inline bool
jt_entry_type_is_aligned(uint32 type)
{
	return type == JT_JENTRY_NUMERIC || type == JT_JENTRY_CONTAINER ||
		type == JT_JENTRY_REF;
}

extern void jt_writer_begin(JtWriter *w, StringInfo buf, uint32 header);
extern JT_NORETURN void jt_writer_too_long(void);
extern void jt_writer_entry_begin(JtWriter *w, uint32 type);
extern void jt_writer_entry_end(JtWriter *w);
extern void jt_writer_entry(JtWriter *w, uint32 type, const char *data,
							uint32 len);
extern void jt_writer_end(JtWriter *w);
extern void jt_pad_to_int(StringInfo buf);

/* Record the JEntry of the next entry, whose len bytes are written. */
static inline void
jt_writer_record_entry(JtWriter *w, uint32 type, uint32 len)
{
	uint32		entry;

	if ((uint64) w->totallen + len > JT_JENTRY_OFFLEN_MASK)
		jt_writer_too_long();
	w->totallen += len;
	if (w->next % JT_JENTRY_OFFSET_STRIDE == 0)
		entry = type | w->totallen | JT_JENTRY_HAS_OFF;
	else
		entry = type | len;
	memcpy(w->buf->data + w->jentries + w->next * sizeof(uint32), &entry,
		   sizeof(uint32));
	w->next++;
}

/*
 * Record an entry whose bytes, alignment padding included, the caller
 * appends itself: for copying runs of entries whose padding is known to be
 * what the writer would put (see jt_entry_type_is_aligned()).  The hot
 * loop of flattening wide containers, hence inline.
 */
static inline void
jt_writer_entry_copied(JtWriter *w, uint32 type, uint32 len)
{
	Assert(w->entry_start < 0);
	if (unlikely(w->next >= w->nentries))
		elog(ERROR, "too many entries written to a jsonb container");
	jt_writer_record_entry(w, type, len);
}

#endif							/* JSONB_TOASTER_JSONB_WRITER_H */
