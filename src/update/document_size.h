/*-------------------------------------------------------------------------
 *
 * document_size.h
 *	  The raw size of the document a change of one part makes
 *	  (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/update/document_size.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_DOCUMENT_SIZE_H
#define JSONB_TOASTER_DOCUMENT_SIZE_H

#include "update/part_change.h"

extern void jt_lay_out_part_root(JtSource *src, const JtNode *root,
								 JtPartLayout *layout);
extern void jt_lay_out_part(const struct varlena *part, JtPartLayout *layout);
extern void jt_check_part_entries(const struct varlena *part);
extern void jt_layout_spliced(const JtPartLayout *old, const JtSplice *splice,
							  JtPartLayout *layout);
extern bool jt_patched_document_size(struct varlena *pointer, JtSkeleton *skel,
									 const JtRef *ref, uint32 r,
									 const JtFetchedPart *old,
									 const JtPartLayout *new, uint8 new_byte,
									 const JtPartEntry *range, int32 *rawsize);
extern bool jt_tree_document_size(JtSkeleton *patched, int32 *rawsize);

#endif							/* JSONB_TOASTER_DOCUMENT_SIZE_H */
