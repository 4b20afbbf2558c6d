/*-------------------------------------------------------------------------
 *
 * pointer_open.h
 *	  Open a stored pointer of ours, reading its tree where it lies outside
 *	  the row.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toast/pointer_open.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_POINTER_OPEN_H
#define JSONB_TOASTER_POINTER_OPEN_H

#include "format/flatten.h"
#include "format/pointer.h"

extern struct varlena *jt_open_pointer(struct varlena *attr,
									   JtSkeleton *skel);
extern struct varlena *jt_open_pointer_from(struct varlena *attr,
											JtSkeleton *skel,
											const JtPartFetcher *fetcher);
extern bool jt_pointer_opened_before(const struct varlena *attr);
extern void jt_opened_as_written(struct varlena *attr, const char *tree,
								 bool as_stored);

#endif							/* JSONB_TOASTER_POINTER_OPEN_H */
