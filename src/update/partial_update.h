/*-------------------------------------------------------------------------
 *
 * partial_update.h
 *	  jsonb_set(), #-, - and || on a stored document, run on the one part
 *	  they change (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/update/partial_update.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_PARTIAL_UPDATE_H
#define JSONB_TOASTER_PARTIAL_UPDATE_H

#include "fmgr.h"

#include "format/skeleton.h"

/*
 * A document made from a stored value by changing one part: the stored
 * value's skeleton with that part's directory entry rewritten, and the new
 * part; the entry's value id is invalid until the toaster stores it (or
 * keeps the old part as the base of a delta).  Or made by changing the
 * skeleton's tree alone: no part.
 */
typedef struct JtPatch
{
	const char *payload;		/* JtSkeletonHeader, tree, delta area */
	uint32		payload_len;
	uint32		range_offset;	/* the changed JtRefRange, in the payload */
	const struct varlena *part; /* its new content, a jsonb datum; or NULL */
	const struct varlena *base; /* what the old value stores for it */
	JtRefRange	base_range;		/* and that stored part's entry */
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

/* same arguments, results and errors as the builtins of the same name */
extern Datum jt_jsonb_set(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_delete_path(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_insert(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_delete(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_concat(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_delete_array(PG_FUNCTION_ARGS);

extern const JtPatch *jt_patch_for(const struct varlena *value,
								   const struct varlena *oldvalue);

#endif							/* JSONB_TOASTER_PARTIAL_UPDATE_H */
