/*-------------------------------------------------------------------------
 *
 * logical_log.c
 *	  What logical decoding needs of the parts a new value shares with
 *	  older row versions, logged with the value (patched servers only).
 *
 * Logical decoding cannot read TOAST relations: core's reorder buffer
 * rebuilds a stored value from the chunks the decoded transaction inserted
 * into the TOAST relation since the last change of a row, and for a custom
 * pointer rebuilds so each TOAST value its parts lie in (get_parts), then
 * asks the toaster to make the document of them.  A value that takes over
 * parts of the row version it replaces names TOAST values that an older
 * transaction wrote, whose chunks decoding never sees.  So in a logically
 * logged table the toaster logs those values' chunks along with the new
 * value, in records of its own WAL resource manager; decoding such a
 * record queues its chunks as inserts into the TOAST relation, where the
 * chunks of the row's new parts are, right before the change of the row
 * that names them.  The table keeps one copy of each part: only the WAL
 * carries the shared ones again, and only when wal_level is logical.  The
 * chunks logged are the stored ones, compressed as they are: nothing is
 * compressed again.
 *
 * The records change nothing on disk, and redo does nothing.  Replaying
 * them needs the resource manager, so a standby and a server recovering
 * from a crash must preload the library, as they must to read the values.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/logical_log.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heaptoast.h"
#include "access/toast_compression.h"
#include "access/toast_custom.h"
#include "access/toast_internals.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "replication/decode.h"
#include "replication/logical.h"
#include "replication/reorderbuffer.h"
#include "replication/snapbuild.h"
#include "storage/relfilelocator.h"
#include "utils/memutils.h"
#include "utils/rel.h"


#include "format/delta.h"
#include "format/pointer.h"
#include "format/skeleton.h"
#include "toast/part_fetch.h"
#include "toast/pointer_open.h"
#include "toast/toast_iterator.h"
#include "toaster/logical_log.h"
#include "toaster/sharing.h"

/*
 * A run of chunks of one TOAST value, from chunk number first_seq on: len
 * bytes of chunk data follow, each chunk but the value's last
 * TOAST_MAX_CHUNK_SIZE bytes long.
 */
#define XLOG_JT_VALUE_CHUNKS	0x10

typedef struct xl_jt_value_chunks
{
	RelFileLocator toast_locator;	/* the TOAST relation's storage */
	Oid			valueid;
	int32		first_seq;
	int32		len;
	/* chunk data follows */
} xl_jt_value_chunks;

/* chunks per record: the records stay small whatever the value's size */
#define JT_LOG_CHUNKS_PER_RECORD	32

/*
 * The parts a value shares, as one stream: their raw contents compressed
 * together, which takes far less WAL than their stored chunks, each part
 * compressed alone.  The record names the shared values with their stored
 * sizes; decoding lays the stream out over them, each value getting as
 * many bytes of it as it stores (zeros after the stream's end), so that
 * core finds each value the size the pointer gives it, and reassembly
 * finds the stream by its header at the start of the first value and
 * takes the shared parts from it.
 */
#define XLOG_JT_SHARED_STREAM	0x20

typedef struct xl_jt_shared_stream
{
	RelFileLocator toast_locator;
	uint32		nvalues;
	uint32		stream_len;
	/* nvalues JtStreamValue, then the stream */
} xl_jt_shared_stream;

typedef struct JtStreamValue
{
	Oid			valueid;
	uint32		extsize;		/* the value's stored bytes */
} JtStreamValue;

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
 * is stored for it), its raw content, a varlena, after it.
 */
typedef struct JtStreamEntry
{
	Oid			valueid;
	uint32		offset;
	uint32		unit;
	uint32		extinfo;
	int32		rawsize;
	uint32		len;			/* of the raw content, a varlena */
} JtStreamEntry;

/* streams of more raw bytes go as chunks: records stay reasonably small */
#define JT_STREAM_MAX_RAW		(4 * 1024 * 1024)

typedef struct JtStreamItem
{
	JtStreamEntry entry;
	const char *content;		/* its raw content */
} JtStreamItem;

/* The shared parts of a pointer being reassembled, from its stream. */
struct JtSharedStream
{
	Oid		   *valueids;		/* the values laid over, ascending */
	uint32		nvalues;
	JtStreamItem *items;		/* the entries, by key */
	uint32		nentries;
};

static void jt_rmgr_redo(XLogReaderState *record);
static void jt_rmgr_desc(StringInfo buf, XLogReaderState *record);
static const char *jt_rmgr_identify(uint8 info);
static void jt_rmgr_decode(LogicalDecodingContext *ctx,
						   XLogRecordBuffer *buf);

static const RmgrData jt_rmgr = {
	.rm_name = JT_RMGR_NAME,
	.rm_redo = jt_rmgr_redo,
	.rm_desc = jt_rmgr_desc,
	.rm_identify = jt_rmgr_identify,
	.rm_decode = jt_rmgr_decode,
};

void
jt_logical_log_init(void)
{
	if (process_shared_preload_libraries_in_progress)
		RegisterCustomRmgr(JT_RMGR_ID, &jt_rmgr);
}

static void
log_chunks(const RelFileLocator *locator, Oid valueid, int32 first_seq,
		   const StringInfo data)
{
	xl_jt_value_chunks xlrec;

	xlrec.toast_locator = *locator;
	xlrec.valueid = valueid;
	xlrec.first_seq = first_seq;
	xlrec.len = data->len;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterData(data->data, data->len);
	/* as heap records: decoding filters both by the same origin */
	XLogSetRecordFlags(XLOG_INCLUDE_ORIGIN);
	(void) XLogInsert(JT_RMGR_ID, XLOG_JT_VALUE_CHUNKS);
}

/*
 * Log the chunks of values[] (on-disk pointers to TOAST values of rel's
 * TOAST relation, each named once).
 */
static void
log_values(Relation rel, const varatt_external *values, uint32 nvalues)
{
	Relation	toastrel;
	RelFileLocator locator;
	StringInfoData data;

	if (nvalues == 0)
		return;
	toastrel = table_open(rel->rd_rel->reltoastrelid, AccessShareLock);
	locator = toastrel->rd_locator;
	table_close(toastrel, NoLock);

	initStringInfo(&data);
	for (uint32 i = 0; i < nvalues; i++)
	{
		JtToastIterator it;
		const char *chunk;
		int32		len;
		int32		seq = 0;
		int32		first_seq = 0;

		Assert(values[i].va_toastrelid == rel->rd_rel->reltoastrelid);
		jt_toast_iterator_begin(&it, values[i].va_toastrelid,
								values[i].va_valueid,
								VARATT_EXTERNAL_GET_EXTSIZE(values[i]));
		resetStringInfo(&data);
		while (jt_toast_iterator_next(&it, &chunk, &len))
		{
			appendBinaryStringInfo(&data, chunk, len);
			if (++seq - first_seq == JT_LOG_CHUNKS_PER_RECORD)
			{
				log_chunks(&locator, values[i].va_valueid, first_seq, &data);
				resetStringInfo(&data);
				first_seq = seq;
			}
		}
		jt_toast_iterator_end(&it);
		if (data.len > 0)
			log_chunks(&locator, values[i].va_valueid, first_seq, &data);
	}
	pfree(data.data);
}

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

/* Append stored, a part of value, to entries with its raw content. */
static void
append_entry(StringInfo entries, const JtPartEntry *stored,
			 struct varlena *value, Oid toastrelid, JtUnitCache *units)
{
	JtStreamEntry e;
	struct varlena *raw;
	bool		should_free;

	raw = jt_part_from_value(stored, value, toastrelid, units, &should_free);
	memset(&e, 0, sizeof(e));
	e.valueid = stored->valueid;
	e.offset = stored->offset;
	e.unit = stored->unit;
	e.extinfo = stored->extinfo;
	e.rawsize = stored->rawsize;
	e.len = VARSIZE_ANY(raw);
	appendBinaryStringInfo(entries, (char *) &e, sizeof(e));
	appendBinaryStringInfo(entries, (char *) raw, e.len);
	if (should_free)
		pfree(raw);
}

/*
 * Do the parts of skel in value valueid (extsize bytes stored) go into the
 * stream?  Parts stored one by one do: compressed together they take less.
 * A compression unit's parts are compressed together already, and
 * compressing them again costs about what stock's compression of the
 * document does: its value is logged as its chunks, unless most of what
 * it holds is no longer the document's (a unit whose parts later updates
 * replaced), where its parts still named take far less in the stream.
 * Counts the parts the stream would take into *nparts.
 */
static bool
value_streams(const JtSkeleton *skel, const JtPartEntry *ranges,
			  uint32 nranges, Oid valueid, uint32 extsize, uint32 *nparts)
{
	uint32		found = 0;
	uint64		named_raw = 0;
	bool		in_unit = false;

	if (skel->has_tree_entry && skel->tree_entry.valueid == valueid)
	{
		in_unit |= jt_entry_in_unit(&skel->tree_entry);
		named_raw += skel->tree_entry.rawsize;
		found++;
	}
	for (uint32 r = 0; r < nranges; r++)
	{
		if (ranges[r].valueid != valueid)
			continue;
		in_unit |= jt_entry_in_unit(&ranges[r]);
		named_raw += ranges[r].rawsize;
		found++;
	}
	/* a unit of JSON holds at least twice as many raw bytes as it stores */
	if (in_unit && named_raw > (uint64) extsize * 2)
		return false;
	*nparts += found;
	return true;
}

/*
 * Log as one stream (XLOG_JT_SHARED_STREAM) the parts pointer takes over
 * from those of all_values[] (sorted by id) value_streams() chooses,
 * setting streamed[i] for each value it takes; the caller logs the chunks
 * of the others.  False, having logged nothing, when a stream
 * would not pay.
 */
static bool
log_shared_stream(Relation rel, struct varlena *pointer,
				  const varatt_external *all_values, uint32 nall,
				  bool *streamed)
{
	JtSkeleton	skel;
	JtPartEntry *ranges;
	uint32		nranges;
	varatt_external *values;
	uint32		nvalues = 0;
	uint32		nparts = 0;
	uint64		stored_total = 0;
	uint32		method = TOAST_INVALID_COMPRESSION_ID;
	StringInfoData entries;
	JtUnitCache units;
	JtStreamValue *order;
	JtStreamHeader hdr;
	char	   *stream;
	uint32		head_len;
	uint32		stored_len;
	struct varlena *compressed;
	struct varlena *body;
	xl_jt_shared_stream xlrec;
	Relation	toastrel;

	jt_open_pointer(pointer, &skel);
	if (skel.hdr.inline_parts)
		return false;
	nranges = jt_skeleton_list_parts(&skel, &ranges);
	values = palloc(nall * sizeof(varatt_external));
	for (uint32 i = 0; i < nall; i++)
	{
		streamed[i] = value_streams(&skel, ranges, nranges,
									all_values[i].va_valueid,
									VARATT_EXTERNAL_GET_EXTSIZE(all_values[i]),
									&nparts);
		if (streamed[i])
		{
			values[nvalues++] = all_values[i];
			stored_total += VARATT_EXTERNAL_GET_EXTSIZE(all_values[i]);
		}
	}
	/* parts compressed one by one gain from a stream, a single one not */
	if (nparts < 2)
	{
		pfree(values);
		pfree(ranges);
		return false;
	}
	head_len = sizeof(JtStreamHeader) + nvalues * sizeof(JtStreamValue);

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
	{
		pfree(order);
		pfree(values);
		pfree(ranges);
		return false;
	}

	/* each shared part as the flattener asks for it (a delta's base) */
	initStringInfo(&entries);
	appendStringInfoSpaces(&entries, VARHDRSZ);
	jt_unit_cache_init(&units);
	for (uint32 v = 0; v < nvalues && entries.len <= JT_STREAM_MAX_RAW; v++)
	{
		struct varlena *value = NULL;

		for (int64 r = -1; r < (int64) nranges; r++)
		{
			JtPartEntry stored;

			if (r < 0)
			{
				/* the tree, as opening the pointer asks for it */
				if (!skel.has_tree_entry)
					continue;
				stored = skel.tree_entry;
			}
			else
				stored = jt_stored_range(&skel, &ranges[r]);
			if (stored.valueid != values[v].va_valueid)
				continue;
			if (value == NULL)
			{
				value = read_stored_value(&values[v]);
				if (VARATT_EXTERNAL_IS_COMPRESSED(values[v]) &&
					method == TOAST_INVALID_COMPRESSION_ID)
					method = VARATT_EXTERNAL_GET_COMPRESS_METHOD(values[v]);
			}
			if (method == TOAST_INVALID_COMPRESSION_ID &&
				jt_stored_compressed(&stored))
				method = stored.extinfo >> VARLENA_EXTSIZE_BITS;
			append_entry(&entries, &stored, value, skel.hdr.toastrelid,
						 &units);
			if (entries.len > JT_STREAM_MAX_RAW)
				break;
		}
		if (value != NULL)
			pfree(value);
	}
	jt_unit_cache_release(&units);
	if (entries.len > JT_STREAM_MAX_RAW)
	{
		pfree(entries.data);
		pfree(order);
		pfree(values);
		pfree(ranges);
		return false;
	}
	SET_VARSIZE(entries.data, entries.len);

	/* the header, the ids, then the entries, compressed if that pays */
	compressed = (struct varlena *) DatumGetPointer(
		toast_compress_datum(PointerGetDatum(entries.data),
							 method == TOAST_LZ4_COMPRESSION_ID ?
							 TOAST_LZ4_COMPRESSION : TOAST_PGLZ_COMPRESSION));
	body = compressed != NULL ? compressed : (struct varlena *) entries.data;
	stored_len = VARSIZE(body);
	if ((uint64) head_len + stored_len >= stored_total)
	{
		if (compressed != NULL)
			pfree(compressed);
		pfree(entries.data);
		pfree(order);
		pfree(values);
		pfree(ranges);
		return false;
	}
	stream = palloc(head_len + stored_len);
	memcpy(stream + head_len, body, stored_len);
	memcpy(hdr.magic, JT_STREAM_MAGIC, JT_STREAM_MAGIC_LEN);
	hdr.nvalues = nvalues;
	hdr.raw_len = VARSIZE(entries.data);
	hdr.stored_len = stored_len;
	memcpy(stream, &hdr, sizeof(hdr));
	memcpy(stream + sizeof(hdr), order, nvalues * sizeof(JtStreamValue));
	INIT_CRC32C(hdr.crc);
	COMP_CRC32C(hdr.crc, stream + offsetof(JtStreamHeader, nvalues),
				head_len + stored_len - offsetof(JtStreamHeader, nvalues));
	FIN_CRC32C(hdr.crc);
	memcpy(stream, &hdr, sizeof(hdr));

	toastrel = table_open(rel->rd_rel->reltoastrelid, AccessShareLock);
	xlrec.toast_locator = toastrel->rd_locator;
	table_close(toastrel, NoLock);
	xlrec.nvalues = nvalues;
	xlrec.stream_len = head_len + stored_len;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterData((char *) order, nvalues * sizeof(JtStreamValue));
	XLogRegisterData(stream, xlrec.stream_len);
	XLogSetRecordFlags(XLOG_INCLUDE_ORIGIN);
	(void) XLogInsert(JT_RMGR_ID, XLOG_JT_SHARED_STREAM);

	pfree(order);
	pfree(stream);
	if (compressed != NULL)
		pfree(compressed);
	pfree(entries.data);
	pfree(values);
	pfree(ranges);
	return true;
}

/* The TOAST values a pointer's parts lie in, each once. */
static uint32
distinct_values_of(struct varlena *pointer, Oid *toastrelid,
				   JtPartEntry **ranges)
{
	uint32		n = jt_pointer_parts(pointer, toastrelid, ranges);

	return jt_distinct_values(*ranges, n);
}

/*
 * In a logically logged table, log the chunks of the TOAST values that
 * pointer, about to be stored in rel in place of oldvalue (NULL on
 * INSERT), takes over from oldvalue.  A new value shares parts with the
 * one it replaces only, so those are exactly the values it names that the
 * statement did not write.
 */
void
jt_log_shared_values(Relation rel, struct varlena *pointer,
					 struct varlena *oldvalue)
{
	JtPartEntry *ranges;
	JtPartEntry *old_ranges;
	Oid			toastrelid;
	Oid			old_toastrelid;
	uint32		n;
	uint32		nold;
	varatt_external *values;
	uint32		nvalues = 0;

	Assert(RelationIsLogicallyLogged(rel));
	if (oldvalue == NULL || !VARATT_IS_EXTERNAL_CUSTOM(oldvalue) ||
		custom_toaster_id(oldvalue) != JSONB_TOASTER_ID)
		return;
	n = distinct_values_of(pointer, &toastrelid, &ranges);
	nold = distinct_values_of(oldvalue, &old_toastrelid, &old_ranges);
	if (toastrelid != old_toastrelid)
		return;
	values = palloc(Max(n, 1) * sizeof(varatt_external));
	for (uint32 i = 0; i < n; i++)
	{
		if (!OidIsValid(ranges[i].valueid))
			continue;			/* parts kept in the pointer */
		for (uint32 j = 0; j < nold; j++)
		{
			if (old_ranges[j].valueid == ranges[i].valueid)
			{
				jt_value_pointer(&ranges[i], toastrelid, &values[nvalues++]);
				break;
			}
		}
	}
	if (nvalues > 0)
	{
		/* distinct_values_of() sorted them by id */
		bool	   *streamed = palloc(nvalues * sizeof(bool));
		uint32		nchunks = 0;

		if (!log_shared_stream(rel, pointer, values, nvalues, streamed))
			memset(streamed, 0, nvalues * sizeof(bool));
		for (uint32 i = 0; i < nvalues; i++)
			if (!streamed[i])
				values[nchunks++] = values[i];
		log_values(rel, values, nchunks);
		pfree(streamed);
	}
	pfree(values);
	pfree(ranges);
	pfree(old_ranges);
}

static void
jt_rmgr_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	/* the chunks are in the TOAST relation already */
	if (info != XLOG_JT_VALUE_CHUNKS && info != XLOG_JT_SHARED_STREAM)
		elog(PANIC, "jsonb_toaster redo: unknown op code %u", info);
}

static void
jt_rmgr_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	xl_jt_value_chunks xlrec;

	if (info == XLOG_JT_SHARED_STREAM &&
		XLogRecGetDataLen(record) >= sizeof(xl_jt_shared_stream))
	{
		xl_jt_shared_stream st;

		memcpy(&st, XLogRecGetData(record), sizeof(st));
		appendStringInfo(buf, "rel %u/%u/%u; %u toast values; stream of %u bytes",
						 st.toast_locator.spcOid, st.toast_locator.dbOid,
						 st.toast_locator.relNumber, st.nvalues, st.stream_len);
		return;
	}
	if (info != XLOG_JT_VALUE_CHUNKS ||
		XLogRecGetDataLen(record) < sizeof(xlrec))
		return;
	memcpy(&xlrec, XLogRecGetData(record), sizeof(xlrec));
	appendStringInfo(buf, "rel %u/%u/%u; toast value %u; chunks from %d; %d bytes",
					 xlrec.toast_locator.spcOid, xlrec.toast_locator.dbOid,
					 xlrec.toast_locator.relNumber, xlrec.valueid,
					 xlrec.first_seq, xlrec.len);
}

static const char *
jt_rmgr_identify(uint8 info)
{
	if ((info & ~XLR_INFO_MASK) == XLOG_JT_VALUE_CHUNKS)
		return "VALUE_CHUNKS";
	if ((info & ~XLR_INFO_MASK) == XLOG_JT_SHARED_STREAM)
		return "SHARED_STREAM";
	return NULL;
}

/* The row type of a TOAST relation, as create_toast_table() makes it. */
static TupleDesc
toast_chunk_desc(void)
{
	static TupleDesc desc = NULL;

	if (desc == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
		TupleDesc	d = CreateTemplateTupleDesc(3);

		TupleDescInitBuiltinEntry(d, 1, "chunk_id", OIDOID, -1, 0);
		TupleDescInitBuiltinEntry(d, 2, "chunk_seq", INT4OID, -1, 0);
		/* bytea is not among the builtin entries; text is laid out alike */
		TupleDescInitBuiltinEntry(d, 3, "chunk_data", TEXTOID, -1, 0);
		TupleDescAttr(d, 2)->atttypid = BYTEAOID;
		TupleDescAttr(d, 2)->attcollation = InvalidOid;
		for (int i = 0; i < 3; i++)
		{
			TupleDescAttr(d, i)->attstorage = TYPSTORAGE_PLAIN;
#if PG_VERSION_NUM >= 180000
			populate_compact_attribute(d, i);
#endif
		}
		MemoryContextSwitchTo(old);
		desc = d;
	}
	return desc;
}

/* Queue one chunk as core's decoding queues an insert into a TOAST table. */
static void
queue_chunk(LogicalDecodingContext *ctx, XLogRecordBuffer *buf,
			const RelFileLocator *locator, Oid valueid, int32 seq,
			const char *bytes, int32 len)
{
	XLogReaderState *r = buf->record;
	struct varlena *data = palloc(len + VARHDRSZ);
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	HeapTuple	formed;
	ReorderBufferChange *change;
	HeapTuple	tuple;

	SET_VARSIZE(data, len + VARHDRSZ);
	memcpy(VARDATA(data), bytes, len);
	values[0] = ObjectIdGetDatum(valueid);
	values[1] = Int32GetDatum(seq);
	values[2] = PointerGetDatum(data);
	formed = heap_form_tuple(toast_chunk_desc(), values, nulls);

	change = ReorderBufferAllocChange(ctx->reorder);
	change->action = REORDER_BUFFER_CHANGE_INSERT;
	change->origin_id = XLogRecGetOrigin(r);
	change->data.tp.rlocator = *locator;
	tuple = ReorderBufferAllocTupleBuf(ctx->reorder,
									   formed->t_len - SizeofHeapTupleHeader);
	tuple->t_len = formed->t_len;
	ItemPointerSetInvalid(&tuple->t_self);
	tuple->t_tableOid = InvalidOid;
	memcpy(tuple->t_data, formed->t_data, formed->t_len);
	change->data.tp.newtuple = tuple;
	change->data.tp.clear_toast_afterwards = true;
	ReorderBufferQueueChange(ctx->reorder, XLogRecGetXid(r), buf->origptr,
							 change, true);
	heap_freetuple(formed);
	pfree(data);
}

/* Queue len bytes as the chunks of valueid from chunk number 0. */
static void
queue_value(LogicalDecodingContext *ctx, XLogRecordBuffer *buf,
			const RelFileLocator *locator, Oid valueid, const char *data,
			int32 len)
{
	for (int32 off = 0, seq = 0; off < len; seq++)
	{
		int32		n = Min(TOAST_MAX_CHUNK_SIZE, len - off);

		queue_chunk(ctx, buf, locator, valueid, seq, data + off, n);
		off += n;
	}
}

/*
 * Lay a stream out over the values it names, each as many bytes as it
 * stores, zeros after the stream's end.
 */
static void
decode_shared_stream(LogicalDecodingContext *ctx, XLogRecordBuffer *buf)
{
	XLogReaderState *r = buf->record;
	xl_jt_shared_stream xlrec;
	const JtStreamValue *values;
	const char *stream;
	uint64		total = 0;
	uint32		done = 0;
	Size		len = XLogRecGetDataLen(r);

	if (len < sizeof(xlrec))
		elog(ERROR, "jsonb_toaster decode: record too short");
	memcpy(&xlrec, XLogRecGetData(r), sizeof(xlrec));
	if (xlrec.nvalues == 0 ||
		(uint64) sizeof(xlrec) + (uint64) xlrec.nvalues * sizeof(JtStreamValue) +
		xlrec.stream_len != len)
		elog(ERROR, "jsonb_toaster decode: shared parts' record of %zu bytes does not hold what it says",
			 len);
	if (xlrec.toast_locator.dbOid != ctx->slot->data.database)
		return;
	if (ctx->callbacks.filter_by_origin_cb != NULL &&
		filter_by_origin_cb_wrapper(ctx, XLogRecGetOrigin(r)))
		return;

	values = (const JtStreamValue *) (XLogRecGetData(r) + sizeof(xlrec));
	stream = (const char *) (values + xlrec.nvalues);
	for (uint32 i = 0; i < xlrec.nvalues; i++)
		total += values[i].extsize;
	if (total < xlrec.stream_len)
		elog(ERROR, "jsonb_toaster decode: a stream of %u bytes laid over %llu",
			 xlrec.stream_len, (unsigned long long) total);
	for (uint32 i = 0; i < xlrec.nvalues; i++)
	{
		uint32		size = values[i].extsize;
		uint32		from_stream = Min(size, xlrec.stream_len - done);
		char	   *piece;

		if (from_stream == size)
		{
			queue_value(ctx, buf, &xlrec.toast_locator, values[i].valueid,
						stream + done, size);
		}
		else
		{
			piece = palloc0(size);
			memcpy(piece, stream + done, from_stream);
			queue_value(ctx, buf, &xlrec.toast_locator, values[i].valueid,
						piece, size);
			pfree(piece);
		}
		done += from_stream;
	}
}

/* As core decodes an insert into a TOAST relation (heap_decode()). */
static void
jt_rmgr_decode(LogicalDecodingContext *ctx, XLogRecordBuffer *buf)
{
	XLogReaderState *r = buf->record;
	TransactionId xid = XLogRecGetXid(r);
	uint8		info = XLogRecGetInfo(r) & ~XLR_INFO_MASK;
	xl_jt_value_chunks xlrec;
	const char *data;

	ReorderBufferProcessXid(ctx->reorder, xid, buf->origptr);
	if (SnapBuildCurrentState(ctx->snapshot_builder) < SNAPBUILD_FULL_SNAPSHOT)
		return;
	if (!SnapBuildProcessChange(ctx->snapshot_builder, xid, buf->origptr) ||
		ctx->fast_forward)
		return;

	if (info == XLOG_JT_SHARED_STREAM)
	{
		decode_shared_stream(ctx, buf);
		return;
	}
	if (info != XLOG_JT_VALUE_CHUNKS)
		elog(ERROR, "jsonb_toaster decode: unknown op code %u", info);
	if (XLogRecGetDataLen(r) < sizeof(xlrec))
		elog(ERROR, "jsonb_toaster decode: record too short");
	memcpy(&xlrec, XLogRecGetData(r), sizeof(xlrec));
	if (xlrec.len < 0 || XLogRecGetDataLen(r) - sizeof(xlrec) != (uint32) xlrec.len ||
		xlrec.first_seq < 0)
		elog(ERROR, "jsonb_toaster decode: record of toast value %u does not hold the %d bytes it says",
			 xlrec.valueid, xlrec.len);

	/* only the slot's database, and origins the plugin wants */
	if (xlrec.toast_locator.dbOid != ctx->slot->data.database)
		return;
	if (ctx->callbacks.filter_by_origin_cb != NULL &&
		filter_by_origin_cb_wrapper(ctx, XLogRecGetOrigin(r)))
		return;

	data = XLogRecGetData(r) + sizeof(xlrec);
	for (int32 off = 0, seq = xlrec.first_seq; off < xlrec.len; seq++)
	{
		int32		len = Min(TOAST_MAX_CHUNK_SIZE, xlrec.len - off);

		queue_chunk(ctx, buf, &xlrec.toast_locator, xlrec.valueid, seq,
					data + off, len);
		off += len;
	}
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
	head_len = sizeof(hdr) + (uint64) hdr.nvalues * sizeof(JtStreamValue);
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
		COMP_CRC32C(crc, stream + offsetof(JtStreamHeader, nvalues),
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

/* The raw content of stored range of a value the stream holds, palloc'd. */
struct varlena *
jt_shared_stream_part(const JtSharedStream *st, const JtPartEntry *range)
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
	return raw;
}
