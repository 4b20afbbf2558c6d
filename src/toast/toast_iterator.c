/*-------------------------------------------------------------------------
 *
 * toast_iterator.c
 *	  Read an external TOAST value chunk by chunk, only as far as needed.
 *
 * Core's de-TOASTing fetches every chunk of a value before anything can
 * look at it.  This iterator hands out the chunks one at a time, in order,
 * through an ordered scan of the TOAST relation's (chunk_id, chunk_seq)
 * index, so a reader that finds what it wants in the first chunks never
 * touches the others.  It reads with the TOAST snapshot, as core does.
 *
 * The chunks of a large value are read in batches of doubling size (chunk
 * 0, then 1-2, then 3-6, ...), each an index scan bounded on chunk_seq: a
 * btree scan reads every matching entry of a leaf page at once, so an
 * unbounded scan would cost, for the first chunk of a large value, time
 * proportional to the value's chunk count.  A value of a few chunks is read
 * with one unbounded scan, which costs less than the bounds do.
 *
 * The value's layout is known from its TOAST pointer: chunk i holds bytes
 * [i * TOAST_MAX_CHUNK_SIZE, ...) of the stored stream, and every chunk
 * but the last is full.  A chunk that is missing, out of order, of the
 * wrong size, or one too many raises ERRCODE_DATA_CORRUPTED naming the
 * value and the TOAST relation.  Like heap_fetch_toast_slice(), the size
 * check assumes the heap's chunk size.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toast/toast_iterator.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/toast_internals.h"
#include "utils/fmgroids.h"

#include "support/compat.h"
#include "toast/toast_iterator.h"

/*
 * Values of up to this many chunks are read with one unbounded scan.  Found
 * by timing the first chunk of 2-, 12- and 115-chunk values both ways:
 * bounds cost about 7% at 2 chunks, nothing measurable at 12, and save 40%
 * at 115.
 */
#define UNBOUNDED_SCAN_CHUNKS	16

/*
 * Start the index scan of the chunks from next_chunk on, the next batch.
 * The last batch of a window that ends with its value has no upper bound,
 * so that an extra chunk shows.
 */
static void
begin_batch(JtToastIterator *it)
{
	int32		first = it->next_chunk;
	int32		done = first - it->first_chunk;
	int			nkeys = 1;

	ScanKeyInit(&it->keys[0], (AttrNumber) 1, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(it->valueid));
	if (it->total_chunks <= UNBOUNDED_SCAN_CHUNKS && it->first_chunk == 0 &&
		it->last_chunk == it->total_chunks - 1)
		it->batch_end = it->total_chunks - 1;
	else if (it->last_chunk - it->first_chunk < UNBOUNDED_SCAN_CHUNKS)
	{
		/* a window of a few chunks: all of them at once */
		it->batch_end = it->last_chunk;
		ScanKeyInit(&it->keys[1], (AttrNumber) 2, BTGreaterEqualStrategyNumber,
					F_INT4GE, Int32GetDatum(first));
		ScanKeyInit(&it->keys[2], (AttrNumber) 2, BTLessEqualStrategyNumber,
					F_INT4LE, Int32GetDatum(it->batch_end));
		nkeys = it->batch_end == it->total_chunks - 1 ? 2 : 3;
	}
	else
	{
		it->batch_end = (int32) Min((int64) first + Max(done, 1) - 1,
									(int64) it->last_chunk);
		ScanKeyInit(&it->keys[1], (AttrNumber) 2, BTGreaterEqualStrategyNumber,
					F_INT4GE, Int32GetDatum(first));
		ScanKeyInit(&it->keys[2], (AttrNumber) 2, BTLessEqualStrategyNumber,
					F_INT4LE, Int32GetDatum(it->batch_end));
		nkeys = it->batch_end == it->total_chunks - 1 ? 2 : 3;
	}
	it->scan = systable_beginscan_ordered(it->toastrel,
										  it->toastidxs[it->valid_index],
										  it->snapshot, nkeys, it->keys);
}

void
jt_toast_iterator_begin(JtToastIterator *it, Oid toastrelid, Oid valueid,
						int32 stored_size)
{
	jt_toast_iterator_begin_window(it, toastrelid, valueid, stored_size, 0,
								   stored_size);
}

/*
 * Read bytes start .. start + length - 1 of a TOAST value of stored_size
 * bytes: only the chunks holding them, each checked as part of the whole
 * value.
 */
void
jt_toast_iterator_begin_window(JtToastIterator *it, Oid toastrelid,
							   Oid valueid, int32 stored_size, int32 start,
							   int32 length)
{
	Assert(start >= 0 && length >= 0 &&
		   (int64) start + length <= stored_size);
	memset(it, 0, sizeof(JtToastIterator));
	it->valueid = valueid;
	it->stored_size = stored_size;
	it->total_chunks = stored_size > 0 ?
		((stored_size - 1) / TOAST_MAX_CHUNK_SIZE) + 1 : 0;
	it->window_start = start;
	it->window_end = start + length;
	it->first_chunk = start / TOAST_MAX_CHUNK_SIZE;
	it->last_chunk = length > 0 ?
		(start + length - 1) / TOAST_MAX_CHUNK_SIZE : it->first_chunk - 1;
	it->next_chunk = it->first_chunk;

	it->toastrel = table_open(toastrelid, AccessShareLock);
	it->valid_index = toast_open_indexes(it->toastrel, AccessShareLock,
										 &it->toastidxs, &it->num_indexes);
	it->snapshot = jt_get_toast_snapshot(&it->toast_snapshot);
	begin_batch(it);
}

/*
 * The bytes of a chunk of TOAST value valueid, stored in stored_size bytes
 * over nchunks chunks: tuple must be chunk number "expected", complete, of
 * the size that number implies.  Checked as heap_fetch_toast_slice()
 * checks chunks, with an ERROR naming the value and the TOAST relation.
 * Shared with part_fetch.c.
 */
void
jt_toast_chunk_data(Relation toastrel, HeapTuple tuple, Oid valueid,
					int32 expected, int32 nchunks, int32 stored_size,
					const char **data, int32 *len)
{
	TupleDesc	tupdesc = RelationGetDescr(toastrel);
	int32		seq;
	Pointer		chunk;
	bool		isnull;
	int32		expected_size;

	seq = DatumGetInt32(fastgetattr(tuple, 2, tupdesc, &isnull));
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("null chunk number for toast value %u in %s",
						valueid, RelationGetRelationName(toastrel))));
	if (seq != expected)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("unexpected chunk number %d (expected %d) for toast value %u in %s",
						seq, expected, valueid,
						RelationGetRelationName(toastrel))));
	if (seq >= nchunks)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("unexpected chunk number %d (out of range 0..%d) for toast value %u in %s",
						seq, nchunks - 1, valueid,
						RelationGetRelationName(toastrel))));

	chunk = DatumGetPointer(fastgetattr(tuple, 3, tupdesc, &isnull));
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("null data in chunk %d for toast value %u in %s",
						seq, valueid, RelationGetRelationName(toastrel))));
	if (!VARATT_IS_EXTENDED(chunk))
	{
		*data = VARDATA(chunk);
		*len = VARSIZE(chunk) - VARHDRSZ;
	}
	else if (VARATT_IS_SHORT(chunk))
	{
		/* heap_form_tuple may have given a small last chunk a short header */
		*data = VARDATA_SHORT(chunk);
		*len = VARSIZE_SHORT(chunk) - VARHDRSZ_SHORT;
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("chunk %d of toast value %u in %s is itself compressed or external",
						seq, valueid, RelationGetRelationName(toastrel))));

	expected_size = seq < nchunks - 1 ? TOAST_MAX_CHUNK_SIZE :
		stored_size - (nchunks - 1) * TOAST_MAX_CHUNK_SIZE;
	if (*len != expected_size)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("unexpected chunk size %d (expected %d) in chunk %d of %d for toast value %u in %s",
						*len, expected_size, seq, nchunks,
						valueid, RelationGetRelationName(toastrel))));
}

/*
 * Return the next chunk's bytes (valid until the next call) and true, or
 * false once every chunk has been read.
 */
bool
jt_toast_iterator_next(JtToastIterator *it, const char **data, int32 *len)
{
	HeapTuple	tuple;

	/* a window that ends before its value does: no extra chunk to see */
	if (it->next_chunk > it->last_chunk &&
		it->last_chunk < it->total_chunks - 1)
		return false;
	tuple = systable_getnext_ordered(it->scan, ForwardScanDirection);
	if (tuple == NULL && it->next_chunk > it->batch_end &&
		it->next_chunk <= it->last_chunk)
	{
		/* this batch is complete: go on with the next one */
		systable_endscan_ordered(it->scan);
		begin_batch(it);
		tuple = systable_getnext_ordered(it->scan, ForwardScanDirection);
	}
	if (tuple == NULL)
	{
		if (it->next_chunk <= it->last_chunk)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("missing chunk number %d for toast value %u in %s",
							it->next_chunk, it->valueid,
							RelationGetRelationName(it->toastrel))));
		return false;
	}

	jt_toast_chunk_data(it->toastrel, tuple, it->valueid, it->next_chunk,
						it->total_chunks, it->stored_size, data, len);
	/* only the window's bytes */
	{
		int32		chunk_start = it->next_chunk * TOAST_MAX_CHUNK_SIZE;
		int32		from = Max(it->window_start - chunk_start, 0);
		int32		to = Min(it->window_end - chunk_start, *len);

		*data += from;
		*len = to - from;
	}
	it->next_chunk++;
	return true;
}

void
jt_toast_iterator_end(JtToastIterator *it)
{
	if (it->toastrel == NULL)
		return;
	systable_endscan_ordered(it->scan);

	/*
	 * Keep the locks until the end of the transaction, which already holds
	 * one on the table that owns these rows: the next value read from the
	 * same TOAST relation then finds its lock in the local lock table instead
	 * of taking and releasing it again.
	 */
	toast_close_indexes(it->toastidxs, it->num_indexes, NoLock);
	table_close(it->toastrel, NoLock);
	it->toastrel = NULL;
}
