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
 * stream read from TOAST grows the same way.  Both buffers are kept by the
 * call site for its next call (JtScratch): a query that reads many large
 * documents reuses memory already faulted in.  Sizes declared by the
 * pointer and by the compressed stream are checked against each other and
 * against the allocation limit before anything is allocated.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/datum_source.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/toast_compression.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "compat.h"
#include "datum_source.h"
#include "toaster.h"

/* The 4-byte word that starts a compressed stream: raw size and method. */
#define STREAM_HEADER_SIZE	((uint32) sizeof(uint32))
#define STREAM_RAWSIZE_MASK	0x3FFFFFFF

/* First allocation for the raw payload and the stored stream. */
#define INITIAL_BUFFER_SIZE	8192
/* Larger scratch buffers are given back after each call. */
#define MAX_KEPT_BUFFER_SIZE	(64 * 1024 * 1024)

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

/* Get the call site's scratch buffers, creating them on first use. */
JtScratch *
jt_scratch(FunctionCallInfo fcinfo)
{
	JtScratch  *scratch;

	if (fcinfo->flinfo == NULL)
		return NULL;
	scratch = (JtScratch *) fcinfo->flinfo->fn_extra;
	if (scratch == NULL)
	{
		scratch = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(JtScratch));
		scratch->mcxt = fcinfo->flinfo->fn_mcxt;
		fcinfo->flinfo->fn_extra = scratch;
	}

	/*
	 * No source of an earlier call is open any more: a call that failed
	 * left the buffers lent, and they are free again (the scratch was kept
	 * up to date with them).
	 */
	scratch->lent = false;
	return scratch;
}

/*
 * Allocate or enlarge *buf to at least "need" bytes (at most "limit"),
 * doubling, in the call site's context when the source holds its buffers.
 */
static char *
grow(JtDatumSource *src, char *buf, uint32 *cap, uint32 need, uint32 limit)
{
	uint32		newcap;

	if (buf != NULL && need <= *cap)
		return buf;
	newcap = (uint32) Min((uint64) limit,
						  Max((uint64) need, Max((uint64) *cap * 2, INITIAL_BUFFER_SIZE)));
	newcap = Max(newcap, 1);
	if (buf == NULL)
		buf = src->borrowed ? MemoryContextAlloc(src->scratch->mcxt, newcap) :
			palloc(newcap);
	else
		buf = repalloc(buf, newcap);
	*cap = newcap;
	return buf;
}

/*
 * Record the buffers in the call site's scratch at once: if this call
 * fails, the next must not find pointers to memory repalloc() has freed.
 */
static void
sync_scratch(JtDatumSource *src)
{
	if (!src->borrowed)
		return;
	src->scratch->buffer = src->buffer;
	src->scratch->buffer_cap = src->buffer_cap;
	src->scratch->stored = src->stored;
	src->scratch->stored_cap = src->stored_cap;
}

static void
allocate_buffer(JtDatumSource *src)
{
	/*
	 * One source at a time holds a call site's buffers (another would have
	 * them freed by the first one's repalloc); one more allocates its own,
	 * in the current memory context.
	 */
	if (src->scratch && !src->scratch->lent)
	{
		src->buffer = src->scratch->buffer;
		src->buffer_cap = src->scratch->buffer_cap;
		src->stored = src->scratch->stored;
		src->stored_cap = src->scratch->stored_cap;
		src->scratch->lent = true;
		src->borrowed = true;
	}
	src->buffer = grow(src, src->buffer, &src->buffer_cap,
					   Min(src->pub.size, INITIAL_BUFFER_SIZE), src->pub.size);
	src->pub.data = src->buffer;
	sync_scratch(src);
}

/* Make room for "upto" bytes of raw payload (upto <= size). */
static void
reserve_buffer(JtDatumSource *src, uint32 upto)
{
	if (upto <= src->buffer_cap)
		return;
	src->buffer = grow(src, src->buffer, &src->buffer_cap, upto, src->pub.size);
	src->pub.data = src->buffer;
	sync_scratch(src);
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
	src->stored = grow(src, src->stored, &src->stored_cap,
					   src->stored_len + len, src->stored_size);
	sync_scratch(src);
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

void
jt_datum_source_open(JtDatumSource *src, Datum value, JtScratch *scratch)
{
	struct varlena *attr = (struct varlena *) DatumGetPointer(value);

	src->scratch = scratch;
	src->buffer = NULL;
	src->buffer_cap = 0;
	src->stored = NULL;
	src->stored_len = 0;
	src->stored_cap = 0;
	src->iterating = false;
	src->borrowed = false;
	src->part = NULL;

#ifdef JT_CUSTOM_TOAST
	/* the jsonb toaster's pointer: read its skeleton, then parts as needed */
	if (VARATT_IS_EXTERNAL_CUSTOM(attr) &&
		custom_toaster_id(attr) == JSONB_TOASTER_ID)
	{
		src->form = JT_FORM_SKELETON;
		jt_parse_pointer(attr, &src->skel);
		/* field by field: a struct copy would stall on the stores just made */
		jt_memory_source(&src->pub, src->skel.tree, src->skel.hdr.tree_size,
						 true);
		return;
	}
#endif

	src->form = JT_FORM_PLAIN;	/* until known: errors name no value */
	src->pub.data = NULL;
	src->pub.size = 0;
	src->pub.avail = 0;
	src->pub.fill = datum_source_fill;
	src->pub.corrupt = datum_source_corrupt;
	src->pub.refs_allowed = false;

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
		src->toastrelid = ptr.va_toastrelid;
		src->valueid = ptr.va_valueid;
		src->stored_size = VARATT_EXTERNAL_GET_EXTSIZE(ptr);
		src->form = VARATT_EXTERNAL_IS_COMPRESSED(ptr) ?
			JT_FORM_EXTERNAL_COMPRESSED : JT_FORM_EXTERNAL;
		check_raw_size(src, (int64) ptr.va_rawsize - VARHDRSZ);
		src->pub.size = ptr.va_rawsize - VARHDRSZ;

		if (src->form == JT_FORM_EXTERNAL_COMPRESSED)
		{
			JtDecodeMethod method =
				decode_method(src, VARATT_EXTERNAL_GET_COMPRESS_METHOD(ptr));

			if (src->stored_size < (int32) STREAM_HEADER_SIZE)
				datum_source_corrupt(&src->pub, "compressed stream shorter than its header");
			allocate_buffer(src);
			src->stored = grow(src, src->stored, &src->stored_cap,
							   Min(src->stored_size, INITIAL_BUFFER_SIZE),
							   src->stored_size);
			sync_scratch(src);
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

void
jt_datum_source_close(JtDatumSource *src)
{
	if (src->part)
	{
		jt_datum_source_close(src->part);
		pfree(src->part);
		src->part = NULL;
	}
	if (src->iterating)
		jt_toast_iterator_end(&src->iter);
	src->iterating = false;

	/* hand the buffers back to the call site, unless they are huge */
	if (src->buffer && src->buffer_cap > MAX_KEPT_BUFFER_SIZE)
	{
		pfree(src->buffer);
		src->buffer = NULL;
		src->buffer_cap = 0;
	}
	if (src->stored && src->stored_cap > MAX_KEPT_BUFFER_SIZE)
	{
		pfree(src->stored);
		src->stored = NULL;
		src->stored_cap = 0;
	}
	if (src->borrowed)
	{
		sync_scratch(src);
		src->scratch->lent = false;
		src->borrowed = false;
	}
	else
	{
		if (src->buffer)
			pfree(src->buffer);
		if (src->stored)
			pfree(src->stored);
	}
	src->buffer = src->stored = NULL;
}

/* Read the next TOAST chunk; false when there are no more. */
static bool
next_chunk(JtDatumSource *src, const char **data, int32 *len)
{
	if (!src->iterating)
	{
		jt_toast_iterator_begin(&src->iter, src->toastrelid, src->valueid,
								src->stored_size);
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
		JtDecodeStatus status = jt_decode(&src->decoder, upto);
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
			if ((header & STREAM_RAWSIZE_MASK) != src->pub.size)
				datum_source_corrupt(&src->pub, "raw size in the compressed stream differs from the TOAST pointer's");
			jt_decoder_add_input(&src->decoder, src->stored + STREAM_HEADER_SIZE,
								 src->stored_len - STREAM_HEADER_SIZE);
		}
	}
	src->pub.avail = src->decoder.out_len;
}

static void
datum_source_fill(JtSource *pub, uint32 upto)
{
	JtDatumSource *src = (JtDatumSource *) pub;

	/* a skeleton's tree is in memory: its source never calls this */
	Assert(src->form != JT_FORM_SKELETON);
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
