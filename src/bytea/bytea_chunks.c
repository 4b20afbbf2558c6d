/*-------------------------------------------------------------------------
 *
 * bytea_chunks.c
 *	  The chunks of an appendable bytea's TOAST value: read, add, delete.
 *
 * The value's chunks are rows of its table's TOAST relation, as standard
 * TOAST writes them, under one value id; unlike a standard value's, their
 * number grows with appends, and a row version reads only the runs of
 * sequence numbers its pointer names and its own tail chunk.  Every scan
 * is bounded by those numbers (chunks past them belong to later versions)
 * and skips chunks whose transaction aborted, which TOAST's snapshot does
 * not hide (see docs/appendable-bytea.md).
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
#include "catalog/catalog.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "storage/procarray.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"
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

/*
 * Locks stay until the end of the transaction, which already holds one on
 * the table: the next read of the same TOAST relation finds its lock in
 * the local lock table.
 */
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

	while ((tuple = systable_getnext_ordered(scan,
											 ForwardScanDirection)) != NULL)
	{
		if (chunk_was_written(tuple))
			break;
	}
	return tuple;
}

/*
 * The bytes of chunk tuple, which must be chunk "expected" of len bytes
 * (written by transaction xid, if that is valid).
 */
static const char *
chunk_bytes(ToastRel *t, HeapTuple tuple, Oid valueid, int32 expected,
			int64 len, TransactionId xid)
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
	if (isnull || VARATT_IS_EXTERNAL(chunk) || VARATT_IS_COMPRESSED(chunk) ||
		VARSIZE_ANY_EXHDR(chunk) != len)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("chunk %d of toast value %u in %s does not hold the %lld bytes its pointer says",
						seq, valueid, RelationGetRelationName(t->rel),
						(long long) len)));
	if (TransactionIdIsValid(xid) &&
		HeapTupleHeaderGetRawXmin(tuple->t_data) != xid)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("chunk %d of toast value %u in %s was not written by the transaction its pointer names",
						seq, valueid, RelationGetRelationName(t->rel)),
				 errdetail_internal("Written by transaction %u, the pointer names %u.",
									HeapTupleHeaderGetRawXmin(tuple->t_data),
									xid)));
	return VARDATA_ANY(chunk);
}

/*
 * Refuse a pointer whose newest write aborted.  Such a pointer can only be
 * one held past a rollback (a PL/pgSQL variable after ROLLBACK TO
 * SAVEPOINT, say): the chunks it names may be gone with VACUUM and their
 * numbers taken by a later append, and a read of them would return that
 * append's bytes where a standard TOAST pointer to a removed value fails.
 * Every earlier write it names belongs to the same transaction or to a
 * committed one, so the newest write's fate is the pointer's.  A
 * transaction too old for the commit log to know is one a row still names:
 * committed.
 */
static void
check_newest_write(const JtByteaValue *value)
{
	TransactionId xid = value->last_xid;
	bool		committed;

	if (TransactionIdIsCurrentTransactionId(xid))
		return;
	LWLockAcquire(XactTruncationLock, LW_SHARED);
	committed = TransactionIdPrecedes(xid, TransamVariables->oldestClogXid) ||
		!TransactionIdPrecedes(xid, ReadNextTransactionId()) ||
		TransactionIdDidCommit(xid);
	LWLockRelease(XactTruncationLock);
	if (!committed && !TransactionIdIsInProgress(xid))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("toast value %u was written by a transaction that rolled back",
						value->valueid),
				 errdetail("Transaction %u wrote its newest chunks.", xid)));
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
	check_newest_write(value);
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
				bytes = chunk_bytes(&t, tuple, value->valueid, run->first + c,
									JT_BYTEA_CHUNK,
									run->first + c >= value->last_first ?
									value->last_xid : InvalidTransactionId);
				memcpy(dest + (lo - offset), bytes + (lo - chunk_start),
					   hi - lo);
			}
			systable_endscan_ordered(scan);
		}
		run_start = run_end;
	}
	/* the tail chunk, always the newest write's */
	if (end > value->chunk_bytes)
	{
		int64		from = Max(offset, value->chunk_bytes);
		ScanKeyData keys[3];
		SysScanDesc scan;
		HeapTuple	tuple;
		const char *bytes;

		if (t.rel == NULL)
		{
			open_toast(value->toastrelid, AccessShareLock, &t);
			snapshot = jt_get_toast_snapshot(&toast_snapshot);
		}
		scan = begin_chunk_scan(&t, snapshot, value->valueid, value->tail_seq,
								value->tail_seq, keys);
		tuple = next_written_chunk(scan);
		if (tuple == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("missing chunk number %d for toast value %u in %s",
							value->tail_seq, value->valueid,
							RelationGetRelationName(t.rel))));
		bytes = chunk_bytes(&t, tuple, value->valueid, value->tail_seq,
							value->taillen, value->last_xid);
		memcpy(dest + (from - offset), bytes + (from - value->chunk_bytes),
			   end - from);
		systable_endscan_ordered(scan);
	}
	if (t.rel != NULL)
		close_toast(&t);
}

/* The sequence number of the chunk a scan of one value returns first. */
static bool
first_seq_of(ToastRel *t, Oid valueid, ScanDirection dir, int32 *seq)
{
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	bool		isnull = true;

	ScanKeyInit(&key, (AttrNumber) 1, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(valueid));
	scan = systable_beginscan_ordered(t->rel, t->indexes[t->valid],
									  SnapshotAny, 1, &key);
	/* index entries marked dead still hold their numbers */
	scan->iscan->ignore_killed_tuples = false;
	tuple = systable_getnext_ordered(scan, dir);
	if (tuple != NULL)
	{
		*seq = DatumGetInt32(fastgetattr(tuple, 2, RelationGetDescr(t->rel),
										 &isnull));
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("null chunk number for toast value %u in %s",
							valueid, RelationGetRelationName(t->rel))));
	}
	systable_endscan_ordered(scan);
	return tuple != NULL;
}

/*
 * The numbers an append's chunks take in value valueid: full chunks from
 * *next_full on, past every chunk the value has, dead or alive, and the
 * tail *next_tail, below every one (an aborted append's chunks, which
 * TOAST's snapshot may still show, keep their numbers to themselves).
 * false when the numbers ran out.
 */
bool
jt_bytea_free_seqs(Relation rel, Oid valueid, int32 *next_full,
				   int32 *next_tail)
{
	ToastRel	t;
	int32		highest = -1;
	int32		lowest = 0;
	bool		ok;

	open_toast(rel->rd_rel->reltoastrelid, RowExclusiveLock, &t);
	(void) first_seq_of(&t, valueid, BackwardScanDirection, &highest);
	(void) first_seq_of(&t, valueid, ForwardScanDirection, &lowest);
	close_toast(&t);
	ok = highest < PG_INT32_MAX && lowest > PG_INT32_MIN;
	*next_full = ok ? Max(highest, -1) + 1 : 0;
	*next_tail = ok ? Min(lowest, 0) - 1 : 0;
	return ok;
}

/*
 * A new value id in rel's TOAST relation, chosen as toast_save_datum()
 * does: during CLUSTER and VACUUM FULL (rd_toastoid set) also one that
 * none of the old TOAST relation's values has, live or dead, since the
 * rewrite's pointers name the old relation, which takes the new one's
 * contents.  *toastrelid: the relation the pointer names.
 */
Oid
jt_bytea_new_value(Relation rel, Oid *toastrelid)
{
	ToastRel	t;
	Oid			valueid;

	open_toast(rel->rd_rel->reltoastrelid, RowExclusiveLock, &t);
	for (;;)
	{
		ToastRel	old;
		int32		seq;
		bool		taken;

		valueid = GetNewOidWithIndex(t.rel,
									 RelationGetRelid(t.indexes[t.valid]),
									 (AttrNumber) 1);
		if (!OidIsValid(rel->rd_toastoid))
			break;
		open_toast(rel->rd_toastoid, AccessShareLock, &old);
		taken = first_seq_of(&old, valueid, ForwardScanDirection, &seq);
		close_toast(&old);
		if (!taken)
			break;
	}
	close_toast(&t);
	*toastrelid = OidIsValid(rel->rd_toastoid) ?
		rel->rd_toastoid : rel->rd_rel->reltoastrelid;
	return valueid;
}

/*
 * This toaster writes its own chunk rows (of its own size), so it does what
 * toast_save_datum() does for standard values: a value id free in the
 * TOAST relation (and, in a rewrite, in the old one), the pointer naming
 * rd_toastoid in a rewrite, the caller's heap insert options, and an entry
 * in every index that is ready.
 *
 * Chunk rows inserted with one heap_multi_insert() call (about 170 kB): a
 * page holds three, and each page's rows then take one WAL record instead
 * of three; a page a batch ends in takes a second one.
 */
#define INSERT_BATCH	(21 * JT_BYTEA_CHUNKS_PER_PAGE)

/*
 * Add to value valueid in rel's TOAST relation nfull full chunks of data,
 * numbered from first_seq, and the taillen bytes after them (if any) as
 * tail chunk tail_seq: chunk rows as toast_save_datum() writes them (its
 * heap insert options too), a batch at a time, the tail in the last batch.
 */
void
jt_bytea_write(Relation rel, Oid valueid, const char *data,
			   int32 first_seq, int32 nfull, int32 tail_seq, int32 taillen,
			   int options)
{
	ToastRel	t;
	CommandId	cid = GetCurrentCommandId(true);
	TupleTableSlot *slots[INSERT_BATCH];
	MemoryContext batch_cxt;
	MemoryContext caller = CurrentMemoryContext;
	int32		nrows = nfull + (taillen > 0 ? 1 : 0);
	int			nslots;

	Assert(nfull >= 0 && (int64) first_seq + nfull - 1 <= PG_INT32_MAX);
	Assert(taillen >= 0 && taillen < JT_BYTEA_CHUNK);
	Assert(taillen == 0 || tail_seq < 0);
	if (nrows == 0)
		return;

	/*
	 * heap_multi_insert() refuses a rewrite's HEAP_INSERT_NO_LOGICAL, which
	 * matters only in logically logged tables, where nothing is stored here
	 * (decoding could not rebuild these chunks: the tail is numbered below 0).
	 */
	if (RelationIsLogicallyLogged(rel))
		elog(ERROR, "appendable bytea chunks offered for logically logged relation \"%s\"",
			 RelationGetRelationName(rel));
	options &= ~HEAP_INSERT_NO_LOGICAL;
	open_toast(rel->rd_rel->reltoastrelid, RowExclusiveLock, &t);
	nslots = Min(nrows, INSERT_BATCH);
	for (int i = 0; i < nslots; i++)
		slots[i] = MakeSingleTupleTableSlot(RelationGetDescr(t.rel),
											&TTSOpsHeapTuple);
	/* heap_multi_insert() leaves its work in the current context */
	batch_cxt = AllocSetContextCreate(caller, "appendable bytea chunks",
									  ALLOCSET_DEFAULT_SIZES);

	for (int32 done = 0; done < nrows; done += INSERT_BATCH)
	{
		int			nbatch = Min(nrows - done, INSERT_BATCH);
		int32		seqs[INSERT_BATCH];

		CHECK_FOR_INTERRUPTS();
		MemoryContextSwitchTo(batch_cxt);
		for (int i = 0; i < nbatch; i++)
		{
			int32		row = done + i;
			bool		is_tail = row == nfull;
			int32		len = is_tail ? taillen : (int32) JT_BYTEA_CHUNK;
			Datum		values[3];
			bool		isnull[3] = {false, false, false};
			struct varlena *chunk = palloc(len + VARHDRSZ);

			seqs[i] = is_tail ? tail_seq : first_seq + row;
			SET_VARSIZE(chunk, len + VARHDRSZ);
			memcpy(VARDATA(chunk), data + (int64) row * JT_BYTEA_CHUNK, len);
			values[0] = ObjectIdGetDatum(valueid);
			values[1] = Int32GetDatum(seqs[i]);
			values[2] = PointerGetDatum(chunk);
			ExecStoreHeapTuple(heap_form_tuple(RelationGetDescr(t.rel),
											   values, isnull),
							   slots[i], true);
		}
		heap_multi_insert(t.rel, slots, nbatch, cid, options, NULL);

		/* the TOAST relation's indexes are on (chunk_id, chunk_seq) only */
		for (int i = 0; i < nbatch; i++)
		{
			Datum		values[2];
			bool		isnull[2] = {false, false};

			values[0] = ObjectIdGetDatum(valueid);
			values[1] = Int32GetDatum(seqs[i]);
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

/* Delete chunks first .. last of value valueid, those a transaction wrote. */
static void
delete_range(ToastRel *t, Snapshot snapshot, Oid valueid, int32 first,
			 int32 last, bool is_speculative)
{
	ScanKeyData keys[3];
	SysScanDesc scan;
	HeapTuple	tuple;

	scan = begin_chunk_scan(t, snapshot, valueid, first, last, keys);
	while ((tuple = next_written_chunk(scan)) != NULL)
	{
		if (is_speculative)
			heap_abort_speculative(t->rel, &tuple->t_self);
		else
			simple_heap_delete(t->rel, &tuple->t_self);
	}
	systable_endscan_ordered(scan);
}

/*
 * Delete the chunks value names (and only those) from rel's TOAST
 * relation: its full chunks unless only_tail, and its tail chunk.
 */
void
jt_bytea_delete_chunks(Relation rel, const JtByteaValue *value,
					   bool only_tail, bool is_speculative)
{
	ToastRel	t;
	Snapshot	snapshot;

#if PG_VERSION_NUM < 180000
	SnapshotData toast_snapshot;
#endif

	open_toast(value->toastrelid, RowExclusiveLock, &t);
	snapshot = jt_get_toast_snapshot(&toast_snapshot);
	for (int i = 0; i < value->nruns && !only_tail; i++)
		delete_range(&t, snapshot, value->valueid, value->runs[i].first,
					 value->runs[i].first + value->runs[i].count - 1,
					 is_speculative);
	if (value->taillen > 0)
		delete_range(&t, snapshot, value->valueid, value->tail_seq,
					 value->tail_seq, is_speculative);
	close_toast(&t);
}
