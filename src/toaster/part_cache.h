/*-------------------------------------------------------------------------
 *
 * part_cache.h
 *	  The parts of the skeleton flattened last, kept until the end of the
 *	  transaction (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/part_cache.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_PART_CACHE_H
#define JSONB_TOASTER_PART_CACHE_H

#include "format/skeleton.h"

extern struct varlena *jt_flatten_pointer(struct varlena *attr);
extern struct varlena *jt_flatten_changed(struct varlena *pointer,
										  JtSkeleton *skel, uint32 partno,
										  struct varlena *raw, bool keep);
extern uint64 jt_part_cache_holds(struct varlena *attr);
extern const struct varlena *jt_part_cache_lookup(uint64 token,
												  const JtPartEntry *range);

#endif							/* JSONB_TOASTER_PART_CACHE_H */
