/*-------------------------------------------------------------------------
 *
 * toaster.h
 *	  The jsonb toaster (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_TOASTER_H
#define JSONB_TOASTER_TOASTER_H

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
#define JSONB_TOASTER_NAME			"jsonb_toaster"

#define JT_DEFAULT_INLINE_BUDGET	2000
#define JT_DEFAULT_RANGE_SIZE		2048

#ifdef JT_CUSTOM_TOAST
#include "access/detoast.h"

#include "skeleton.h"

extern void jt_toaster_init(void);
extern void jt_parse_pointer(struct varlena *attr, JtSkeleton *skel);
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

/* The toaster id of a custom TOAST pointer. */
static inline int
custom_toaster_id(struct varlena *attr)
{
	varatt_custom header;

	VARATT_CUSTOM_GET_HEADER(header, attr);
	return header.va_toasterid;
}
#endif

#endif							/* JSONB_TOASTER_TOASTER_H */
