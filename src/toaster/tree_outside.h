/*-------------------------------------------------------------------------
 *
 * tree_outside.h
 *	  Where the toaster puts a tree that may leave the row (format
 *	  version 7).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/tree_outside.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_TREE_OUTSIDE_H
#define JSONB_TOASTER_TREE_OUTSIDE_H

#include "utils/relcache.h"

#include "format/format.h"
#include "toaster/part_write.h"

extern bool jt_tree_must_leave_row(const char *tree, uint32 tree_size);
extern bool jt_tree_may_leave_row(const char *tree, uint32 tree_size);
extern uint32 jt_tree_budget_bytes(const char *tree, uint32 tree_size);
extern uint32 jt_payload_budget_bytes(const char *payload,
									  uint32 payload_len);
extern uint32 jt_tree_add_part(JtPartWriter *writer, const char *tree,
							   uint32 tree_size);
extern struct varlena *jt_tree_part_pointer(const JtSkeletonInfo *hdr,
											const JtPartWriter *writer,
											uint32 tree_part,
											const char *tree,
											const char *deltas,
											uint32 deltas_len,
											int32 rawsize,
											uint64 stored_outside,
											uint8 version);
extern struct varlena *jt_tree_edited_pointer(Relation rel,
											  struct varlena *pointer,
											  struct varlena *oldvalue,
											  int32 target);

#endif							/* JSONB_TOASTER_TREE_OUTSIDE_H */
