/*-------------------------------------------------------------------------
 *
 * value_delete.c
 *	  Deleting a TOAST value while reading one part of it (patched servers
 *	  only).
 *
 * A pointer whose tree lies outside the row names its parts through that
 * tree, which lies in a TOAST value with parts of its own.  Deleting the
 * row's value means reading the tree to learn the other values, then
 * deleting every value: the tree's value is scanned twice.  Here its
 * chunks are deleted as toast_delete_datum() deletes them, and the tree's
 * bytes taken from them on the way: one scan.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toast/value_delete.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/toast_internals.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "varatt.h"

#include "support/compat.h"
#include "toast/part_fetch.h"
#include "toast/toast_iterator.h"
#include "toast/value_delete.h"

/*
 * Delete TOAST value range->valueid of TOAST relation toastrelid, every
 * chunk of it as toast_delete_datum() does, and return the raw content of
 * the part range describes (one stored on its own, not in a compression
 * unit), read from the chunks holding it as they go.  Each of those chunks
 * is checked as a read checks the chunks it reads (its number, size and
 * data); the others are deleted unread, as core deletes a value.
 */
struct varlena *
jt_delete_value_reading(Oid toastrelid, const JtPartEntry *range,
						bool is_speculative)
{
	int32		extsize = jt_entry_extsize(range);
	int32		offset = (int32) jt_entry_stored_offset(range);
	int32		value_size = (int32) range->value_size;
	int32		nchunks = value_size > 0 ?
		(value_size - 1) / TOAST_MAX_CHUNK_SIZE + 1 : 0;
	int32		first = offset / TOAST_MAX_CHUNK_SIZE;
	int32		last = extsize > 0 ?
		(offset + extsize - 1) / TOAST_MAX_CHUNK_SIZE : first - 1;
	int32		expected = first;
	char	   *stored = palloc(Max(extsize, 1));
	Relation	toastrel;
	Relation   *toastidxs;
	int			num_indexes;
	int			valid_index;
	SnapshotData toast_snapshot pg_attribute_unused();	/* before 18 */
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	struct varlena *raw;

	if (jt_entry_in_unit(range))
		elog(ERROR, "a part of a compression unit cannot be read as its value is deleted");
	jt_check_stored_entry(range);
	toastrel = table_open(toastrelid, RowExclusiveLock);
	valid_index = toast_open_indexes(toastrel, RowExclusiveLock, &toastidxs,
									 &num_indexes);
	ScanKeyInit(&key, (AttrNumber) 1, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(range->valueid));
	scan = systable_beginscan_ordered(toastrel, toastidxs[valid_index],
									  jt_get_toast_snapshot(&toast_snapshot),
									  1, &key);
	while ((tuple = systable_getnext_ordered(scan, ForwardScanDirection)) != NULL)
	{
		bool		isnull;
		int32		seq = DatumGetInt32(fastgetattr(tuple, 2,
													RelationGetDescr(toastrel),
													&isnull));

		/*
		 * A chunk without a number lies in no range a read asks for (nulls
		 * sort last): deleted unread, as core deletes it.
		 */
		if (!isnull && seq >= first && seq <= last)
		{
			const char *data;
			int32		len;
			int64		chunk_start = (int64) seq * TOAST_MAX_CHUNK_SIZE;
			int64		from;
			int64		to;

			/* checked as a read of the part checks it */
			jt_toast_chunk_data(toastrel, tuple, range->valueid, expected,
								nchunks, value_size, &data, &len);
			from = Max(chunk_start, offset);
			to = Min(chunk_start + len, (int64) offset + extsize);
			if (from < to)
				memcpy(stored + (from - offset), data + (from - chunk_start),
					   to - from);
			expected++;
		}
		if (is_speculative)
			heap_abort_speculative(toastrel, &tuple->t_self);
		else
			simple_heap_delete(toastrel, &tuple->t_self);
	}
	systable_endscan_ordered(scan);
	if (expected <= last)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("missing chunk number %d for toast value %u in %s",
						expected, range->valueid,
						RelationGetRelationName(toastrel))));
	/* the locks stay until the end of the transaction, as core's */
	toast_close_indexes(toastidxs, num_indexes, NoLock);
	table_close(toastrel, NoLock);

	raw = jt_part_from_bytes(range, stored, toastrelid, NULL);
	pfree(stored);
	return raw;
}
