/*-------------------------------------------------------------------------
 *
 * tree_change.h
 *	  Keys set, added or removed in a root object kept in the skeleton's
 *	  tree, or in an object of the tree below it (patched servers only).
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

/*
 * An object of a skeleton's tree, below its root object: the value at
 * keys[0], then in it at keys[1], ..., each an object of the tree.
 */
typedef struct JtTreeSteps
{
	int			n;
	const char *const *keys;
	const uint32 *keylens;
} JtTreeSteps;

/*
 * set or remove n keys in the root object kept in a skeleton's tree, or in
 * the object of the tree at (NULL: the root)
 */
extern struct varlena *jt_apply_tree_patch(struct varlena *pointer,
										   JtSkeleton *skel,
										   const JtTreeSteps *at, uint32 n,
										   const char *const *keys,
										   const uint32 *keylens,
										   JtSource *vsrc,
										   const JtNode *vnodes, bool create);

#endif							/* JSONB_TOASTER_TREE_CHANGE_H */
