/*-------------------------------------------------------------------------
 *
 * toaster.h
 *	  The jsonb toaster (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/toaster.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_TOASTER_H
#define JSONB_TOASTER_TOASTER_H

#include "access/detoast.h"

#include "format/skeleton.h"

extern void jt_toaster_init(void);
struct JtPatch;
extern struct varlena *jt_patch_pointer(const struct JtPatch *patch,
										int32 rawsize, bool *whole);
extern bool jt_patch_may_be_taken(uint32 skeleton_size, uint32 part_size,
								  uint32 largest_sibling);
extern struct varlena *jt_tree_patch_pointer(const char *payload,
											 uint32 payload_len,
											 const struct varlena *old_pointer,
											 int32 rawsize,
											 uint64 dropped_stored,
											 bool same_parts);

#endif							/* JSONB_TOASTER_TOASTER_H */
