/*-------------------------------------------------------------------------
 *
 * skeleton.h
 *	  Reading a skeleton (format.h): parsing it, its references, the sizes
 *	  of its values flattened, and its references in document order.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/format/skeleton.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_SKELETON_H
#define JSONB_TOASTER_SKELETON_H

#include "nodes/pg_list.h"

#include "format/format.h"
#include "format/part.h"

/* Called for each reference of a skeleton; path is a List of key strings. */
typedef void (*JtRefVisitor) (void *arg, const JtRef *ref, List *path);


extern void jt_skeleton_parse(JtSkeleton *skel, const char *payload,
							  uint32 payload_len, uint32 version);
extern void jt_skeleton_attach_tree(JtSkeleton *skel, char *tree,
									uint32 len);
extern void jt_skeleton_read_ref(JtSkeleton *skel, const JtNode *node,
								 JtRef *ref);
extern uint32 jt_ref_range_for_key(const JtRef *ref, const char *key,
								   uint32 keylen);
extern bool jt_ref_flat_size(const JtRef *ref, uint64 *size);
extern bool jt_skeleton_flat_size(JtSkeleton *skel, uint64 *size);
extern void jt_skeleton_walk(JtSkeleton *skel, JtRefVisitor visit,
							 void *arg);
extern void jt_skeleton_walk_below(JtSkeleton *skel, const JtNode *node,
								   JtRefVisitor visit, void *arg);
extern uint32 jt_skeleton_list_parts(JtSkeleton *skel, JtPartEntry **ranges);
extern int	jt_entry_value_cmp(const void *a, const void *b);
extern int	jt_entry_location_cmp(const void *a, const void *b);
extern const char *jt_skeleton_inline_part_bytes(const JtSkeleton *skel,
												 const JtPartEntry *range,
												 uint32 *len);
extern struct varlena *jt_skeleton_inline_part(const JtSkeleton *skel,
											   const JtPartEntry *range);
extern void jt_skeleton_release(JtSkeleton *skel);
extern uint32 jt_distinct_values(JtPartEntry *ranges, uint32 n);
extern uint32 jt_tree_directories_over(const char *tree, uint32 tree_size,
									   uint32 max_ranges, uint64 *bytes);

#endif							/* JSONB_TOASTER_SKELETON_H */
