/*-------------------------------------------------------------------------
 *
 * tree_change.h
 *	  Keys set, added or removed in a root object kept in the skeleton's
 *	  tree (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/update/tree_change.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_TREE_CHANGE_H
#define JSONB_TOASTER_TREE_CHANGE_H

#include "update/part_change.h"

/* set or remove n keys in the root object kept in a skeleton's tree */
extern struct varlena *jt_apply_tree_patch(struct varlena *pointer,
										   JtSkeleton *skel, uint32 n,
										   const char *const *keys,
										   const uint32 *keylens,
										   JtSource *vsrc,
										   const JtNode *vnodes, bool create);

#endif							/* JSONB_TOASTER_TREE_CHANGE_H */
