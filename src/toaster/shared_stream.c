/*-------------------------------------------------------------------------
 *
 * shared_stream.c
 *	  The parts a new value shares with the one it replaces, as logical
 *	  decoding gets them: their contents in one stream (patched servers
 *	  only).
 *
 * In a logically logged table the toaster logs, with each value it stores,
 * what decoding needs of the parts the value takes over (logical_log.c).
 * Their stored chunks, each part compressed alone, take far more WAL than
 * the same parts compressed together, as stock's whole document is.  So the
 * parts stored one by one (and those of a compression unit most of which
 * later updates replaced) go into one stream instead: a header, the values
 * the stream is laid over, and the raw content of each shared part as the
 * flattener will ask for it (or the part as stored, where it hardly
 * compressed: keeps_stored_form()), compressed (stream_compression())
 * unless it is mostly parts as stored.  Decoding lays the stream out over
 * those values, each getting as many bytes as it stores (zeros after the
 * stream's end), so that core rebuilds every value the size the pointer
 * gives it; reassembly finds the header at the start of the first value
 * (the one holding an outside tree, if streamed, since decoding lists only
 * that one), checks it and its checksum, and serves the shared parts from
 * the stream.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/shared_stream.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/toast_compression.h"
#include "access/toast_custom.h"
#include "access/toast_internals.h"
#include "lib/stringinfo.h"
#include "replication/reorderbuffer.h"
#include "utils/memutils.h"

#include "format/skeleton.h"
#include "support/crc32c.h"
#include "toast/part_fetch.h"
#include "toast/pointer_open.h"
#include "toast/toast_iterator.h"
#include "toaster/shared_stream.h"

#define JT_STREAM_MAGIC			"JTSHARE1"
#define JT_STREAM_MAGIC_LEN		8

/*
 * The stream's header; the values it is laid over follow (JtStreamValue,
 * the value holding an outside tree first), then the entries.
 */
typedef struct JtStreamHeader
{
	char		magic[JT_STREAM_MAGIC_LEN];
	pg_crc32c	crc;			/* of the rest of the stream */
	uint32		nvalues;		/* values laid over, in order */
	uint32		raw_len;		/* of the entries, a varlena */
	uint32		stored_len;		/* of them in the stream: a varlena, in
								 * TOAST's compressed form or not */
} JtStreamHeader;

/*
 * An entry: a shared part as the flattener asks for it (the entry of what
 * is stored for it), its raw content, a varlena, after it; or, for a part
 * stored alone and compressed (keeps_stored_form()), its stored bytes as
 * a varlena, shorter than the part's raw size.
 */
typedef struct JtStreamEntry
{
	Oid			valueid;
	uint32		offset;
	uint32		unit;
	uint32		extinfo;
	int32		rawsize;
	uint32		len;			/* of the content that follows, a varlena */
} JtStreamEntry;

/* The bytes of a stream before its entries: the header, then the values. */
static inline uint64
stream_head_len(uint32 nvalues)
{
	return sizeof(JtStreamHeader) + (uint64) nvalues * sizeof(JtStreamValue);
}

/* streams of more raw bytes go as chunks: records stay reasonably small */
#define JT_STREAM_MAX_RAW		(4 * 1024 * 1024)

typedef struct JtStreamItem
{
	JtStreamEntry entry;
	const char *content;		/* its content, raw or as stored */
} JtStreamItem;

/* The shared parts of a pointer being reassembled, from its stream. */
struct JtSharedStream
{
	Oid		   *valueids;		/* the values laid over, ascending */
	uint32		nvalues;
	JtStreamItem *items;		/* the entries, by key */
	uint32		nentries;
};

/* Read the stored bytes of TOAST value ext as decoding rebuilds them. */
static struct varlena *
read_stored_value(const varatt_external *ext)
{
	int32		extsize = VARATT_EXTERNAL_GET_EXTSIZE(*ext);
	struct varlena *value = palloc(extsize + VARHDRSZ);
	JtToastIterator it;
	const char *chunk;
	int32		len;
	int32		done = 0;

	jt_toast_iterator_begin(&it, ext->va_toastrelid, ext->va_valueid, extsize);
	while (jt_toast_iterator_next(&it, &chunk, &len))
	{
		if (len > extsize - done)
			elog(ERROR, "jsonb_toaster: toast value %u holds more than %d bytes",
				 ext->va_valueid, extsize);
		memcpy(VARDATA(value) + done, chunk, len);
		done += len;
	}
	jt_toast_iterator_end(&it);
	if (done != extsize)
		elog(ERROR, "jsonb_toaster: toast value %u holds %d bytes, not %d",
			 ext->va_valueid, done, extsize);
	if (VARATT_EXTERNAL_IS_COMPRESSED(*ext))
		SET_VARSIZE_COMPRESSED(value, extsize + VARHDRSZ);
	else
		SET_VARSIZE(value, extsize + VARHDRSZ);
	return value;
}

static int
valueid_cmp(const void *a, const void *b)
{
	Oid			x = *(const Oid *) a;
	Oid			y = *(const Oid *) b;

	return (x > y) - (x < y);
}

static int
stream_entry_cmp(const void *a, const void *b)
{
	const JtStreamEntry *x = (const JtStreamEntry *) a;
	const JtStreamEntry *y = (const JtStreamEntry *) b;

	if (x->valueid != y->valueid)
		return x->valueid < y->valueid ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	if (x->unit != y->unit)
		return x->unit < y->unit ? -1 : 1;
	if (x->extinfo != y->extinfo)
		return x->extinfo < y->extinfo ? -1 : 1;
	return (x->rawsize > y->rawsize) - (x->rawsize < y->rawsize);
}

/*
 * Does a shared part go into the stream as it is stored rather than as its
 * raw content?  When it is stored alone, compressed to more than seven
 * eighths of its size: what the stream's compression could still find in
 * it is not worth decompressing it and compressing it again.
 */
static inline bool
keeps_stored_form(const JtPartEntry *stored)
{
	return !jt_entry_in_unit(stored) && jt_stored_compressed(stored) &&
		(uint64) jt_entry_extsize(stored) * 8 >
		(uint64) (stored->rawsize - VARHDRSZ) * 7;
}

/*
 * Append stored, a part of value, to entries with its raw content or its
 * stored bytes; *as_stored counts the bytes of the latter.
 */
static void
append_entry(StringInfo entries, const JtPartEntry *stored,
			 struct varlena *value, Oid toastrelid, JtUnitCache *units,
			 uint64 *as_stored)
{
	JtStreamEntry e;
	struct varlena *raw;
	bool		should_free;

	memset(&e, 0, sizeof(e));
	e.valueid = stored->valueid;
	e.offset = stored->offset;
	e.unit = stored->unit;
	e.extinfo = stored->extinfo;
	e.rawsize = stored->rawsize;
	if (keeps_stored_form(stored))
	{
		const char *bytes = jt_part_stored_bytes(stored, value);
		uint64		head;		/* room for a varlena's header, aligned */

		e.len = VARHDRSZ + jt_entry_extsize(stored);
		SET_VARSIZE(&head, e.len);
		appendBinaryStringInfo(entries, (char *) &e, sizeof(e));
		appendBinaryStringInfo(entries, (char *) &head, VARHDRSZ);
		appendBinaryStringInfo(entries, bytes, e.len - VARHDRSZ);
		*as_stored += e.len;
		return;
	}
	raw = jt_part_from_value(stored, value, toastrelid, units, &should_free);
	e.len = VARSIZE_ANY(raw);
	appendBinaryStringInfo(entries, (char *) &e, sizeof(e));
	appendBinaryStringInfo(entries, (char *) raw, e.len);
	if (should_free)
		pfree(raw);
}

/*
 * How a stream's entries are compressed: with lz4 when the server has it,
 * whatever the column's method.  The stream is built at each UPDATE that
 * shares parts, and lives only in the WAL: lz4 compresses it several times
 * faster than pglz, and decoding decompresses it as core decompresses
 * any TOAST value (a server without lz4 never writes such a stream).
 */
static inline char
stream_compression(void)
{
#ifdef USE_LZ4
	return TOAST_LZ4_COMPRESSION;
#else
	return TOAST_PGLZ_COMPRESSION;
#endif
}

/*
 * Do the parts of skel in value valueid (extsize bytes stored) go into the
 * stream?  Parts stored one by one do: compressed together they take less.
 * A compression unit's parts are compressed together already, and
 * compressing them again costs about what stock's compression of the
 * document does: its value is logged as its chunks, unless most of what
 * it holds is no longer the document's (a unit whose parts later updates
 * replaced), where its parts still named take far less in the stream.
 * A value too large to read whole for a stream is logged as its chunks.
 * Adds the parts the stream would take to *nparts, their raw bytes to
 * *raw_total.
 */
static bool
value_streams(const JtPartEntry *ranges, uint32 nranges, Oid valueid,
			  uint32 extsize, uint32 *nparts, uint64 *raw_total)
{
	uint32		found = 0;
	uint64		named_raw = 0;
	bool		in_unit = false;

	/* ranges: jt_skeleton_list_parts()'s, an outside tree's among them */
	for (uint32 r = 0; r < nranges; r++)
	{
		if (ranges[r].valueid != valueid)
			continue;
		in_unit |= jt_entry_in_unit(&ranges[r]);
		named_raw += ranges[r].rawsize;
		found++;
	}
	/* a unit of JSON holds at least twice as many raw bytes as it stores */
	if ((in_unit && named_raw > (uint64) extsize * 2) ||
		extsize > JT_STREAM_MAX_RAW)
		return false;
	*nparts += found;
	*raw_total += named_raw;
	return true;
}

/*
 * Append to entries each part of skel (ranges[], as the flattener asks for
 * them, an outside tree's too) that lies in one of values[]; returns how
 * many of their bytes are parts as stored.
 */
static uint64
collect_entries(StringInfo entries, const JtSkeleton *skel,
				const JtPartEntry *ranges, uint32 nranges,
				const varatt_external *values, uint32 nvalues)
{
	uint64		as_stored = 0;
	JtUnitCache units;

	jt_unit_cache_init(&units);
	for (uint32 v = 0; v < nvalues; v++)
	{
		struct varlena *value = NULL;

		for (uint32 r = 0; r < nranges; r++)
		{
			const JtPartEntry *stored = &ranges[r];

			if (stored->valueid != values[v].va_valueid)
				continue;
			if (value == NULL)
				value = read_stored_value(&values[v]);
			append_entry(entries, stored, value, skel->hdr.toastrelid, &units,
						 &as_stored);
		}
		if (value != NULL)
			pfree(value);
	}
	jt_unit_cache_release(&units);
	return as_stored;
}

/*
 * The stream of the parts pointer takes over from those of all_values[]
 * (sorted by id: values pointer names and its store did not write) that
 * value_streams() chooses, *len bytes, palloc'd; streamed[i] says which
 * values it takes, *order the values it is to be laid over, in order
 * (*norder of them).  NULL, streamed[] all false, when a stream would not
 * pay.
 */
char *
jt_shared_stream_build(struct varlena *pointer,
					   const varatt_external *all_values, uint32 nall,
					   bool *streamed, JtStreamValue **order_out,
					   uint32 *norder, uint32 *len)
{
	JtSkeleton	skel;
	JtPartEntry *ranges;
	uint32		nranges;
	bool	   *chosen;
	varatt_external *values;
	uint32		nvalues = 0;
	uint32		nparts = 0;
	uint64		raw_total = 0;
	uint64		stored_total = 0;
	uint64		as_stored;
	StringInfoData entries;
	JtStreamValue *order = NULL;
	JtStreamHeader hdr;
	char	   *stream = NULL;
	uint32		head_len;
	uint32		stored_len;
	struct varlena *compressed = NULL;
	struct varlena *body;

	memset(streamed, 0, nall * sizeof(bool));
	jt_open_pointer(pointer, &skel);
	if (skel.hdr.inline_parts)
		return NULL;
	nranges = jt_skeleton_list_parts(&skel, &ranges);
	chosen = palloc(nall * sizeof(bool));
	values = palloc(nall * sizeof(varatt_external));
	entries.data = NULL;
	for (uint32 i = 0; i < nall; i++)
	{
		chosen[i] = value_streams(ranges, nranges, all_values[i].va_valueid,
								  VARATT_EXTERNAL_GET_EXTSIZE(all_values[i]),
								  &nparts, &raw_total);
		if (chosen[i])
		{
			values[nvalues++] = all_values[i];
			stored_total += VARATT_EXTERNAL_GET_EXTSIZE(all_values[i]);
		}
	}

	/*
	 * Parts compressed one by one gain from a stream, a single one not; a
	 * stream over the limit is not built (the parts' raw sizes are known
	 * before any is read).
	 */
	if (nparts < 2 || raw_total > JT_STREAM_MAX_RAW)
		goto done;
	head_len = stream_head_len(nvalues);

	/*
	 * The values in the order they are laid over: decoding lists only the
	 * value holding an outside tree, so that one goes first if streamed.
	 */
	order = palloc(nvalues * sizeof(JtStreamValue));
	for (uint32 i = 0; i < nvalues; i++)
	{
		order[i].valueid = values[i].va_valueid;
		order[i].extsize = VARATT_EXTERNAL_GET_EXTSIZE(values[i]);
		if (skel.has_tree_entry && i > 0 &&
			values[i].va_valueid == skel.tree_entry.valueid)
		{
			JtStreamValue tree = order[i];

			memmove(&order[1], &order[0], i * sizeof(JtStreamValue));
			order[0] = tree;
		}
	}
	if (order[0].extsize < head_len)
		goto done;

	/* each shared part as the flattener asks for it (a delta's base) */
	initStringInfo(&entries);
	appendStringInfoSpaces(&entries, VARHDRSZ);
	as_stored = collect_entries(&entries, &skel, ranges, nranges, values,
								nvalues);
	if (entries.len > JT_STREAM_MAX_RAW)
		goto done;
	SET_VARSIZE(entries.data, entries.len);

	/*
	 * The header, the ids, then the entries, compressed if that pays: not
	 * when they are mostly parts as stored, compressed already.
	 */
	if (as_stored < (uint64) entries.len / 4 * 3)
		compressed = (struct varlena *) DatumGetPointer(
			toast_compress_datum(PointerGetDatum(entries.data),
								 stream_compression()));
	body = compressed != NULL ? compressed : (struct varlena *) entries.data;
	stored_len = VARSIZE(body);
	if ((uint64) head_len + stored_len >= stored_total)
		goto done;
	stream = palloc(head_len + stored_len);
	memcpy(stream + head_len, body, stored_len);
	memcpy(hdr.magic, JT_STREAM_MAGIC, JT_STREAM_MAGIC_LEN);
	hdr.nvalues = nvalues;
	hdr.raw_len = VARSIZE(entries.data);
	hdr.stored_len = stored_len;
	memcpy(stream, &hdr, sizeof(hdr));
	memcpy(stream + sizeof(hdr), order, nvalues * sizeof(JtStreamValue));
	INIT_CRC32C(hdr.crc);
	hdr.crc = jt_comp_crc32c(hdr.crc, stream + offsetof(JtStreamHeader, nvalues),
							 head_len + stored_len - offsetof(JtStreamHeader, nvalues));
	FIN_CRC32C(hdr.crc);
	memcpy(stream, &hdr, sizeof(hdr));

	memcpy(streamed, chosen, nall * sizeof(bool));
	*order_out = order;
	*norder = nvalues;
	*len = head_len + stored_len;

done:
	if (stream == NULL && order != NULL)
		pfree(order);
	if (compressed != NULL)
		pfree(compressed);
	if (entries.data != NULL)
		pfree(entries.data);
	pfree(values);
	pfree(chosen);
	pfree(ranges);
	return stream;
}

static void
stream_corrupt(Oid valueid, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("corrupt jsonb_toaster value in logical decoding"),
			 errdetail("The shared parts logged with toast value %u: %s.",
					   valueid, detail)));
}

/* The stream's entries, raw_len bytes, from its body (stored_len bytes). */
static char *
decompress_entries(const JtStreamHeader *hdr, const char *body, Oid valueid)
{
	struct varlena *stored = palloc(hdr->stored_len);
	struct varlena *raw;

	memcpy(stored, body, hdr->stored_len);
	if (VARATT_IS_EXTENDED(stored) && !VARATT_IS_COMPRESSED(stored))
		stream_corrupt(valueid, "their body is not a datum");
	if (VARSIZE_ANY(stored) != hdr->stored_len ||
		(VARATT_IS_COMPRESSED(stored) &&
		 VARDATA_COMPRESSED_GET_EXTSIZE(stored) + VARHDRSZ != hdr->raw_len))
		stream_corrupt(valueid, "their sizes do not match");
	raw = detoast_attr(stored);
	if (VARSIZE(raw) != hdr->raw_len)
		stream_corrupt(valueid, "they do not decompress");
	return (char *) raw;
}

/*
 * The content of value pv of a stream found in a value of values[] (sorted
 * by id, contents[] as core rebuilt them): its own if listed, else, if
 * ask_core, asked of core, the size the stream gives it; NULL if there is
 * no such value.
 */
static struct varlena *
piece_content(const JtStreamValue *pv, const JtPartEntry *values,
			  struct varlena **contents, uint32 nvalues, Oid toastrelid,
			  bool ask_core, bool *should_free)
{
	JtPartEntry key;
	const JtPartEntry *found;
	varatt_external ext;

	key.valueid = pv->valueid;
	found = bsearch(&key, values, nvalues, sizeof(JtPartEntry),
					jt_entry_value_cmp);
	*should_free = false;
	if (found != NULL)
		return contents[found - values];
	if (!ask_core)
		return NULL;
	ext.va_rawsize = (int32) pv->extsize + VARHDRSZ;
	ext.va_extinfo = pv->extsize;
	ext.va_valueid = pv->valueid;
	ext.va_toastrelid = toastrelid;
	*should_free = true;
	return ReorderBufferCustomToastPart(&ext);
}

/*
 * The stream whose header starts content, the value of values[v], or
 * NULL if that is not one: a header and a checksum that match, over
 * values the transaction holds.  A document's own bytes cannot pass for a
 * stream, whatever they start with.
 */
static JtSharedStream *
stream_at(uint32 v, const JtPartEntry *values, struct varlena **contents,
		  uint32 nvalues, Oid toastrelid, bool ask_core)
{
	const char *first = VARDATA_ANY(contents[v]);
	uint32		first_len = VARSIZE_ANY_EXHDR(contents[v]);
	JtStreamHeader hdr;
	JtStreamValue *order;
	uint64		head_len;
	uint64		stream_len;
	uint64		done = 0;
	char	   *stream;
	char	   *raw;
	uint32		pos;
	pg_crc32c	crc;
	JtSharedStream *st;

	if (first_len < sizeof(hdr) ||
		memcmp(first, JT_STREAM_MAGIC, JT_STREAM_MAGIC_LEN) != 0)
		return NULL;
	memcpy(&hdr, first, sizeof(hdr));
	head_len = stream_head_len(hdr.nvalues);
	stream_len = head_len + hdr.stored_len;
	if (hdr.nvalues == 0 || head_len > first_len ||
		stream_len > MaxAllocSize || hdr.raw_len > MaxAllocSize ||
		hdr.raw_len < VARHDRSZ || hdr.stored_len < VARHDRSZ)
		return NULL;
	order = palloc(hdr.nvalues * sizeof(JtStreamValue));
	memcpy(order, first + sizeof(hdr), hdr.nvalues * sizeof(JtStreamValue));
	if (order[0].valueid != values[v].valueid || order[0].extsize != first_len)
	{
		pfree(order);
		return NULL;
	}

	/* the pieces, in order */
	stream = palloc(stream_len);
	for (uint32 i = 0; i < hdr.nvalues && done < stream_len; i++)
	{
		bool		should_free;
		struct varlena *content = piece_content(&order[i], values, contents,
												nvalues, toastrelid, ask_core,
												&should_free);
		uint32		n;

		if (content == NULL || VARSIZE_ANY_EXHDR(content) != order[i].extsize)
			break;
		n = Min(order[i].extsize, stream_len - done);
		memcpy(stream + done, VARDATA_ANY(content), n);
		done += n;
		if (should_free)
			pfree(content);
	}
	if (done == stream_len)
	{
		INIT_CRC32C(crc);
		crc = jt_comp_crc32c(crc, stream + offsetof(JtStreamHeader, nvalues),
							 stream_len - offsetof(JtStreamHeader, nvalues));
		FIN_CRC32C(crc);
	}
	if (done != stream_len || !EQ_CRC32C(crc, hdr.crc))
	{
		pfree(stream);
		pfree(order);
		return NULL;
	}

	/* ours, then: from here on, what does not fit is damage */
	raw = decompress_entries(&hdr, stream + head_len, values[v].valueid);
	pfree(stream);
	st = palloc0(sizeof(JtSharedStream));
	st->nvalues = hdr.nvalues;
	st->valueids = palloc(hdr.nvalues * sizeof(Oid));
	for (uint32 i = 0; i < hdr.nvalues; i++)
		st->valueids[i] = order[i].valueid;
	qsort(st->valueids, st->nvalues, sizeof(Oid), valueid_cmp);
	pfree(order);

	/* the entries, sorted by key */
	for (pos = VARHDRSZ; pos < hdr.raw_len; st->nentries++)
	{
		JtStreamEntry e;

		if (hdr.raw_len - pos < sizeof(e))
			stream_corrupt(values[v].valueid, "an entry is cut short");
		memcpy(&e, raw + pos, sizeof(e));
		if (e.len < VARHDRSZ || e.len > hdr.raw_len - pos - sizeof(e))
			stream_corrupt(values[v].valueid, "an entry is cut short");
		pos += sizeof(e) + e.len;
	}
	st->items = palloc(Max(st->nentries, 1) * sizeof(JtStreamItem));
	pos = VARHDRSZ;
	for (uint32 i = 0; i < st->nentries; i++)
	{
		memcpy(&st->items[i].entry, raw + pos, sizeof(JtStreamEntry));
		st->items[i].content = raw + pos + sizeof(JtStreamEntry);
		pos += sizeof(JtStreamEntry) + st->items[i].entry.len;
	}
	qsort(st->items, st->nentries, sizeof(JtStreamItem), stream_entry_cmp);
	return st;
}

/*
 * The stream laid over values of a pointer being reassembled, starting in
 * one of values[] (sorted by id, with the contents core rebuilt), or NULL
 * if the parts it shares were logged as chunks, or it shares none.  The
 * stream's other values are among values[], or, if ask_core (values[] is
 * the value holding an outside tree), asked of core.
 */
JtSharedStream *
jt_shared_stream_find(const JtPartEntry *values, struct varlena **contents,
					  uint32 nvalues, Oid toastrelid, bool ask_core)
{
	for (uint32 v = 0; v < nvalues; v++)
	{
		JtSharedStream *st = stream_at(v, values, contents, nvalues,
									   toastrelid, ask_core);

		if (st != NULL)
			return st;
	}
	return NULL;
}

/* Does the stream hold the shared parts of value valueid? */
bool
jt_shared_stream_holds(const JtSharedStream *st, Oid valueid)
{
	return bsearch(&valueid, st->valueids, st->nvalues, sizeof(Oid),
				   valueid_cmp) != NULL;
}

/*
 * How the entries of a stream (len bytes, as logged) are stored: "lz4",
 * "pglz" or "uncompressed"; NULL if the stream is too short to say or
 * names no method known.  For the record's description: nothing is
 * checked.
 */
const char *
jt_shared_stream_compression(const char *stream, uint32 len)
{
	JtStreamHeader hdr;
	uint64		head_len;
	uint64		body;			/* a varlena's compressed header, aligned */

	if (len < sizeof(hdr))
		return NULL;
	memcpy(&hdr, stream, sizeof(hdr));
	head_len = stream_head_len(hdr.nvalues);
	if (head_len + VARHDRSZ_COMPRESSED > len)
		return NULL;
	memcpy(&body, stream + head_len, VARHDRSZ_COMPRESSED);
	if (!VARATT_IS_COMPRESSED(&body))
		return "uncompressed";
	switch (VARDATA_COMPRESSED_GET_COMPRESS_METHOD(&body))
	{
		case TOAST_PGLZ_COMPRESSION_ID:
			return "pglz";
		case TOAST_LZ4_COMPRESSION_ID:
			return "lz4";
	}
	return NULL;
}

/*
 * The raw content of stored range of a value the stream holds, palloc'd
 * (decompressed, with the checks of any read of a part, where the stream
 * holds the part as stored; toastrelid names the TOAST relation in
 * errors).
 */
struct varlena *
jt_shared_stream_part(const JtSharedStream *st, const JtPartEntry *range,
					  Oid toastrelid)
{
	JtStreamItem key;
	const JtStreamItem *found;
	struct varlena *raw;

	memset(&key, 0, sizeof(key));
	key.entry.valueid = range->valueid;
	key.entry.offset = range->offset;
	key.entry.unit = range->unit;
	key.entry.extinfo = range->extinfo;
	key.entry.rawsize = range->rawsize;
	found = bsearch(&key, st->items, st->nentries, sizeof(JtStreamItem),
					stream_entry_cmp);
	if (found == NULL)
		stream_corrupt(range->valueid, "a part the pointer names is missing");
	raw = palloc(found->entry.len);
	memcpy(raw, found->content, found->entry.len);
	if (VARSIZE_ANY(raw) != found->entry.len)
		stream_corrupt(range->valueid, "a part's size does not match");
	if (found->entry.len != (uint32) range->rawsize)
	{
		/* the part as stored, compressed alone */
		struct varlena *stored = raw;

		if (VARATT_IS_EXTENDED(stored) || jt_entry_in_unit(range) ||
			!jt_stored_compressed(range) ||
			VARSIZE(stored) - VARHDRSZ != jt_entry_extsize(range))
			stream_corrupt(range->valueid, "a part's size does not match");
		raw = palloc(range->rawsize);
		jt_part_decompress(stored, range, toastrelid, raw);
		pfree(stored);
	}
	return raw;
}
