/*-------------------------------------------------------------------------
 *
 * pointer.h
 *	  The jsonb toaster's custom TOAST pointers (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/format/pointer.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_POINTER_H
#define JSONB_TOASTER_POINTER_H

#include "access/detoast.h"
#include "access/toast_custom.h"

#include "format/skeleton.h"
#include "support/custom_pointer.h"

/*
 * The toaster's id in every pointer it writes.  Core's toast_custom.h gives
 * the rule: ids 1 to 127 are assigned to extensions on the PostgreSQL wiki
 * (page "CustomToasters"), 128 to 254 are reserved for PostgreSQL, 255 is for
 * development.  We use 1, the first assigned id, because values stored since
 * the first release name it: it must never change, since pg_upgrade copies
 * heap files as they are.  It is to be recorded on that page when the core
 * series is proposed upstream; until then nothing prevents another toaster
 * from taking it, and the two could not be loaded together.
 */
#define JSONB_TOASTER_ID			1

/* Is attr one of our pointers? */
static inline bool
jt_is_pointer(struct varlena *attr)
{
	return VARATT_IS_EXTERNAL_CUSTOM(attr) &&
		custom_toaster_id(attr) == JSONB_TOASTER_ID;
}

extern void jt_parse_pointer(struct varlena *attr, JtSkeleton *skel);
extern const char *jt_pointer_payload(const struct varlena *pointer,
									  uint32 *len);
extern Oid	jt_pointer_toastrelid(const struct varlena *pointer);
extern uint32 jt_pointer_version(const struct varlena *pointer);
extern bool jt_pointer_tree_outside(const struct varlena *pointer);
extern struct varlena *jt_make_pointer(const JtSkeletonInfo *hdr,
									   const char *tree, const char *deltas,
									   uint32 deltas_len, int32 rawsize,
									   uint64 stored_outside, uint8 version);
extern struct varlena *jt_make_pointer_folded(const JtSkeletonInfo *hdr,
											  const struct varlena *datum,
											  int32 rawsize);
extern struct varlena *jt_make_pointer_tree_outside(const JtSkeletonInfo *hdr,
													const JtPartEntry *tree_entry,
													const char *edits,
													uint32 edits_len,
													const char *deltas,
													uint32 deltas_len,
													int32 rawsize,
													uint64 stored_outside,
													uint8 at_least);
extern struct varlena *jt_pointer_with_tree(const struct varlena *stored_pointer,
											const JtSkeleton *skel);
extern uint8 jt_patched_version(const struct varlena *old);
extern struct varlena *jt_pointer_over_fewer(const struct varlena *old_pointer,
											 const JtSkeletonInfo *hdr,
											 const char *tree,
											 const char *deltas,
											 uint32 deltas_len, int32 rawsize,
											 uint64 dropped_stored);
extern struct varlena *jt_pointer_over(const struct varlena *old_pointer,
									   const JtSkeletonInfo *hdr,
									   const char *tree, const char *deltas,
									   uint32 deltas_len, int32 rawsize);

#endif							/* JSONB_TOASTER_POINTER_H */
