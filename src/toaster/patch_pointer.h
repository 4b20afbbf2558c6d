/*-------------------------------------------------------------------------
 *
 * patch_pointer.h
 *	  The pointers jsonb_set() and the like return in place of a document (patched
 *	  servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/patch_pointer.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_PATCH_POINTER_H
#define JSONB_TOASTER_PATCH_POINTER_H

#include "format/skeleton.h"

/*
 * What jsonb_set() and the like (update/) hand the toaster to make the
 * pointer they return: a document made from a stored value by changing
 * one part: the stored
 * value's skeleton with that part's directory entry rewritten, and the new
 * part; the entry's value id is invalid until the toaster stores it (or
 * keeps the old part as the base of a delta).  Or made by changing the
 * skeleton's tree alone: no part.
 */
typedef struct JtPatch
{
	const char *payload;		/* header, tree, delta area */
	uint32		payload_len;
	uint32		range_offset;	/* the changed part's entry, in the payload */
	const struct varlena *part; /* its new content, a jsonb datum; or NULL */
	const struct varlena *base; /* what the old value stores for it */
	JtPartEntry base_range;		/* and that stored part's entry */
	const struct varlena *old_pointer;	/* the value it was made from */
	/* the entries of base's and part's roots, when at hand; or NULL */
	const JtNode *base_entries;
	const JtNode *part_entries;
	/* pairs known to be the same at the start and the end of both */
	uint32		same_head;
	uint32		same_tail;
	/* bytes of the delta area that carry parts whole, to be written */
	uint32		carried_len;
	/* the raw size of the largest part of the changed part's reference */
	uint32		largest_sibling;
} JtPatch;

extern struct varlena *jt_patch_pointer(const JtPatch *patch,
										int32 rawsize, bool *whole);
extern bool jt_patch_may_be_taken(uint32 skeleton_size, uint32 part_size,
								  uint32 largest_sibling);
extern struct varlena *jt_tree_patch_pointer(const char *payload,
											 uint32 payload_len,
											 const struct varlena *old_pointer,
											 int32 rawsize,
											 uint64 dropped_stored);

#endif							/* JSONB_TOASTER_PATCH_POINTER_H */
