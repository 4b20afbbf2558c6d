/*-------------------------------------------------------------------------
 *
 * flatten.h
 *	  A skeleton (format.h) flattened back into its jsonb document, its
 *	  parts coming in through a fetcher.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/format/flatten.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_FLATTEN_H
#define JSONB_TOASTER_FLATTEN_H

#include "format/skeleton.h"

/*
 * Where a flattener gets the raw content of parts: fetch gives those of one
 * reference, numbered first to first + n - 1 in document order, with
 * directory entries ranges[0..n-1].  raws[i] gets an uncompressed jsonb
 * datum with a 4-byte header, or, if the fetcher has a decompress
 * function, the part as stored, in PostgreSQL's in-memory compressed form
 * (pglz or lz4), which the flattener has decompress into a buffer of the
 * part's raw size where and when it needs it; should_free[i] says whether
 * the flattener may pfree raws[i] when done with it.  The format module
 * reads no part itself: TOAST I/O, or parts held in memory, come in here.
 */
typedef struct JtPartFetcher
{
	void		(*fetch) (void *arg, uint32 first, uint32 n,
						  const JtPartEntry *ranges, Oid toastrelid,
						  struct varlena **raws, bool *should_free);
	void		(*decompress) (const struct varlena *stored,
							   const JtPartEntry *range, Oid toastrelid,
							   struct varlena *raw);
	void	   *arg;
} JtPartFetcher;

extern struct varlena *jt_skeleton_flatten(JtSkeleton *skel,
										   const JtPartFetcher *fetcher);
extern struct varlena *jt_skeleton_flatten_node(JtSkeleton *skel,
												const JtNode *node,
												const JtPartFetcher *fetcher);
extern bool jt_tree_container_is_plain(JtSkeleton *skel, const JtNode *node);

#endif							/* JSONB_TOASTER_FLATTEN_H */
