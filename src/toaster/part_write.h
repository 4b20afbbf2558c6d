/*-------------------------------------------------------------------------
 *
 * part_write.h
 *	  Compression of the parts the toaster writes (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/part_write.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_PART_WRITE_H
#define JSONB_TOASTER_PART_WRITE_H

#include "access/htup_details.h"
#include "catalog/pg_attribute.h"
#include "utils/relcache.h"
#include "lib/stringinfo.h"
#include "varatt.h"

#include "format/format.h"

/*
 * A part compressed ahead of the writer, to judge whether its document fits
 * the row: compression is deterministic, so the writer stores these bytes
 * rather than compressing the part again.
 */
typedef struct JtCompressedPart
{
	const struct varlena *raw;	/* the part, or NULL for none */
	char		cmethod;		/* compressed with this method */
	struct varlena *compressed; /* NULL: compression does not make it
								 * smaller */
} JtCompressedPart;

/*
 * Writes the parts one statement stores for one value.  Parts are added
 * one by one; jt_part_writer_finish() writes them, packed into one TOAST
 * value (or a few, for a value of hundreds of MB) if the writer packs, and
 * jt_part_writer_entry() then says where each went.
 */
typedef struct JtPartWriter
{
	Relation	rel;
	char		cmethod;
	int			options;
	bool		pack;
	StringInfoData pending;		/* stored bytes of the parts not written */
	uint32		npending;
	uint32		pending_first;	/* the first of them; they follow it */
	uint32		unit_size;		/* compression units up to this raw size, or
								 * 0 for none */
	StringInfoData unit;		/* raw bytes of the unit being gathered */
	uint32		unit_first;		/* its first part */
	uint32		unit_nparts;
	JtPartEntry *parts;			/* where each part added went, or goes */
	uint32		nparts;
	uint32		capacity;
	const JtCompressedPart *known;	/* a part compressed already, or NULL */
	uint32		known_part;		/* its number once added, or UINT32_MAX */
} JtPartWriter;

extern struct varlena *jt_compress_part(const struct varlena *raw,
										char cmethod);
extern char jt_column_compression(Form_pg_attribute att);
extern void jt_part_writer_begin(JtPartWriter *w, Relation rel, char cmethod,
								 int options, bool pack, uint32 unit_size);
extern void jt_part_writer_reuse(JtPartWriter *w,
								 const JtCompressedPart *known);
extern uint32 jt_part_writer_add(JtPartWriter *w, const struct varlena *raw,
								 bool compress);
extern uint64 jt_part_writer_bytes(JtPartWriter *w);
extern void jt_part_writer_seal(JtPartWriter *w, uint32 room);
extern void jt_part_writer_placed(const JtPartWriter *w, uint32 part,
								  JtPartEntry *entry);
extern uint32 jt_part_writer_add_last(JtPartWriter *w,
									  const struct varlena *raw);
extern void jt_part_writer_finish(JtPartWriter *w);
extern const JtPartEntry *jt_part_writer_entry(const JtPartWriter *w,
											   uint32 part);

#endif							/* JSONB_TOASTER_PART_WRITE_H */
