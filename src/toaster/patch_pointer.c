/*-------------------------------------------------------------------------
 *
 * patch_pointer.c
 *	  The pointers jsonb_set() and the like return in place of a document
 *	  (patched servers only): the stored skeleton with one part changed,
 *	  kept as a delta of the stored part or carried whole, or with its tree
 *	  changed.  jt_adopt() stores them.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/patch_pointer.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"


#include "format/delta.h"
#include "format/pointer.h"
#include "format/skeleton_build.h"
#include "toaster/patch_pointer.h"
#include "toaster/settings.h"
#include "toaster/tree_outside.h"

/*
 * The delta area of a patch that keeps the changed part's old stored part
 * as the base of a delta: the patch's own deltas (the other parts') and
 * the new one, as a datum (4-byte header).  NULL when the edit is too large
 * for a delta or the area for room.
 */
static struct varlena *
keep_as_delta(const JtPatch *patch, const char *deltas, uint32 deltas_len,
			  int64 room)
{
	StringInfoData literal;
	StringInfoData area;
	uint32		first;
	uint32		removed;

	initStringInfo(&literal);
	if (!jt_delta_make(patch->base, patch->base_entries, patch->part,
					   patch->part_entries, patch->same_head, patch->same_tail,
					   JT_DELTA_BUDGET((uint32) jt_range_size), &literal,
					   &first, &removed))
		return NULL;
	initStringInfo(&area);
	appendStringInfoSpaces(&area, VARHDRSZ);

	/*
	 * The new record first: an UPDATE that keeps the row on its page logs the
	 * new tuple from the first byte that differs to the last, and the records
	 * after the new one are the old tuple's tail.
	 */
	jt_delta_append(&area, jt_pointer_version(patch->old_pointer),
					&patch->base_range, first, removed, literal.data,
					literal.len);
	appendBinaryStringInfo(&area, deltas, deltas_len);
	if (area.len - VARHDRSZ > room)
		return NULL;
	SET_VARSIZE(area.data, area.len);
	return (struct varlena *) area.data;
}

/*
 * The pointer of a patch whose changed part is described by a record of
 * the delta area given (area_len bytes) against the part the old value
 * stores for it: the patched tree with the part's entry pointed at that
 * base, whose TOAST bytes, as the other parts', stay the old value's.
 */
static struct varlena *
pointer_at_base(const JtPatch *patch, const char *area, uint32 area_len,
				int32 rawsize)
{
	JtSkeletonInfo hdr;
	JtPartEntry range;
	char	   *payload;
	uint32		version = jt_pointer_version(patch->old_pointer);

	jt_payload_read_info(patch->payload, &hdr);
	payload = palloc(JT_PAYLOAD_TREE_OFFSET + hdr.tree_size);
	memcpy(payload, patch->payload, JT_PAYLOAD_TREE_OFFSET + hdr.tree_size);
	jt_entry_read(payload + patch->range_offset, version, &range);
	jt_entry_set_location(&range, &patch->base_range);
	jt_entry_write(payload + patch->range_offset, version, &range);
	return jt_pointer_over(patch->old_pointer, &hdr,
						   payload + JT_PAYLOAD_TREE_OFFSET, area, area_len,
						   rawsize);
}

/*
 * A pointer to payload (header, tree, delta area): the skeleton
 * of old_pointer with its tree changed in place, flattening to rawsize
 * bytes.  NULL if it does not fit the row's budget.  The tree may have
 * dropped parts that take dropped_stored bytes: jt_adopt() and jt_delete()
 * list what the new pointer keeps.
 */
struct varlena *
jt_tree_patch_pointer(const char *payload, uint32 payload_len,
					  const struct varlena *old_pointer, int32 rawsize,
					  uint64 dropped_stored)
{
	JtSkeletonInfo hdr;
	struct varlena *result;

	jt_payload_read_info(payload, &hdr);
	if (!jt_patch_may_be_taken(jt_payload_budget_bytes(payload, payload_len) -
							   JT_PAYLOAD_TREE_OFFSET, 0, 0))
		return NULL;
	result = jt_pointer_over_fewer(old_pointer, &hdr,
								   payload + JT_PAYLOAD_TREE_OFFSET,
								   payload + JT_PAYLOAD_TREE_OFFSET + hdr.tree_size,
								   payload_len - JT_PAYLOAD_TREE_OFFSET - hdr.tree_size,
								   rawsize, dropped_stored);
	return result;
}

/*
 * Has a changed part outgrown its range?  It may grow up to the largest
 * range the general path cuts, or the largest container it keeps whole,
 * or to the largest part of its reference, if more: the builder enlarges
 * the ranges of a document whose directory would not fit the row, and an
 * element appended to the last of such parts (often the smallest) need not
 * send the document to the general path.  No part grows past the largest,
 * so the bound never rises.
 */
static bool
part_outgrown(uint32 part_size, uint32 largest_sibling)
{
	uint64		largest_cut = JT_RANGE_MAX(jt_range_size);

	largest_cut = Max(largest_cut,
					  jt_whole_container_size((uint32) jt_format_version));
	return part_size > Max((uint64) largest_sibling, largest_cut + VARHDRSZ);
}

/*
 * Could a patch be returned as a pointer (jt_patch_pointer(),
 * jt_tree_patch_pointer())?  skeleton_size is the patched tree's and delta
 * area's, part_size the changed part's raw size (0 when only the tree
 * changed) and largest_sibling the largest raw size of its reference's
 * parts, as stored.  update/ ask so as to keep copies of the
 * other parts only for the general path that follows a refusal: a wrong
 * guess costs time, never correctness.
 */
bool
jt_patch_may_be_taken(uint32 skeleton_size, uint32 part_size,
					  uint32 largest_sibling)
{
	if (skeleton_size > (uint32) Max(jt_inline_budget, 0))
		return false;
	return part_size == 0 || !part_outgrown(part_size, largest_sibling);
}

/* The bytes of the tree of a patch (hdr its header) the row's budget counts. */
static uint32
tree_budget_bytes(const JtPatch *patch, const JtSkeletonInfo *hdr)
{
	return jt_tree_budget_bytes(patch->payload + JT_PAYLOAD_TREE_OFFSET,
								hdr->tree_size);
}

/*
 * The pointer of a patch whose changed part is kept as a delta of what the
 * old value stores for it (patch->base), for a document of rawsize bytes:
 * NULL when the edit is too large for a delta or the skeleton and its
 * delta area would take more than target bytes.
 */
static struct varlena *
patch_as_delta(const JtPatch *patch, int32 rawsize, int32 target)
{
	JtSkeletonInfo hdr;
	struct varlena *delta;

	jt_payload_read_info(patch->payload, &hdr);
	/* parts carried whole are written when adopted: they take no room */
	delta = keep_as_delta(patch,
						  patch->payload + JT_PAYLOAD_TREE_OFFSET + hdr.tree_size,
						  patch->payload_len - JT_PAYLOAD_TREE_OFFSET - hdr.tree_size,
						  (int64) target - tree_budget_bytes(patch, &hdr) +
						  patch->carried_len);
	if (delta == NULL)
		return NULL;
	return pointer_at_base(patch, VARDATA(delta), VARSIZE(delta) - VARHDRSZ,
						   rawsize);
}

/*
 * The pointer of a patch whose changed part changed too much to be kept as
 * a delta: the new part goes whole into the delta area, as a replacement
 * record of the old (delta.h), for jt_adopt() to write.  NULL when the
 * pointer jt_adopt() would store, the skeleton and the other parts'
 * deltas, would take more than target bytes.
 */
static struct varlena *
patch_as_replacement(const JtPatch *patch, int32 rawsize, int32 target)
{
	JtSkeletonInfo hdr;
	uint32		deltas_len;
	StringInfoData area;

	jt_payload_read_info(patch->payload, &hdr);
	deltas_len = patch->payload_len - JT_PAYLOAD_TREE_OFFSET - hdr.tree_size;
	if ((int64) tree_budget_bytes(patch, &hdr) + deltas_len -
		patch->carried_len > target)
		return NULL;

	initStringInfo(&area);
	appendBinaryStringInfo(&area,
						   patch->payload + JT_PAYLOAD_TREE_OFFSET + hdr.tree_size,
						   deltas_len);
	jt_delta_append(&area, jt_pointer_version(patch->old_pointer),
					&patch->base_range, 0,
					patch->base_range.header & JT_CONTAINER_COUNT_MASK,
					VARDATA(patch->part), VARSIZE(patch->part) - VARHDRSZ);
	/* until jt_adopt() writes the part, the old one stays referred to */
	return pointer_at_base(patch, area.data, area.len, rawsize);
}

/*
 * The pointer jsonb_set() and the like return in place of the document
 * when their patch changed one part, of a document of rawsize bytes: what
 * jt_adopt() stores in the row without flattening anything.  The changed
 * part is kept as a delta, or else carried whole for jt_adopt() to write.
 * NULL when the part has outgrown its range or the pointer would not fit
 * the row (whose budget is not known here: jsonb_toaster.inline_budget
 * stands for it); the document then goes to the general path, which
 * shares the other parts with the old value.  *whole tells which.
 */
struct varlena *
jt_patch_pointer(const JtPatch *patch, int32 rawsize, bool *whole)
{
	JtPartEntry oldrange;
	struct varlena *result;

	*whole = false;
	if (patch->part == NULL || patch->base == NULL)
		return NULL;
	jt_entry_read(jt_pointer_payload(patch->old_pointer, NULL) +
				  patch->range_offset, jt_pointer_version(patch->old_pointer),
				  &oldrange);
	if (part_outgrown(VARSIZE(patch->part),
					  Max((uint32) oldrange.rawsize, patch->largest_sibling)))
		return NULL;
	result = patch_as_delta(patch, rawsize, Max(jt_inline_budget, 0));
	if (result != NULL)
		return result;
	result = patch_as_replacement(patch, rawsize, Max(jt_inline_budget, 0));
	*whole = result != NULL;
	return result;
}
