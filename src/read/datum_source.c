/*-------------------------------------------------------------------------
 *
 * datum_source.c
 *	  Byte sources over a jsonb datum in any storage form.
 *
 * The navigator reads a document through a JtSource.  This file makes one
 * for each way a jsonb datum can arrive:
 *
 *	- plain: the bytes are in memory already;
 *	- compressed inline: the streaming decoder produces the prefix asked
 *	  for from the datum's compressed bytes;
 *	- external, compressed: TOAST chunks are read one at a time with the
 *	  iterator and fed to the decoder until the prefix asked for exists;
 *	- external, uncompressed: chunks are copied in until the prefix exists.
 *
 * The raw payload goes into one buffer that starts small and doubles as
 * the prefix asked for grows (the navigator only keeps pointers into it
 * until its next read), so that reading the head of a large document costs
 * a small allocation, not one of the document's size.  The compressed
 * stream read from TOAST grows the same way.  Both buffers are lent by the
 * backend's scratch (JtScratch) and given back when the source closes, for
 * the next call of any accessor: a query that reads many large documents
 * reuses memory already faulted in, however many accessors it calls.  What
 * the scratch keeps between calls is bounded in total, not per call site,
 * and freed when the transaction ends.  Sizes declared by the pointer and
 * by the compressed stream are checked against each other and against the
 * allocation limit before anything is allocated.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/datum_source.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/toast_compression.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "format/part.h"
#include "read/datum_source.h"
#include "support/compat.h"
#include "support/xact_reset.h"

#ifdef JT_CUSTOM_TOAST
#include "format/pointer.h"
#include "toast/pointer_open.h"
#endif

/* The 4-byte word that starts a compressed stream: raw size and method. */
#define STREAM_HEADER_SIZE	((uint32) sizeof(uint32))
#define STREAM_RAWSIZE_MASK	0x3FFFFFFF

/* First allocation for the raw payload and the stored stream. */
#define INITIAL_BUFFER_SIZE	8192

/*
 * What the scratch keeps between calls, all buffers together: a raw
 * document and its stored stream of up to 64 MB each.
 */
#define MAX_KEPT_TOTAL		((Size) 128 * 1024 * 1024)

/*
 * Buffers the scratch can lend at once.  A source holds two (the raw
 * prefix and the stored stream), and one source with buffers is open at a
 * time: a skeleton's part, the skeleton itself needing none.  A source
 * that finds none left allocates its own and frees them when it closes.
 */
#define SCRATCH_SLOTS		4

typedef struct JtScratchSlot
{
	char	   *data;			/* NULL until allocated */
	uint32		cap;			/* 0 when data is NULL */
	bool		lent;			/* a source holds it */
	uint64		returned;		/* when it was last given back */
} JtScratchSlot;

struct JtScratch
{
	MemoryContext mcxt;
	JtScratchSlot slots[SCRATCH_SLOTS];
	uint64		clock;			/* counts the closes of sources */
};

/* one for the backend: every call site borrows from it */
static JtScratch scratch;

static void datum_source_fill(JtSource *pub, uint32 upto);

/* "toast value N in relation", to name the value in errors; NULL if inline. */
static char *
toast_value_name(JtDatumSource *src)
{
	char	   *relname;

	if (src->form != JT_FORM_EXTERNAL && src->form != JT_FORM_EXTERNAL_COMPRESSED)
		return NULL;
	relname = get_rel_name(src->toastrelid);
	return psprintf("toast value %u in %s", src->valueid,
					relname ? relname : "(unknown relation)");
}

pg_noreturn static void
datum_source_corrupt(JtSource *pub, const char *detail)
{
	char	   *name = toast_value_name((JtDatumSource *) pub);

	if (name)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("jsonb value in %s is corrupt", name),
				 errdetail("%s.", detail)));
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("jsonb value is corrupt"),
			 errdetail("%s.", detail)));
}

static JtDecodeMethod
decode_method(JtDatumSource *src, uint32 method)
{
	switch (method)
	{
		case TOAST_PGLZ_COMPRESSION_ID:
			return JT_DECODE_PGLZ;
		case TOAST_LZ4_COMPRESSION_ID:
			return JT_DECODE_LZ4;
		default:
			datum_source_corrupt(&src->pub, "unknown compression method");
	}
}

static void
check_raw_size(JtDatumSource *src, int64 rawsize)
{
	if (rawsize < 0 || rawsize > MaxAllocSize)
		datum_source_corrupt(&src->pub, "declared raw size out of range");
}

/*
 * Free everything the scratch holds.  At the end of a transaction, and
 * when a subtransaction aborts: the sources that held buffers then were
 * left by an error, and no source outlives the call that opened it.
 */
static void
scratch_reset(void)
{
	if (scratch.mcxt)
		MemoryContextReset(scratch.mcxt);
	memset(scratch.slots, 0, sizeof(scratch.slots));
}

/* The backend's scratch buffers, set up on first use. */
JtScratch *
jt_scratch(void)
{
	if (scratch.mcxt == NULL)
	{
		scratch.mcxt = AllocSetContextCreate(TopMemoryContext,
											 "jsonb_toaster accessor buffers",
											 ALLOCSET_DEFAULT_SIZES);
		jt_reset_at_xact_end(scratch_reset);
	}
	return &scratch;
}

/*
 * Lend a buffer of the scratch: the largest it has, so that the source
 * is the least likely to enlarge it.  NULL when every slot is lent.
 */
static JtScratchSlot *
scratch_take(JtScratch *sc)
{
	JtScratchSlot *best = NULL;

	if (sc == NULL)
		return NULL;
	for (int i = 0; i < SCRATCH_SLOTS; i++)
	{
		JtScratchSlot *slot = &sc->slots[i];

		if (!slot->lent && (best == NULL || slot->cap > best->cap))
			best = slot;
	}
	if (best)
		best->lent = true;
	return best;
}

static void
scratch_give_back(JtScratchSlot *slot, char *data, uint32 cap, uint64 now)
{
	slot->data = data;
	slot->cap = data ? cap : 0;
	slot->lent = false;
	slot->returned = now;
}

/*
 * Free buffers until what the scratch keeps fits MAX_KEPT_TOTAL: those
 * given back longest ago first, the largest of those given back together.
 */
static void
scratch_trim(JtScratch *sc)
{
	for (;;)
	{
		Size		kept = 0;
		JtScratchSlot *victim = NULL;

		for (int i = 0; i < SCRATCH_SLOTS; i++)
		{
			JtScratchSlot *slot = &sc->slots[i];

			if (slot->lent || slot->data == NULL)
				continue;
			kept += slot->cap;
			if (victim == NULL || slot->returned < victim->returned ||
				(slot->returned == victim->returned && slot->cap > victim->cap))
				victim = slot;
		}
		if (kept <= MAX_KEPT_TOTAL)
			return;
		pfree(victim->data);
		victim->data = NULL;
		victim->cap = 0;
	}
}

/*
 * Allocate or enlarge *buf to at least "need" bytes (at most "limit"),
 * doubling, in the scratch's context when the buffer is the scratch's.
 */
static char *
grow(JtDatumSource *src, bool lent, char *buf, uint32 *cap, uint32 need,
	 uint32 limit)
{
	uint32		newcap;

	if (buf != NULL && need <= *cap)
		return buf;
	newcap = (uint32) Min((uint64) limit,
						  Max((uint64) need, Max((uint64) *cap * 2, INITIAL_BUFFER_SIZE)));
	newcap = Max(newcap, 1);
	if (buf == NULL)
		buf = lent ? MemoryContextAlloc(src->scratch->mcxt, newcap) :
			palloc(newcap);
	else
		buf = repalloc(buf, newcap);
	*cap = newcap;
	return buf;
}

/*
 * A first buffer for a value of size bytes: one the scratch lends (*slot
 * set), or else one of the source's own; at least the first allocation's
 * size, or the whole value if smaller.
 */
static char *
take_buffer(JtDatumSource *src, JtScratchSlot **slot, uint32 *cap,
			uint32 size)
{
	char	   *buf = NULL;

	*slot = scratch_take(src->scratch);
	if (*slot)
	{
		buf = (*slot)->data;
		*cap = (*slot)->cap;
	}
	return grow(src, *slot != NULL, buf, cap, Min(size, INITIAL_BUFFER_SIZE),
				size);
}

/* Hand a buffer back to the slot that lent it, or free it. */
static void
release_buffer(JtScratchSlot *slot, char *buf, uint32 cap, uint64 now)
{
	if (slot)
		scratch_give_back(slot, buf, cap, now);
	else if (buf)
		pfree(buf);
}

static void
allocate_buffer(JtDatumSource *src)
{
	src->buffer = take_buffer(src, &src->buffer_slot, &src->buffer_cap,
							  src->view + src->pub.size);
	src->pub.data = src->buffer + src->view;
}

/* The stored stream's buffer, for a compressed external value. */
static void
allocate_stored(JtDatumSource *src)
{
	src->stored = take_buffer(src, &src->stored_slot, &src->stored_cap,
							  src->stored_size);
}

/* Make room for "upto" bytes of raw payload (upto <= size). */
static void
reserve_buffer(JtDatumSource *src, uint32 upto)
{
	if (src->view + upto <= src->buffer_cap)
		return;
	src->buffer = grow(src, src->buffer_slot != NULL, src->buffer,
					   &src->buffer_cap, src->view + upto,
					   src->view + src->pub.size);
	src->pub.data = src->buffer + src->view;
	if (src->form == JT_FORM_COMPRESSED ||
		src->form == JT_FORM_EXTERNAL_COMPRESSED)
		jt_decoder_move_output(&src->decoder, src->buffer);
}

/* Append a chunk to the stored stream, enlarging it as needed. */
static void
append_stored(JtDatumSource *src, const char *chunk, int32 len)
{
	/* the iterator checked every chunk's size against the stored size */
	Assert(src->stored_len + len <= (uint32) src->stored_size);
	src->stored = grow(src, src->stored_slot != NULL, src->stored,
					   &src->stored_cap, src->stored_len + len,
					   src->stored_size);
	memcpy(src->stored + src->stored_len, chunk, len);
	src->stored_len += len;
}

/* True when the value is uncompressed and in memory: no source needed. */
bool
jt_datum_is_plain(Datum value)
{
	struct varlena *attr = (struct varlena *) DatumGetPointer(value);

	return !VARATT_IS_EXTERNAL(attr) && !VARATT_IS_COMPRESSED(attr);
}

/* What every source starts from. */
static void
init_source(JtDatumSource *src, JtScratch *scratch)
{
	src->scratch = scratch;
	src->buffer = NULL;
	src->buffer_cap = 0;
	src->stored = NULL;
	src->stored_len = 0;
	src->stored_cap = 0;
	src->iterating = false;
	src->buffer_slot = NULL;
	src->stored_slot = NULL;
	src->part = NULL;
}

/* A source whose bytes are filled on demand, form not known yet. */
static void
init_stream(JtDatumSource *src)
{
	src->form = JT_FORM_PLAIN;	/* until known: errors name no value */
	src->pub.data = NULL;
	src->pub.size = 0;
	src->pub.avail = 0;
	src->pub.fill = datum_source_fill;
	src->pub.corrupt = datum_source_corrupt;
	src->pub.refs_allowed = false;
	src->view = 0;
	src->in_unit = false;
	src->unit_checked = false;
}

/*
 * Read stored bytes value_offset .. of a TOAST value of value_size bytes:
 * a value on its own (value_offset 0, value_size its stored size) or a part
 * packed with others.  rawsize and extinfo are as in a TOAST pointer.
 */
static void
open_stored(JtDatumSource *src, Oid toastrelid, Oid valueid, int32 rawsize,
			uint32 extinfo, int32 value_offset, int32 value_size)
{
	src->toastrelid = toastrelid;
	src->valueid = valueid;
	src->stored_size = (int32) (extinfo & VARLENA_EXTSIZE_MASK);
	src->value_offset = value_offset;
	src->value_size = value_size;
	src->form = src->stored_size < rawsize - VARHDRSZ ?
		JT_FORM_EXTERNAL_COMPRESSED : JT_FORM_EXTERNAL;
	check_raw_size(src, (int64) rawsize - VARHDRSZ);
	src->pub.size = rawsize - VARHDRSZ;

	if (src->form == JT_FORM_EXTERNAL_COMPRESSED)
	{
		JtDecodeMethod method =
			decode_method(src, extinfo >> VARLENA_EXTSIZE_BITS);

		if (src->stored_size < (int32) STREAM_HEADER_SIZE)
			datum_source_corrupt(&src->pub, "compressed stream shorter than its header");
		allocate_buffer(src);
		allocate_stored(src);
		jt_decoder_init(&src->decoder, method, src->buffer, src->pub.size,
						src->stored + STREAM_HEADER_SIZE,
						src->stored_size - STREAM_HEADER_SIZE);
	}
	else
	{
		if (src->stored_size != (int32) src->pub.size)
			datum_source_corrupt(&src->pub, "stored size differs from raw size in an uncompressed value");
		allocate_buffer(src);
	}
}

/*
 * Read a part of a compression unit: the unit's stream is decoded from its
 * start, into a buffer whose bytes from view on are the part's.
 */
static void
open_unit_part(JtDatumSource *src, Oid toastrelid, const JtPartEntry *range)
{
	src->toastrelid = toastrelid;
	src->valueid = range->valueid;
	src->stored_size = (int32) jt_entry_extsize(range);
	src->value_offset = (int32) jt_entry_stored_offset(range);
	src->value_size = (int32) range->value_size;
	src->form = JT_FORM_EXTERNAL_COMPRESSED;
	check_raw_size(src, (int64) range->rawsize - VARHDRSZ);
	src->pub.size = range->rawsize - VARHDRSZ;
	src->view = jt_entry_unit_raw_offset(range);
	src->in_unit = true;
	src->unit_hash = range->hash;
	if ((uint64) src->view + src->pub.size > JT_UNIT_MAX_RAW)
		datum_source_corrupt(&src->pub, "a part lies outside its compression unit");
	if (src->stored_size < (int32) STREAM_HEADER_SIZE)
		datum_source_corrupt(&src->pub, "compressed stream shorter than its header");
	allocate_buffer(src);
	allocate_stored(src);
	jt_decoder_init(&src->decoder,
					decode_method(src, range->extinfo >> VARLENA_EXTSIZE_BITS),
					src->buffer, src->view + src->pub.size,
					src->stored + STREAM_HEADER_SIZE,
					src->stored_size - STREAM_HEADER_SIZE);
}

void
jt_datum_source_open(JtDatumSource *src, Datum value, JtScratch *scratch)
{
	struct varlena *attr = (struct varlena *) DatumGetPointer(value);

	init_source(src, scratch);

#ifdef JT_CUSTOM_TOAST
	/* the jsonb toaster's pointer: read its skeleton, then parts as needed */
	if (VARATT_IS_EXTERNAL_CUSTOM(attr) &&
		custom_toaster_id(attr) == JSONB_TOASTER_ID)
	{
		src->form = JT_FORM_SKELETON;
		jt_open_pointer(attr, &src->skel);
		/* field by field: a struct copy would stall on the stores just made */
		jt_memory_source(&src->pub, src->skel.tree, src->skel.hdr.tree_size,
						 true);
		return;
	}
#endif

	init_stream(src);

	/*
	 * Pointers to values in memory (indirect, expanded) are not TOAST:
	 * flatten them the ordinary way, then read what results.
	 */
	if (VARATT_IS_EXTERNAL(attr) && !VARATT_IS_EXTERNAL_ONDISK(attr))
		attr = detoast_external_attr(attr);

	if (VARATT_IS_EXTERNAL_ONDISK(attr))
	{
		struct varatt_external ptr;

		VARATT_EXTERNAL_GET_POINTER(ptr, attr);
		open_stored(src, ptr.va_toastrelid, ptr.va_valueid, ptr.va_rawsize,
					ptr.va_extinfo, 0, VARATT_EXTERNAL_GET_EXTSIZE(ptr));
	}
	else if (VARATT_IS_COMPRESSED(attr))
	{
		JtDecodeMethod method =
			decode_method(src, VARDATA_COMPRESSED_GET_COMPRESS_METHOD(attr));

		src->form = JT_FORM_COMPRESSED;
		src->pub.size = VARDATA_COMPRESSED_GET_EXTSIZE(attr);
		allocate_buffer(src);
		jt_decoder_init(&src->decoder, method, src->buffer, src->pub.size,
						(char *) attr + VARHDRSZ_COMPRESSED,
						VARSIZE(attr) - VARHDRSZ_COMPRESSED);
		jt_decoder_add_input(&src->decoder, (char *) attr + VARHDRSZ_COMPRESSED,
							 VARSIZE(attr) - VARHDRSZ_COMPRESSED);
	}
	else
	{
		src->form = JT_FORM_PLAIN;
		src->pub.data = VARDATA_ANY(attr);
		src->pub.size = VARSIZE_ANY_EXHDR(attr);
		src->pub.avail = src->pub.size;
	}
}

/*
 * Open a part of a skeleton stored in TOAST relation toastrelid, whose
 * directory entry is range: its chunks are read as they are needed.
 */
void
jt_datum_source_open_part(JtDatumSource *src, const JtPartEntry *range,
						  Oid toastrelid, JtScratch *scratch)
{
	init_source(src, scratch);
	init_stream(src);
	if ((uint64) jt_entry_stored_offset(range) + jt_entry_extsize(range) >
		range->value_size ||
		range->value_size > VARLENA_EXTSIZE_MASK ||
		jt_entry_unit_index(range) > range->offset)
		datum_source_corrupt(&src->pub, "a part lies outside its TOAST value");
	if (jt_entry_in_unit(range))
	{
		open_unit_part(src, toastrelid, range);
		return;
	}
	open_stored(src, toastrelid, range->valueid, range->rawsize,
				range->extinfo, (int32) range->offset,
				(int32) range->value_size);
}

void
jt_datum_source_close(JtDatumSource *src)
{
	bool		kept;
	uint64		now;

	if (src->part)
	{
		jt_datum_source_close(src->part);
		pfree(src->part);
		src->part = NULL;
	}
	if (src->iterating)
		jt_toast_iterator_end(&src->iter);
	src->iterating = false;

	/* hand the buffers back to the scratch, which keeps what it can */
	kept = src->buffer_slot != NULL || src->stored_slot != NULL;
	now = kept ? ++src->scratch->clock : 0;
	release_buffer(src->buffer_slot, src->buffer, src->buffer_cap, now);
	release_buffer(src->stored_slot, src->stored, src->stored_cap, now);
	src->buffer_slot = src->stored_slot = NULL;
	src->buffer = src->stored = NULL;
	if (kept)
		scratch_trim(src->scratch);
}

/* Read the next TOAST chunk; false when there are no more. */
static bool
next_chunk(JtDatumSource *src, const char **data, int32 *len)
{
	if (!src->iterating)
	{
		jt_toast_iterator_begin_window(&src->iter, src->toastrelid,
									   src->valueid, src->value_size,
									   src->value_offset, src->stored_size);
		src->iterating = true;
	}
	return jt_toast_iterator_next(&src->iter, data, len);
}

pg_noreturn static void
report_corrupt_stream(JtDatumSource *src)
{
	const char *method = src->decoder.method == JT_DECODE_PGLZ ? "pglz" : "lz4";
	char	   *name = toast_value_name(src);

	if (name)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("compressed %s data of %s is corrupt", method, name),
				 errdetail("%s.", src->decoder.error)));
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("compressed %s data is corrupt", method),
			 errdetail("%s.", src->decoder.error)));
}

/* Feed the decoder until it has produced "upto" bytes. */
static void
decode_upto(JtDatumSource *src, uint32 upto)
{
	for (;;)
	{
		JtDecodeStatus status = jt_decode(&src->decoder, src->view + upto);
		const char *chunk;
		int32		len;

		if (status == JT_DECODE_CORRUPT)
			report_corrupt_stream(src);
		if (status != JT_DECODE_NEED_INPUT)
			break;

		/* only external values run out of input: fetch another chunk */
		if (src->form != JT_FORM_EXTERNAL_COMPRESSED ||
			!next_chunk(src, &chunk, &len))
			datum_source_corrupt(&src->pub, "compressed data ends before the declared raw size");
		append_stored(src, chunk, len);
		if (src->stored_len >= STREAM_HEADER_SIZE)
		{
			uint32		header;

			memcpy(&header, src->stored, sizeof(uint32));
			if (src->in_unit)
			{
				uint32		unit_raw = header & STREAM_RAWSIZE_MASK;

				if (decode_method(src, header >> VARLENA_EXTSIZE_BITS) !=
					src->decoder.method)
					datum_source_corrupt(&src->pub, "a compression unit's method is not the one its parts name");

				/*
				 * A unit holds its part and maybe more after it: where the
				 * stream ends is the decoder's to know, for lz4's rules on
				 * how a block ends, though it stops at the part's end.
				 */
				if (unit_raw < src->view + src->pub.size ||
					unit_raw > JT_UNIT_MAX_RAW)
					datum_source_corrupt(&src->pub, "a part lies outside its compression unit");
				src->decoder.out_cap = unit_raw;
			}
			else if ((header & STREAM_RAWSIZE_MASK) != src->pub.size)
				datum_source_corrupt(&src->pub, "raw size in the compressed stream differs from the TOAST pointer's");
			jt_decoder_add_input(&src->decoder, src->stored + STREAM_HEADER_SIZE,
								 src->stored_len - STREAM_HEADER_SIZE);
		}
	}
	src->pub.avail = src->decoder.out_len > src->view ?
		src->decoder.out_len - src->view : 0;
}

static void
datum_source_fill(JtSource *pub, uint32 upto)
{
	JtDatumSource *src = (JtDatumSource *) pub;

	/* a skeleton's tree is in memory: its source never calls this */
	Assert(src->form != JT_FORM_SKELETON);
	/*
	 * A part of a unit is told apart from the unit's other parts only by
	 * where it starts in it: its bytes are decoded whole, and checked
	 * against its entry's hash, before any is read.
	 */
	if (src->in_unit && !src->unit_checked)
	{
		reserve_buffer(src, pub->size);
		decode_upto(src, pub->size);
		if (pub->avail < pub->size ||
			jt_part_hash(JT_SKELETON_VERSION_UNITS, pub->data, pub->size) !=
			src->unit_hash)
			datum_source_corrupt(pub, "a part cut from its compression unit is not the one its entry describes");
		src->unit_checked = true;
	}
	if (src->form != JT_FORM_PLAIN)
		reserve_buffer(src, upto);
	switch (src->form)
	{
		case JT_FORM_PLAIN:
		case JT_FORM_SKELETON:
			break;
		case JT_FORM_COMPRESSED:
		case JT_FORM_EXTERNAL_COMPRESSED:
			decode_upto(src, upto);
			break;
		case JT_FORM_EXTERNAL:
			while (pub->avail < upto)
			{
				const char *chunk;
				int32		len;

				if (!next_chunk(src, &chunk, &len))
					break;
				/* the iterator checked every chunk's size against the total */
				reserve_buffer(src, pub->avail + len);
				memcpy(src->buffer + pub->avail, chunk, len);
				pub->avail += len;
			}
			break;
	}
	if (pub->avail < upto)
		datum_source_corrupt(pub, "the value ends before its declared size");
}

/* The root of the document: a container, or a skeleton's reference. */
void
jt_datum_source_root(JtDatumSource *src, JtNode *root)
{
	if (src->form == JT_FORM_SKELETON)
		*root = src->skel.root;
	else
		jt_nav_root(&src->pub, root);
}

/*
 * Key i of the root object that jt_datum_source_root() described (a
 * skeleton's keys are in its tree), checked to be a string: its bytes,
 * good until the next read of the source, and their length in *len.
 */
const char *
jt_datum_source_root_key(JtDatumSource *src, const JtNode *root, uint32 i,
						 uint32 *len)
{
	JtSource   *from = src->form == JT_FORM_SKELETON ? &src->skel.src : &src->pub;
	JtNode		key;

	jt_nav_entry(from, root, i, &key);
	if (key.kind != JT_NODE_STRING)
		jt_nav_corrupt(from, "an object's key is not a string");
	*len = key.length;
	return jt_source_read(from, key.offset, key.length);
}
