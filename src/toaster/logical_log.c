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

#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "replication/decode.h"
#include "replication/logical.h"
#include "replication/reorderbuffer.h"
#include "replication/snapbuild.h"
#include "storage/relfilelocator.h"
#include "utils/memutils.h"
#include "utils/rel.h"


#include "format/pointer.h"
#include "format/skeleton.h"
#include "toast/toast_iterator.h"
#include "toaster/logical_log.h"
#include "toaster/shared_stream.h"
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
 * The parts a value shares as one stream (shared_stream.c), to be laid
 * over the values it names (JtStreamValue) by decoding.
 */
#define XLOG_JT_SHARED_STREAM	0x20

typedef struct xl_jt_shared_stream
{
	RelFileLocator toast_locator;
	uint32		nvalues;
	uint32		stream_len;
	/* nvalues JtStreamValue, then the stream */
} xl_jt_shared_stream;

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

/*
 * Log as one stream (shared_stream.c) the parts pointer takes over from
 * the values of values[] the stream takes, setting streamed[i] for those;
 * the caller logs the chunks of the others.
 */
static void
log_shared_stream(Relation rel, struct varlena *pointer,
				  const varatt_external *values, uint32 nvalues,
				  bool *streamed)
{
	JtStreamValue *order;
	uint32		norder;
	uint32		len;
	char	   *stream;
	xl_jt_shared_stream xlrec;
	Relation	toastrel;

	stream = jt_shared_stream_build(pointer, values, nvalues, streamed,
									&order, &norder, &len);
	if (stream == NULL)
		return;
	toastrel = table_open(rel->rd_rel->reltoastrelid, AccessShareLock);
	xlrec.toast_locator = toastrel->rd_locator;
	table_close(toastrel, NoLock);
	xlrec.nvalues = norder;
	xlrec.stream_len = len;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogRegisterData((char *) order, norder * sizeof(JtStreamValue));
	XLogRegisterData(stream, len);
	XLogSetRecordFlags(XLOG_INCLUDE_ORIGIN);
	(void) XLogInsert(JT_RMGR_ID, XLOG_JT_SHARED_STREAM);
	pfree(order);
	pfree(stream);
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

		log_shared_stream(rel, pointer, values, nvalues, streamed);
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
		uint64		stream_at;
		const char *compression = NULL;

		memcpy(&st, XLogRecGetData(record), sizeof(st));
		stream_at = sizeof(st) + (uint64) st.nvalues * sizeof(JtStreamValue);
		if (stream_at + st.stream_len <= XLogRecGetDataLen(record))
			compression = jt_shared_stream_compression(XLogRecGetData(record) +
													   stream_at,
													   st.stream_len);
		appendStringInfo(buf, "rel %u/%u/%u; %u toast values; stream of %u bytes, %s",
						 st.toast_locator.spcOid, st.toast_locator.dbOid,
						 st.toast_locator.relNumber, st.nvalues, st.stream_len,
						 compression ? compression : "unreadable");
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

/*
 * Does this slot decode a record about locator's relation: of its database,
 * from an origin the plugin wants?
 */
static bool
slot_wants(LogicalDecodingContext *ctx, XLogReaderState *r,
		   const RelFileLocator *locator)
{
	if (locator->dbOid != ctx->slot->data.database)
		return false;
	return ctx->callbacks.filter_by_origin_cb == NULL ||
		!filter_by_origin_cb_wrapper(ctx, XLogRecGetOrigin(r));
}

/* Queue len bytes as the chunks of valueid from chunk number first_seq. */
static void
queue_chunks(LogicalDecodingContext *ctx, XLogRecordBuffer *buf,
			 const RelFileLocator *locator, Oid valueid, int32 first_seq,
			 const char *data, int32 len)
{
	for (int32 off = 0, seq = first_seq; off < len; seq++)
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
	if (!slot_wants(ctx, r, &xlrec.toast_locator))
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
			queue_chunks(ctx, buf, &xlrec.toast_locator, values[i].valueid,
						 0, stream + done, size);
		}
		else
		{
			piece = palloc0(size);
			memcpy(piece, stream + done, from_stream);
			queue_chunks(ctx, buf, &xlrec.toast_locator, values[i].valueid,
						 0, piece, size);
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

	if (!slot_wants(ctx, r, &xlrec.toast_locator))
		return;

	data = XLogRecGetData(r) + sizeof(xlrec);
	queue_chunks(ctx, buf, &xlrec.toast_locator, xlrec.valueid,
				 xlrec.first_seq, data, xlrec.len);
}
