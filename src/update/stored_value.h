/*-------------------------------------------------------------------------
 *
 * stored_value.h
 *	  The first argument of jsonb_set() and the like, as the toaster stored
 *	  it (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/update/stored_value.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_STORED_VALUE_H
#define JSONB_TOASTER_STORED_VALUE_H

#include "update/part_change.h"

/* What jsonb_set() and the like can do with their first argument. */
typedef enum StoredShape
{
	SHAPE_OTHER,				/* not stored by the toaster, or no object */
	SHAPE_SPLIT_ROOT,			/* the root object is split into parts */
	SHAPE_TREE_ROOT,			/* the root object is in the tree */
} StoredShape;

extern StoredShape jt_open_stored(struct varlena **pointer, JtSkeleton *skel,
								  JtRef *ref);
extern JtRefSite jt_root_site(const JtSkeleton *skel);
extern struct varlena *jt_change_key(struct varlena *pointer, StoredShape shape,
									 JtSkeleton *skel, JtRef *ref,
									 const char *key, uint32 keylen,
									 JtSource *vsrc, const JtNode *vnode,
									 bool create);

#endif							/* JSONB_TOASTER_STORED_VALUE_H */
