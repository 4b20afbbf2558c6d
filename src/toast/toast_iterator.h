/*-------------------------------------------------------------------------
 *
 * toast_iterator.h
 *	  Read an external TOAST value chunk by chunk, only as far as needed.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toast/toast_iterator.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_TOAST_ITERATOR_H
#define JSONB_TOASTER_TOAST_ITERATOR_H

#include "access/genam.h"
#include "access/htup.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

typedef struct JtToastIterator
{
	Relation	toastrel;
	Relation   *toastidxs;
	int			num_indexes;
	int			valid_index;
	Snapshot	snapshot;
	SysScanDesc scan;
	ScanKeyData keys[3];		/* chunk_id, lowest and highest chunk_seq */
	Oid			valueid;
	int32		stored_size;	/* bytes in all chunks together */
	int32		total_chunks;
	int32		window_start;	/* the bytes read: [start, end) */
	int32		window_end;
	int32		first_chunk;	/* the chunks holding them */
	int32		last_chunk;
	int32		next_chunk;		/* sequence number expected next */
	int32		batch_end;		/* last chunk_seq the current scan returns */
#if PG_VERSION_NUM < 180000
	SnapshotData toast_snapshot;
#endif
} JtToastIterator;

extern void jt_toast_iterator_begin(JtToastIterator *it, Oid toastrelid,
									Oid valueid, int32 stored_size);
extern void jt_toast_iterator_begin_window(JtToastIterator *it,
										   Oid toastrelid, Oid valueid,
										   int32 stored_size, int32 start,
										   int32 length);
extern bool jt_toast_iterator_next(JtToastIterator *it, const char **data,
								   int32 *len);
extern void jt_toast_iterator_end(JtToastIterator *it);
extern void jt_toast_chunk_data(Relation toastrel, HeapTuple tuple,
								Oid valueid, int32 expected, int32 nchunks,
								int32 stored_size, const char **data,
								int32 *len);

#endif							/* JSONB_TOASTER_TOAST_ITERATOR_H */
