/*-------------------------------------------------------------------------
 *
 * part_write.c
 *	  Writing the parts of a skeleton to TOAST, compressed with the
 *	  column's method (patched servers only).
 *
 * Parts are compressed with the column's method, in that method's standard
 * format and by core's own routine (toast_compress_datum()), so that any
 * server decompresses them and they compress as well as stock compresses a
 * document.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/part_write.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/toast_compression.h"
#include "access/toast_internals.h"
#include "utils/rel.h"
#include "varatt.h"

#include "toaster/part_write.h"

/*
 * A part compressed with method cmethod, or NULL to store it as it is
 * (compression would not make it smaller).
 */
struct varlena *
jt_compress_part(const struct varlena *raw, char cmethod)
{
	Datum		compressed = toast_compress_datum(PointerGetDatum(raw), cmethod);

	return (struct varlena *) DatumGetPointer(compressed);
}

/* The compression method of a column's parts: its own, or the default. */
char
jt_column_compression(Form_pg_attribute att)
{
	return CompressionMethodIsValid(att->attcompression) ?
		att->attcompression : default_toast_compression;
}

/*
 * A packed value is written once its parts reach this many bytes, so that
 * the parts of a document of hundreds of MB need not all be held at once,
 * nor make a value larger than a varlena may be.
 */
#define JT_PACKED_VALUE_MAX		(16 * 1024 * 1024)

void
jt_part_writer_begin(JtPartWriter *w, Relation rel, char cmethod,
					 int options, bool pack, uint32 unit_size)
{
	w->rel = rel;
	w->cmethod = cmethod;
	w->options = options;
	w->pack = pack;
	initStringInfo(&w->pending);
	w->npending = 0;
	w->unit_size = pack ? unit_size : 0;
	initStringInfo(&w->unit);
	w->unit_nparts = 0;
	w->capacity = 8;
	w->parts = palloc(w->capacity * sizeof(JtPartEntry));
	w->nparts = 0;
	w->known = NULL;
	w->known_part = UINT32_MAX;
}

/*
 * known->raw, if it is added, is to be stored compressed as known says
 * when it is stored on its own (known must last until the writer is
 * finished).
 */
void
jt_part_writer_reuse(JtPartWriter *w, const JtCompressedPart *known)
{
	w->known = known;
	w->known_part = UINT32_MAX;
}

/*
 * Part number part (raw) compressed with the writer's method, as
 * jt_compress_part() gives it; *owned says whether the caller frees it.
 */
static struct varlena *
compress_alone(JtPartWriter *w, uint32 part, const struct varlena *raw,
			   bool *owned)
{
	if (part == w->known_part && w->known->cmethod == w->cmethod &&
		VARSIZE(raw) == VARSIZE(w->known->raw))
	{
		*owned = false;
		return w->known->compressed;
	}
	*owned = true;
	return jt_compress_part(raw, w->cmethod);
}

/* Write the pending parts as one TOAST value, and say where they went. */
static void
write_pending(JtPartWriter *w)
{
	struct varlena *value;
	Datum		stored;
	varatt_external ext;

	if (w->npending == 0)
		return;
	/* pending has room for a header in front of what it holds */
	value = (struct varlena *) w->pending.data;
	SET_VARSIZE(value, w->pending.len);
	stored = toast_save_datum(w->rel, PointerGetDatum(value), NULL,
							  w->options);
	VARATT_EXTERNAL_GET_POINTER(ext, DatumGetPointer(stored));
	pfree(DatumGetPointer(stored));
	for (uint32 i = w->pending_first; i < w->pending_first + w->npending; i++)
	{
		w->parts[i].valueid = ext.va_valueid;
		w->parts[i].value_size = VARATT_EXTERNAL_GET_EXTSIZE(ext);
	}
	resetStringInfo(&w->pending);
	w->npending = 0;
}

/* Room for one more part's entry. */
static JtPartEntry *
new_entry(JtPartWriter *w)
{
	JtPartEntry *entry;

	if (w->nparts == w->capacity)
	{
		w->capacity *= 2;
		w->parts = repalloc(w->parts, w->capacity * sizeof(JtPartEntry));
	}
	entry = &w->parts[w->nparts];
	memset(entry, 0, sizeof(JtPartEntry));
	return entry;
}

/*
 * Append stored bytes (extsize of them) of part number first (and of those
 * after it in a unit) to the pending value, writing what is pending first
 * if they would make it too large; their offset.
 */
static uint32
append_stored(JtPartWriter *w, uint32 first, const char *bytes,
			  uint32 extsize)
{
	uint32		offset;

	if (w->npending > 0 &&
		(!w->pack || (uint64) w->pending.len + extsize > JT_PACKED_VALUE_MAX))
		write_pending(w);
	if (w->npending == 0)
	{
		appendStringInfoSpaces(&w->pending, VARHDRSZ);
		w->pending_first = first;
	}
	offset = w->pending.len - VARHDRSZ;
	appendBinaryStringInfo(&w->pending, bytes, extsize);
	return offset;
}

/*
 * Store a part on its own (compressed, or as it is when compressed is
 * NULL) into entry, its number's.
 */
static void
store_alone(JtPartWriter *w, JtPartEntry *entry, const struct varlena *raw,
			const struct varlena *compressed)
{
	const struct varlena *stored = compressed ? compressed : raw;
	uint32		extsize = VARSIZE(stored) - VARHDRSZ;

	entry->rawsize = VARSIZE(raw);
	/* as toast_save_datum() sets va_extinfo for the part on its own */
	entry->extinfo = extsize;
	if (compressed)
		entry->extinfo |= (uint32) VARDATA_COMPRESSED_GET_COMPRESS_METHOD(compressed) <<
			VARLENA_EXTSIZE_BITS;
	entry->offset = append_stored(w, (uint32) (entry - w->parts),
								  VARDATA(stored), extsize);
	w->npending++;
}

/*
 * Store the unit gathered: its parts compressed as one stream, each
 * entry naming the stream and where the part starts in its raw bytes.  A
 * unit of one part is that part on its own; one that compression does not
 * make smaller, or not into as many bytes as it has parts (so that a
 * part's offset, the unit's plus its index, names it alone), is its parts
 * each on its own, compressed if that makes it smaller (pglz gives a whole
 * stream up when its first kB finds no match, as when it starts with
 * random bytes).
 */
static void
flush_unit(JtPartWriter *w)
{
	uint32		n = w->unit_nparts;
	struct varlena *unit;
	struct varlena *compressed = NULL;
	uint32		offset;
	uint32		raw_offset = 0;

	if (n == 0)
		return;
	w->unit_nparts = 0;
	/* the unit's raw bytes, as a datum: unit has room for a header */
	unit = (struct varlena *) w->unit.data;
	SET_VARSIZE(unit, w->unit.len);
	if (n > 1)
		compressed = jt_compress_part(unit, w->cmethod);
	if (compressed != NULL &&
		VARSIZE(compressed) - VARHDRSZ < n)
	{
		pfree(compressed);
		compressed = NULL;
	}
	if (compressed == NULL)
	{
		for (uint32 i = 0; i < n; i++)
		{
			JtPartEntry *entry = &w->parts[w->unit_first + i];
			uint32		len = entry->rawsize - VARHDRSZ;
			struct varlena *raw = palloc(entry->rawsize);
			struct varlena *alone;
			bool		owned;

			SET_VARSIZE(raw, entry->rawsize);
			memcpy(VARDATA(raw), VARDATA(unit) + raw_offset, len);
			raw_offset += len;
			alone = compress_alone(w, w->unit_first + i, raw, &owned);
			store_alone(w, entry, raw, alone);
			if (alone && owned)
				pfree(alone);
			pfree(raw);
		}
		resetStringInfo(&w->unit);
		return;
	}

	offset = append_stored(w, w->unit_first, VARDATA(compressed),
						   VARSIZE(compressed) - VARHDRSZ);
	for (uint32 i = 0; i < n; i++)
	{
		JtPartEntry *entry = &w->parts[w->unit_first + i];

		entry->extinfo = (VARSIZE(compressed) - VARHDRSZ) |
			(uint32) VARDATA_COMPRESSED_GET_COMPRESS_METHOD(compressed) <<
			VARLENA_EXTSIZE_BITS;
		entry->offset = offset + i;
		entry->unit = jt_unit_field(i, n, raw_offset);
		raw_offset += entry->rawsize - VARHDRSZ;
		w->npending++;
	}
	pfree(compressed);
	resetStringInfo(&w->unit);
}

/*
 * Add a part (a jsonb datum), compressed with the writer's method if
 * compress, and return its number.  A part that replaces another in an
 * UPDATE is compressed only if that one was: the edit was small enough to
 * leave one part, and it rarely makes content compress that did not, while
 * pglz's attempt at a part that does not compress took 8% of the backend's
 * time in an update of such parts (docs/toaster.md).
 *
 * A part's stored bytes are what a TOAST value of its own would hold:
 * compressed, its raw size and method, then the compressed stream.  With
 * compression units, consecutive parts to be compressed gather into a
 * unit of up to unit_size raw bytes, stored when it is full, when a part
 * comes that is not to be compressed, or at the end.
 */
uint32
jt_part_writer_add(JtPartWriter *w, const struct varlena *raw, bool compress)
{
	JtPartEntry *entry;
	uint32		len = VARSIZE(raw) - VARHDRSZ;

	if (w->known != NULL && raw == w->known->raw && compress)
		w->known_part = w->nparts;
	if (w->unit_size > 0 && compress && len < w->unit_size &&
		len <= JT_UNIT_MAX_RAW)
	{
		if (w->unit_nparts > 0 &&
			((uint64) w->unit.len - VARHDRSZ + len > w->unit_size ||
			 w->unit_nparts == JT_UNIT_MAX_PARTS))
			flush_unit(w);
		if (w->unit_nparts == 0)
		{
			resetStringInfo(&w->unit);
			appendStringInfoSpaces(&w->unit, VARHDRSZ);
			w->unit_first = w->nparts;
		}
		entry = new_entry(w);
		entry->rawsize = VARSIZE(raw);
		appendBinaryStringInfo(&w->unit, VARDATA(raw), len);
		w->unit_nparts++;
		return w->nparts++;
	}

	flush_unit(w);
	entry = new_entry(w);
	if (compress)
	{
		bool		owned;
		struct varlena *compressed = compress_alone(w, w->nparts, raw,
													&owned);

		store_alone(w, entry, raw, compressed);
		if (compressed && owned)
			pfree(compressed);
	}
	else
		store_alone(w, entry, raw, NULL);
	return w->nparts++;
}

/*
 * The stored bytes of the parts added so far, written or not (a unit
 * being gathered is stored first, to know them).
 */
uint64
jt_part_writer_bytes(JtPartWriter *w)
{
	uint64		bytes = 0;

	flush_unit(w);
	for (uint32 i = 0; i < w->nparts; i++)
		bytes += jt_entry_stored_share(&w->parts[i]);
	return bytes;
}

/*
 * Store the compression unit being gathered, if any: every part added has
 * its place then (jt_part_writer_placed()).  If the value not written yet
 * has no room for room more bytes, write it, so that a part of at most
 * room raw bytes added last (jt_part_writer_add_last()) finds room.
 */
void
jt_part_writer_seal(JtPartWriter *w, uint32 room)
{
	flush_unit(w);
	if (room > 0 && w->npending > 0 &&
		(uint64) w->pending.len + room > JT_PACKED_VALUE_MAX)
		write_pending(w);
}

/*
 * Where part number part lies, once sealed: as jt_part_writer_entry()
 * gives it, but for a part of the value not written yet, whose value id
 * and size are 0 (that value's are not known before it is written).
 */
void
jt_part_writer_placed(const JtPartWriter *w, uint32 part, JtPartEntry *entry)
{
	Assert(part < w->nparts && w->unit_nparts == 0);
	*entry = w->parts[part];
	if (w->npending > 0 && part >= w->pending_first &&
		part < w->pending_first + w->npending)
	{
		entry->valueid = InvalidOid;
		entry->value_size = 0;
	}
}

/*
 * Add a part, compressed if that makes it smaller, to the value not
 * written yet, after sealing: its number, or UINT32_MAX (nothing added)
 * if that value has no room for it.  What names parts of that value as
 * jt_part_writer_placed() gives them can then lie in it.
 */
uint32
jt_part_writer_add_last(JtPartWriter *w, const struct varlena *raw)
{
	struct varlena *compressed;
	uint32		extsize;
	uint32		part;

	Assert(w->pack);
	flush_unit(w);
	compressed = jt_compress_part(raw, w->cmethod);
	extsize = VARSIZE(compressed ? compressed : raw) - VARHDRSZ;
	if (w->npending > 0 &&
		(uint64) w->pending.len + extsize > JT_PACKED_VALUE_MAX)
	{
		if (compressed)
			pfree(compressed);
		return UINT32_MAX;
	}
	part = w->nparts;
	store_alone(w, new_entry(w), raw, compressed);
	w->nparts++;
	if (compressed)
		pfree(compressed);
	return part;
}

/* Write what is pending. */
void
jt_part_writer_finish(JtPartWriter *w)
{
	flush_unit(w);
	write_pending(w);
}

/*
 * Where part number part went: its raw size, extinfo, value, offset,
 * value size and unit (the rest of the entry is the caller's).
 */
const JtPartEntry *
jt_part_writer_entry(const JtPartWriter *w, uint32 part)
{
	Assert(part < w->nparts && w->npending == 0 && w->unit_nparts == 0);
	return &w->parts[part];
}
