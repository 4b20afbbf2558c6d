/*-------------------------------------------------------------------------
 *
 * bytea_chunks.c
 *	  The chunks of an appendable bytea's TOAST value: read, add, delete.
 *
 * The value's chunks are rows of its table's TOAST relation, as standard
 * TOAST writes them, under one value id; unlike a standard value's, their
 * number grows with appends, and a row version reads only the runs of
 * sequence numbers its pointer names.  Every scan is bounded by those
 * numbers (chunks past them belong to later versions) and skips chunks
 * whose transaction aborted, which TOAST's snapshot does not hide (see
 * docs/appendable-bytea.md).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/bytea/bytea_chunks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/toast_internals.h"
#include "access/transam.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"

#include "bytea/bytea_chunks.h"
#include "support/compat.h"

/* A TOAST relation opened with its indexes. */
typedef struct ToastRel
{
	Relation	rel;
	Relation   *indexes;
	int			nindexes;
	int			valid;
} ToastRel;

static void
open_toast(Oid toastrelid, LOCKMODE lockmode, ToastRel *t)
{
	t->rel = table_open(toastrelid, lockmode);
	/* a damaged pointer may name any relation */
	if (t->rel->rd_rel->relkind != RELKIND_TOASTVALUE)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("TOAST pointer names relation \"%s\", which is not a TOAST relation",
						RelationGetRelationName(t->rel))));
	t->valid = toast_open_indexes(t->rel, lockmode, &t->indexes,
								  &t->nindexes);
}

/* Locks stay until the end of the transaction, as core's TOAST code keeps them. */
static void
close_toast(ToastRel *t)
{
	toast_close_indexes(t->indexes, t->nindexes, NoLock);
	table_close(t->rel, NoLock);
}

/* Scan chunks first .. last of value valueid, in order. */
static SysScanDesc
begin_chunk_scan(ToastRel *t, Snapshot snapshot, Oid valueid, int32 first,
				 int32 last, ScanKeyData *keys)
{
	ScanKeyInit(&keys[0], (AttrNumber) 1, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(valueid));
	ScanKeyInit(&keys[1], (AttrNumber) 2, BTGreaterEqualStrategyNumber,
				F_INT4GE, Int32GetDatum(first));
	ScanKeyInit(&keys[2], (AttrNumber) 2, BTLessEqualStrategyNumber,
				F_INT4LE, Int32GetDatum(last));
	return systable_beginscan_ordered(t->rel, t->indexes[t->valid], snapshot,
									  3, keys);
}

/*
 * Did chunk tuple's inserting transaction commit (or is it still running,
 * or ours)?  TOAST's snapshot also shows chunks of an aborted transaction
 * until their rows are hinted, and a standby never sees that hint unless a
 * page image brings it; a value's chunks may share their numbers with
 * such chunks (an append numbers its chunks past those it finds, and
 * VACUUM removes aborted ones), so every read skips them.
 */
static bool
chunk_was_written(HeapTuple tuple)
{
	HeapTupleHeader header = tuple->t_data;
	TransactionId xmin;

	if (HeapTupleHeaderXminCommitted(header))
		return true;
	if (HeapTupleHeaderXminInvalid(header))
		return false;
	xmin = HeapTupleHeaderGetRawXmin(header);
	return TransactionIdIsCurrentTransactionId(xmin) ||
		TransactionIdIsInProgress(xmin) ||
		TransactionIdDidCommit(xmin);
}

/* The next chunk tuple of scan that a transaction wrote, or NULL. */
static HeapTuple
next_written_chunk(SysScanDesc scan)
{
	HeapTuple	tuple;

	while ((tuple = systable_getnext_ordered(scan, ForwardScanDirection)) != NULL)
	{
		if (chunk_was_written(tuple))
			break;
	}
	return tuple;
}

/* The bytes of chunk tuple, which must be chunk "expected" and full. */
static const char *
chunk_bytes(ToastRel *t, HeapTuple tuple, Oid valueid, int32 expected)
{
	TupleDesc	desc = RelationGetDescr(t->rel);
	bool		isnull;
	int32		seq;
	Pointer		chunk;

	seq = DatumGetInt32(fastgetattr(tuple, 2, desc, &isnull));
	if (isnull || seq != expected)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("unexpected chunk number %d (expected %d) for toast value %u in %s",
						isnull ? -1 : seq, expected, valueid,
						RelationGetRelationName(t->rel))));
	chunk = DatumGetPointer(fastgetattr(tuple, 3, desc, &isnull));
	if (isnull || VARATT_IS_EXTENDED(chunk) ||
		VARSIZE(chunk) - VARHDRSZ != JT_BYTEA_CHUNK)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("chunk %d of toast value %u in %s is not a full chunk",
						seq, valueid, RelationGetRelationName(t->rel))));
	return VARDATA(chunk);
}

/*
 * Copy bytes offset .. offset + length - 1 of value into dest, reading
 * only the chunks that hold them.
 */
void
jt_bytea_read(const JtByteaValue *value, int64 offset, int64 length,
			  char *dest)
{
	ToastRel	t = {0};
	Snapshot	snapshot = NULL;
	int64		end = offset + length;
	int64		run_start = 0;

#if PG_VERSION_NUM < 180000
	SnapshotData toast_snapshot;
#endif

	Assert(offset >= 0 && length >= 0 && end <= value->size);
	for (int i = 0; i < value->nruns && run_start < end; i++)
	{
		const JtByteaRun *run = &value->runs[i];
		int64		run_end = run_start + run->count * JT_BYTEA_CHUNK;
		int64		from = Max(offset, run_start);
		int64		to = Min(end, run_end);
		int32		first;
		int32		last;
		ScanKeyData keys[3];
		SysScanDesc scan;
		HeapTuple	tuple;

		if (from < to)
		{
			first = (int32) ((from - run_start) / JT_BYTEA_CHUNK);
			last = (int32) ((to - 1 - run_start) / JT_BYTEA_CHUNK);
			if (t.rel == NULL)
			{
				open_toast(value->toastrelid, AccessShareLock, &t);
				snapshot = jt_get_toast_snapshot(&toast_snapshot);
			}
			scan = begin_chunk_scan(&t, snapshot, value->valueid,
									run->first + first, run->first + last,
									keys);
			for (int32 c = first; c <= last; c++)
			{
				int64		chunk_start = run_start +
					c * JT_BYTEA_CHUNK;
				int64		lo = Max(from, chunk_start);
				int64		hi = Min(to, chunk_start + JT_BYTEA_CHUNK);
				const char *bytes;

				CHECK_FOR_INTERRUPTS();
				tuple = next_written_chunk(scan);
				if (tuple == NULL)
					ereport(ERROR,
							(errcode(ERRCODE_DATA_CORRUPTED),
							 errmsg("missing chunk number %d for toast value %u in %s",
									run->first + c, value->valueid,
									RelationGetRelationName(t.rel))));
				bytes = chunk_bytes(&t, tuple, value->valueid, run->first + c);
				if (run->first + c >= value->last_first &&
					HeapTupleHeaderGetRawXmin(tuple->t_data) != value->last_xid)
					ereport(ERROR,
							(errcode(ERRCODE_DATA_CORRUPTED),
							 errmsg("chunk %d of toast value %u in %s was not written by the transaction its pointer names",
									run->first + c, value->valueid,
									RelationGetRelationName(t.rel)),
							 errdetail_internal("Written by transaction %u, the pointer names %u.",
												HeapTupleHeaderGetRawXmin(tuple->t_data),
												value->last_xid)));
				memcpy(dest + (lo - offset), bytes + (lo - chunk_start),
					   hi - lo);
			}
			systable_endscan_ordered(scan);
		}
		run_start = run_end;
	}
	if (t.rel != NULL)
		close_toast(&t);

	/* the tail, from the pointer */
	if (end > value->chunk_bytes)
	{
		int64		from = Max(offset, value->chunk_bytes);

		memcpy(dest + (from - offset),
			   value->tail + (from - value->chunk_bytes), end - from);
	}
}

/*
 * The first sequence number after every chunk value valueid has in rel's
 * TOAST relation, dead or alive: an append's chunks must not take the
 * number of an aborted append's, which TOAST's snapshot may still show.
 */
int32
jt_bytea_next_free_seq(Relation rel, Oid valueid)
{
	ToastRel	t;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	int32		next = 0;

	open_toast(rel->rd_rel->reltoastrelid, RowExclusiveLock, &t);
	ScanKeyInit(&key, (AttrNumber) 1, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(valueid));
	scan = systable_beginscan_ordered(t.rel, t.indexes[t.valid], SnapshotAny,
									  1, &key);
	/* index entries marked dead still hold their numbers */
	scan->iscan->ignore_killed_tuples = false;
	tuple = systable_getnext_ordered(scan, BackwardScanDirection);
	if (tuple != NULL)
	{
		bool		isnull;
		int32		seq;

		seq = DatumGetInt32(fastgetattr(tuple, 2, RelationGetDescr(t.rel),
										&isnull));
		if (isnull || seq == PG_INT32_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("invalid chunk number for toast value %u in %s",
							valueid, RelationGetRelationName(t.rel))));
		next = seq + 1;
	}
	systable_endscan_ordered(scan);
	close_toast(&t);
	return next;
}

/*
 * Chunks inserted with one heap_multi_insert() call: a page holds four, and
 * each page's chunks then take one WAL record instead of four.
 */
#define INSERT_BATCH	32

/*
 * Add nchunks full chunks of data to value valueid in rel's TOAST
 * relation, numbered from first_seq, as toast_save_datum() writes chunks
 * but a batch at a time.
 */
void
jt_bytea_insert_chunks(Relation rel, Oid valueid, int32 first_seq,
					   const char *data, int32 nchunks)
{
	ToastRel	t;
	CommandId	cid = GetCurrentCommandId(true);
	TupleTableSlot *slots[INSERT_BATCH];
	MemoryContext batch_cxt;
	MemoryContext caller = CurrentMemoryContext;
	int			nslots;

	Assert(nchunks > 0 && (int64) first_seq + nchunks - 1 <= PG_INT32_MAX);
	open_toast(rel->rd_rel->reltoastrelid, RowExclusiveLock, &t);
	nslots = Min(nchunks, INSERT_BATCH);
	for (int i = 0; i < nslots; i++)
		slots[i] = MakeSingleTupleTableSlot(RelationGetDescr(t.rel),
											&TTSOpsHeapTuple);
	/* heap_multi_insert() leaves its work in the current context */
	batch_cxt = AllocSetContextCreate(caller, "appendable bytea chunks",
									  ALLOCSET_DEFAULT_SIZES);

	for (int32 done = 0; done < nchunks; done += INSERT_BATCH)
	{
		int			n = Min(nchunks - done, INSERT_BATCH);

		CHECK_FOR_INTERRUPTS();
		MemoryContextSwitchTo(batch_cxt);
		for (int i = 0; i < n; i++)
		{
			Datum		values[3];
			bool		isnull[3] = {false, false, false};
			struct varlena *chunk = palloc(JT_BYTEA_CHUNK + VARHDRSZ);

			SET_VARSIZE(chunk, JT_BYTEA_CHUNK + VARHDRSZ);
			memcpy(VARDATA(chunk), data + (done + i) * JT_BYTEA_CHUNK,
				   JT_BYTEA_CHUNK);
			values[0] = ObjectIdGetDatum(valueid);
			values[1] = Int32GetDatum(first_seq + done + i);
			values[2] = PointerGetDatum(chunk);
			ExecStoreHeapTuple(heap_form_tuple(RelationGetDescr(t.rel),
											   values, isnull),
							   slots[i], true);
		}
		heap_multi_insert(t.rel, slots, n, cid, 0, NULL);

		/* the TOAST relation's indexes are on (chunk_id, chunk_seq) only */
		for (int i = 0; i < n; i++)
		{
			Datum		values[2];
			bool		isnull[2] = {false, false};

			values[0] = ObjectIdGetDatum(valueid);
			values[1] = Int32GetDatum(first_seq + done + i);
			for (int j = 0; j < t.nindexes; j++)
			{
				if (t.indexes[j]->rd_index->indisready)
					index_insert(t.indexes[j], values, isnull,
								 &slots[i]->tts_tid, t.rel,
								 t.indexes[j]->rd_index->indisunique ?
								 UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
								 false, NULL);
			}
			ExecClearTuple(slots[i]);
		}
		MemoryContextSwitchTo(caller);
		MemoryContextReset(batch_cxt);
	}
	MemoryContextDelete(batch_cxt);
	for (int i = 0; i < nslots; i++)
		ExecDropSingleTupleTableSlot(slots[i]);
	close_toast(&t);
}

/* Delete the chunks value names (and only those) from rel's TOAST relation. */
void
jt_bytea_delete_chunks(Relation rel, const JtByteaValue *value,
					   bool is_speculative)
{
	ToastRel	t;
	Snapshot	snapshot;

#if PG_VERSION_NUM < 180000
	SnapshotData toast_snapshot;
#endif

	open_toast(value->toastrelid, RowExclusiveLock, &t);
	snapshot = jt_get_toast_snapshot(&toast_snapshot);
	for (int i = 0; i < value->nruns; i++)
	{
		const JtByteaRun *run = &value->runs[i];
		ScanKeyData keys[3];
		SysScanDesc scan;
		HeapTuple	tuple;

		scan = begin_chunk_scan(&t, snapshot, value->valueid, run->first,
								run->first + run->count - 1, keys);
		while ((tuple = next_written_chunk(scan)) != NULL)
		{
			if (is_speculative)
				heap_abort_speculative(t.rel, &tuple->t_self);
			else
				simple_heap_delete(t.rel, &tuple->t_self);
		}
		systable_endscan_ordered(scan);
	}
	close_toast(&t);
}
