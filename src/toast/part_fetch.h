/*-------------------------------------------------------------------------
 *
 * part_fetch.h
 *	  Read a skeleton's parts from its TOAST relation.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toast/part_fetch.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_PART_FETCH_H
#define JSONB_TOASTER_PART_FETCH_H

#include "format/flatten.h"

extern struct varlena *jt_read_part(const JtPartEntry *range, Oid toastrelid);
extern struct varlena *jt_part_from_bytes(const JtPartEntry *range,
										  const char *bytes, Oid toastrelid);
extern void jt_fetch_stored_parts(void *arg, uint32 first, uint32 n,
								  const JtPartEntry *ranges, Oid toastrelid,
								  struct varlena **raws, bool *should_free);
extern void jt_fetch_stored_parts_compressed(void *arg, uint32 first,
											 uint32 n,
											 const JtPartEntry *ranges,
											 Oid toastrelid,
											 struct varlena **raws,
											 bool *should_free);
extern PGDLLIMPORT const JtPartFetcher jt_stored_parts;
extern PGDLLIMPORT const JtPartFetcher jt_stored_parts_compressed;

extern struct varlena *jt_read_part_content(const JtSkeleton *skel,
											const JtPartEntry *range,
											struct varlena **base);
extern void jt_part_decompress(const struct varlena *stored,
							   const JtPartEntry *range, Oid toastrelid,
							   struct varlena *raw);

#endif							/* JSONB_TOASTER_PART_FETCH_H */
