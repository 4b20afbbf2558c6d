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

#include "decode/decoder.h"
#include "format/flatten.h"

/*
 * The compression unit decoded last, kept for the parts of it a flatten
 * asks for next (reference by reference, in document order); one at a
 * time, so that a document is never held decoded twice.
 */
typedef struct JtUnitCache
{
	MemoryContext cxt;			/* where its buffers live */
	Oid			toastrelid;
	Oid			valueid;
	uint32		stored_offset;
	uint32		extinfo;
	uint32		decoded;		/* raw bytes decoded; 0: holds nothing */
	char	   *raw;
	uint32		raw_cap;
	JtDecodeMethod method;
	bool		checked;		/* decoded by a strict decoder */
	const char *stream;			/* else the stored stream, to decode again */
	void	   *stream_alloc;	/* the allocation holding it, the cache's */
} JtUnitCache;

extern void jt_unit_cache_init(JtUnitCache *cache);
extern void jt_unit_cache_release(JtUnitCache *cache);
extern void jt_check_stored_entry(const JtPartEntry *range);
extern struct varlena *jt_read_part(const JtPartEntry *range, Oid toastrelid);
extern struct varlena *jt_part_from_bytes(const JtPartEntry *range,
										  const char *bytes, Oid toastrelid,
										  JtUnitCache *cache);
extern const char *jt_part_stored_bytes(const JtPartEntry *range,
										struct varlena *value);
extern struct varlena *jt_part_from_value(const JtPartEntry *range,
										  struct varlena *value,
										  Oid toastrelid, JtUnitCache *cache,
										  bool *should_free);
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
