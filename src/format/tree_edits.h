/*-------------------------------------------------------------------------
 *
 * tree_edits.h
 *	  Edits of a tree that lies outside the row, kept in the row.
 *
 * A pointer whose tree lies outside the row (format version 7) may name
 * the tree part of the row version it replaced and keep in the row what
 * changed in that tree: an UPDATE that keeps its change as a delta
 * (jsonb_set() of one value) changes a directory entry or two, and so need
 * not write the tree again nor keep all of it in the row.  The edits
 * follow the tree part's entry, when JtSkeletonHeader.nparts has
 * JT_SKELETON_TREE_EDITED:
 *
 *		uint32				bytes of edits that follow
 *		JtTreeEdit, bytes	an edit: the tree's bytes offset .. offset +
 *							length - 1 become the length bytes after it
 *
 * Edits are sorted by offset, do not overlap (jt_tree_edits_make() leaves
 * a gap of at least an edit's header between two), and lie in the tree.  They
 * apply to the tree as read, its entries naming the value holding it
 * already given that value's id and size (format.h).  All unaligned.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/format/tree_edits.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_TREE_EDITS_H
#define JSONB_TOASTER_TREE_EDITS_H

#include "lib/stringinfo.h"

#include "format/format.h"

typedef struct JtTreeEdit
{
	uint32		offset;			/* in the tree */
	uint32		length;			/* bytes that follow */
} JtTreeEdit;

extern void jt_tree_edits_check(JtSource *src, const char *edits,
								uint32 len, uint32 tree_size);
extern void jt_tree_edits_apply(const char *edits, uint32 len, char *tree);
extern bool jt_tree_edits_make(const char *old_tree, const char *new_tree,
							   uint32 tree_size, const char *old_edits,
							   uint32 old_len, uint32 max_len,
							   StringInfo edits);

#endif							/* JSONB_TOASTER_TREE_EDITS_H */
